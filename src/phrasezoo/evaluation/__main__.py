"""``python -m phrasezoo.evaluation evaluate|report ...``."""

import sys

from .commands import main

sys.exit(main())

"""``python -m phrasezoo.match join|link ...``."""

import sys

from .commands import main

sys.exit(main())

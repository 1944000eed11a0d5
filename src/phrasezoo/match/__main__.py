"""``python -m phrasezoo.match join|link|dedupe ...``."""

import sys

from .commands import main

sys.exit(main())

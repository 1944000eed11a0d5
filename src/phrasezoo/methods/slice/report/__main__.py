"""``python -m phrasezoo.methods.slice.report``: SLICE's Table 1 and the max-words sweep (see the package)."""

import sys

from phrasezoo.methods.slice.report import main

sys.exit(main())

"""``python -m phrasezoo.methods.uctopic.topic_mining mine --model ... --corpus embedded``: see :mod:`.commands`."""

import sys

from phrasezoo.applications.commands import main

sys.exit(main())

"""``python -m phrasezoo.applications.pntm pntm --model ...``: the ``phrasezoo topics pntm`` command on its own."""

import sys

from .commands import main

sys.exit(main(["topics", *sys.argv[1:]]))

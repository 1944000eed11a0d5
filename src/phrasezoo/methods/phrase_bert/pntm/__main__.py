"""``python -m phrasezoo.methods.phrase_bert.pntm pntm --model ...``: the ``phrasezoo topics pntm`` command on its own."""

import sys

from phrasezoo.applications.commands import main

sys.exit(main(["topics", "pntm", *sys.argv[1:]]) if sys.argv[1:2] != ["pntm"] else main())

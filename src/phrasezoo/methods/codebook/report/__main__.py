"""``python -m phrasezoo.methods.codebook.report``: the codebook section of the docs (see the package)."""

from phrasezoo.methods.codebook.report import main

main()

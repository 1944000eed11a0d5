"""``python -m phrasezoo.gpu_job pack|table|call|run|unpack``: the GPU job without an install."""

import sys

from phrasezoo.gpu_job.commands import main

if __name__ == "__main__":
    sys.exit(main())

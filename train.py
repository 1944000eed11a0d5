"""Training entry point: ``accelerate launch train.py hub_configs/<name>.yaml`` (CPU, one GPU or many).

Plain ``python train.py hub_configs/pearl-mini.yaml`` works too (one process). See ``--help``.
"""

from phrasezoo.train import main

if __name__ == "__main__":
    main()

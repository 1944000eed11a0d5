"""Training entry point: ``accelerate launch --multi_gpu --num_processes 2 --num_machines 1 --mixed_precision no
--dynamo_backend no train.py pearl-mini`` (several processes or GPUs; a wheel install, which has no train.py:
``accelerate launch ... -m phrasezoo.cli train pearl-mini``).

Plain ``python train.py pearl-mini`` works too (one process). See ``--help``.
"""

from phrasezoo.train import main

if __name__ == "__main__":
    main()

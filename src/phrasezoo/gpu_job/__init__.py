"""The GPU job: ``phrasezoo device pack|table|call|run|unpack`` (also ``python -m phrasezoo.gpu_job ...``, which
needs no install: the GPU machine runs it from the source tree with ``PYTHONPATH=src``).

A GPU is lent to this project now and then, for minutes, with no network, no data caches and no data builders, and
at most 64 MiB may travel to it. So a recipe's run is split in three:

1. ``pack`` (here): the recipe's real initial weights (fp16), tokenizer and training task into ``.devicepack/<name>/``
   (:mod:`phrasezoo.gpu_job.pack`), checked against the size limits and, by default, trained for three steps on
   this CPU from the pack alone with the data libraries made unimportable (the self-test). It prints the one
   ``run`` tool call that trains it on the GPU (:mod:`phrasezoo.gpu_job.calls`).
2. ``run`` (there): the project's training loop on the pack, for the recipe's steps; fp16 weight shards, the loss
   log and a run manifest come back (:mod:`phrasezoo.gpu_job.on_device`).
3. ``unpack`` (here): the shards back into a checkpoint of ``outputs/<name>/``, then what a CPU run does next: export,
   dev selection, and, only where the recipe's ``eval.beat_on_dev`` rule holds (its dev score above the CPU recipe's),
   evaluation, the card and the results. A checkpoint that does not beat it is kept aside
   (``outputs/<name>.rejected/``) and never replaces a released one. The card says where the model was trained
   (:mod:`phrasezoo.gpu_job.unpack`).

The whole procedure, the lease plan and the prepared calls: docs/gpu-job.md.
"""

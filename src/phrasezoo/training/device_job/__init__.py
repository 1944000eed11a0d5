"""The GPU job's training side: pack a recipe's run (:mod:`.pack`), train it where a GPU is lent (:mod:`.run`), with
the task's state as JSON and arrays (:mod:`.codec`) and the weights as fp16 shards (:mod:`.weights`). The command
and the unpacking (export, dev selection, evaluation, card) are in :mod:`phrasezoo.device`; see docs/gpu-job.md."""

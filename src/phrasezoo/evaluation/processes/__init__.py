"""The main job's evaluation processes: a workflow step in a process of its own (:mod:`.background`), the baselines
measured beside training (:mod:`.baselines`) and the exported model evaluated in two processes (:mod:`.parallel`).

They run the benchmark suite (:mod:`phrasezoo.evaluation.harness`); only the main job (:mod:`phrasezoo.pipeline`)
starts them.
"""

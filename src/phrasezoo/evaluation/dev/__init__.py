"""Selection on dev: the dev suite every recipe choice is made on (:mod:`.suite`: hyper-parameters, checkpoints and
mixing weights, never the reported test benchmarks) and the comparison of a GPU candidate with its CPU recipe on dev
(:mod:`.comparison`: the publication rule of GPU-trained recipes).

Import from the modules themselves (``from phrasezoo.evaluation.dev.suite import evaluate_dev``); the benchmark suite
is :mod:`phrasezoo.evaluation`.
"""

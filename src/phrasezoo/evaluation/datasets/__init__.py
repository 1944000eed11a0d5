"""The evaluation sets that only the evaluation reads, by name.

* :mod:`.names`: a name-benchmark domain's ``dev``, ``test`` or ``calib`` split as the suite's tasks read it, and the
  ``calib`` split itself (built from training entities, for threshold calibration);
* :mod:`.benchmark_dev`: the dev splits of the clustering benchmarks (CoNLL-2003, BC5CDR) for the dev suite.

The dev suite's own sets (:mod:`phrasezoo.data.benchmarks.dev_sets`) and the name benchmark's dev and test splits
(:mod:`phrasezoo.data.benchmarks.name_benchmark`) are built on the shared level below: training must leave out exactly their
strings (:mod:`phrasezoo.data.benchmarks.held_out`), and the import ladder lets training read the shared level only.
"""

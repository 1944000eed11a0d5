"""The sets that score models, which training keeps out: the name benchmark and the dev suite's item sets."""

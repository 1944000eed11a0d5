"""The ``tie_split_accuracy`` metric: an ``evaluate`` script in this folder, loaded by path."""

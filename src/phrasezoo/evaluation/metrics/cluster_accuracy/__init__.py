"""The ``cluster_accuracy`` metric: an ``evaluate`` script in this folder, loaded by path."""

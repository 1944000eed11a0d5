"""The ``nmi`` metric: an ``evaluate`` script in this folder, loaded by path."""

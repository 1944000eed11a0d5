"""Tests of experiments/uctopic/: the CCL studies."""

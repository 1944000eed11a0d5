"""Tests of experiments/common/: the dev-suite tools."""

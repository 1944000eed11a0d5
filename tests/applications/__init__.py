"""Tests of the applications built on zoo encoders."""

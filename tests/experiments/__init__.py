"""Tests of the studies in experiments/ (one folder per method, common/ for the dev-suite tools)."""

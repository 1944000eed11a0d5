"""Tests of PNTM, mirroring src/phrasezoo/applications/pntm."""

"""Tests of PNTM, mirroring src/phrasezoo/methods/phrase_bert/pntm."""

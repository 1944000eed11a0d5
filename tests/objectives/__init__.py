"""Tests of phrasezoo.objectives: losses, the teacher, the lexicon term, weight averaging."""

"""Corpus pieces: download and read corpora and Wikipedia dumps, parse them with spaCy and mine their phrases."""

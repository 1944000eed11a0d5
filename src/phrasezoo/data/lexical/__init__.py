"""Lexical resources for training data: WordNet, synonym tables, paraphrasers and the bilingual-pivot table."""

"""Applications built on zoo encoders (the paper-specific ones, e.g. Phrase-BERT's phrase-based topic model)."""

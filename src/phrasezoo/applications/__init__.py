"""Applications built on the zoo's phrase encoders: Phrase-BERT's phrase-based topic model, UCTopic's topic mining."""

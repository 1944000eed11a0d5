"""Features of a (query, candidate) pair of names, from the strings and the channels' vectors.

* :mod:`~phrasezoo.match.features.lexical`: the TF-IDF channels (character n-grams, words) and the clues embeddings
  miss in names (numbers and years, acronyms, name cores);
* :mod:`~phrasezoo.match.features.name_features`: how names are shortened (covered words, short forms, head words,
  soft initialisms, typo-tolerant cover, token-sort similarity);
* :mod:`~phrasezoo.match.features.pairs`: :data:`~phrasezoo.match.features.pairs.FEATURES`, the names of every
  feature, and the computation of any of them over each query's candidate rows.

The bottom room of :mod:`phrasezoo.match`: it imports no other room.
"""

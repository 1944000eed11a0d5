"""What scores pairs against a fitted reference table and finds each query's best rows.

* :mod:`~phrasezoo.match.scoring.scorers`: an encoder's cosine (faiss), a TF-IDF channel, a rapidfuzz scorer;
* :mod:`~phrasezoo.match.scoring.hybrid`: the default, candidates from several channels reranked by a learned
  combination;
* :mod:`~phrasezoo.match.scoring.specs`: ``model=`` specs to scorers;
* :mod:`~phrasezoo.match.scoring.index`: the faiss indexes and the top-k helpers.

Stands over :mod:`phrasezoo.match.model` and :mod:`phrasezoo.match.features`.
"""

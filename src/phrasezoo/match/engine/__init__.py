"""The matching engine: a fitted :class:`~phrasezoo.match.engine.matcher.Matcher` (blocking, save and load), the
result tables of ``join``/``link``, and ``dedupe``'s clustering.

* :mod:`~phrasezoo.match.engine.matcher`: fit once on a reference table, search and transform later;
* :mod:`~phrasezoo.match.engine.blocking`: compare a query only with rows that share a key with it;
* :mod:`~phrasezoo.match.engine.results`: from top-k answers to the result table (thresholds, aliases, the report);
* :mod:`~phrasezoo.match.engine.dedupe`: clusters of one list's rows.

Stands over :mod:`phrasezoo.match.scoring` (and what it stands on) and :mod:`phrasezoo.match.io`.
"""

"""The learned model: how pair features become one score, and the numbers learned on dev data.

* :mod:`~phrasezoo.match.model.combinations`: :class:`~phrasezoo.match.model.combinations.Combination` (weights,
  link, probability map, the calibration table behind ``threshold="auto"``) and the fixed blend it is compared with;
* :mod:`~phrasezoo.match.model.learned`: the learned combinations, read from versioned JSON data files
  (``learned.json`` here, ``matcher.json`` in a zoo method's folder), and the default one per encoder.

Stands over :mod:`phrasezoo.match.features` (the feature names it may use).
"""

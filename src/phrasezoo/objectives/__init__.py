"""Training objectives shared by the methods: losses, the teacher, the lexicon term and weight averaging.

* :mod:`.losses`: InfoNCE, triplet, similarity and listwise distillation.
* :mod:`.teacher`: the teacher encoder whose similarities the distillation terms pull the student towards.
* :mod:`.lexicon_distillation` and :mod:`.lexicon_vocabulary`: the lexicon term (a method's ``lexicon_weight`` /
  ``lexicon`` task arguments): the student learns the teacher's ranking of each dictionary word's neighbours.
* :mod:`.weight_averaging`: uniform averaging of state dicts (training soups, CCL soups).

On the import ladder they stand with ``data/`` and ``encoders/``, above the resources and the core.
"""

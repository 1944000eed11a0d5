"""The zoo inside the tools users already have: sentence-transformers export, a spaCy pipeline component.

* :mod:`phrasezoo.integrations.sentence_transformers`: ``export_sentence_transformers(model, folder)``.
* :mod:`phrasezoo.integrations.spacy_component`: the ``phrasezoo_vectors`` spaCy factory.
"""

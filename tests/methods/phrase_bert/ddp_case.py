"""Phrase-BERT's task for the two-process loss test (``tests/training/test_distributed_losses.py``): the triplet
loss over paraphrase and context triples, the teacher and lexicon terms."""

from __future__ import annotations

from phrasezoo.methods.phrase_bert.task import PhraseBertTask
from tests.training.ddp_cases import PHRASES, SENTENCES, teacher_terms, tiny_model


def case():
    model = tiny_model("phrase_bert")
    paraphrases = [(p, p.title(), PHRASES[(i + 1) % 8]) for i, p in enumerate(PHRASES[:5])]
    contexts = [(p, SENTENCES[i].replace(p, "[MASK]"), SENTENCES[(i + 2) % 8]) for i, p in enumerate(PHRASES[5:])]
    task = PhraseBertTask(model, paraphrases, contexts, terms=teacher_terms(True))
    return model, task, [0, 5, 1, 6, 2, 7, 3, 4]  # context triples on both ranks

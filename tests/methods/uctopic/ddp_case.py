"""UCTopic's task for the two-process loss test (``tests/training/test_distributed_losses.py``): InfoNCE with
in-batch negatives and the false-negative mask, the lexicon term."""

from __future__ import annotations

from phrasezoo.methods.uctopic.task import UCTopicTask
from tests.training.ddp_cases import PHRASES, SENTENCES, teacher_terms, tiny_model


def case():
    """8 mentions of 4 phrases, each phrase twice: every anchor's positive is the phrase's other mention, and the
    phrase's other anchor sits on the other rank (a false negative only the gathered mask removes)."""
    model = tiny_model("uctopic")
    keys = [PHRASES[i // 2] for i in range(8)]
    sentences = [f"{s} Also {k} again." for s, k in zip(SENTENCES, keys)]
    starts = [s.index(k, len(s) - len(k) - 8) for s, k in zip(sentences, keys)]
    dataset = {"sentence": sentences, "start": starts, "end": [s + len(k) for s, k in zip(starts, keys)],
               "key": keys, "sentence_id": list(range(8))}  # fmt: skip
    task = UCTopicTask(model, dataset, keep_mention_probability=1.0, terms=teacher_terms(False))
    task.anchors, task.candidates = list(range(8)), [[i ^ 1] for i in range(8)]
    return model, task, [0, 2, 4, 6, 1, 3, 5, 7]

"""Two processes with half a batch each train like one process with the whole batch: same loss, same gradients.

For every method's training task (PEARL with its teacher and lexicon terms, UCTopic with its lexicon term and
false-negative mask, Phrase-BERT with its teacher and lexicon terms, SLICE, the codebook model), two gloo processes
(spawned with ``torch.multiprocessing``) each compute the task's loss on their half of a batch of B through a
``DistributedDataParallel`` model (the model the loop passes under ``accelerate launch``), and backpropagate.
Their mean loss and DDP's averaged gradients must equal one process's loss and gradients on the whole batch, to
float tolerance: in-batch negatives and the teacher's similarity matrix are gathered across processes
(:mod:`phrasezoo.objectives.distributed`). Each process draws its own lexicon batch in training; here both draw
the one-process batch's, so that the comparison is exact. Dropout is off (its masks depend on the batch shape).
"""

from __future__ import annotations

import os
import random
import socket
import zlib

import pytest
import torch
import torch.multiprocessing as mp

from phrasezoo.objectives.terms import TeacherTerms
from phrasezoo.registry import get_method

METHODS = ("pearl", "uctopic", "phrase_bert", "slice", "codebook")
PHRASES = ["new york times", "machine learning", "climate change", "public health", "united nations",
           "deep learning", "trade agreement", "political philosophy"]  # fmt: skip
SENTENCES = [f"Yesterday the report on {p} was read by many people in the city." for p in PHRASES]
LEXICON_KEYS = ("lexicon_ids", "lexicon_features")


class FakeTeacher:
    """Teacher rows from a hash of the text (7-d), every text found."""

    index: dict[str, int] = {}

    def lookup(self, texts):
        rows = [torch.randn(7, generator=torch.Generator().manual_seed(zlib.crc32(t.encode()))) for t in texts]
        return torch.stack(rows), torch.ones(len(texts), dtype=torch.bool)


def _terms(distill: bool) -> TeacherTerms:
    from tests.training.golden import tiny_lexicon_builder

    return TeacherTerms(
        distill_weight=2.0 if distill else 0.0,
        teacher=FakeTeacher() if distill else None,
        lexicon_weight=0.5,
        lexicon=tiny_lexicon_builder(None, None, None),
    )


def _model(method: str):
    model = get_method(method).tiny_model()
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
        if isinstance(module, torch.nn.MultiheadAttention):
            module.dropout = 0.0
    model.train()
    return model


def _case(method: str):
    """``(model, task, batches)``: ``batches(indices)`` the task's batch of those examples, ``order`` the batch's
    example indices (a batch of 8: the first 4 on rank 0, the last 4 on rank 1)."""
    model = _model(method)
    order = list(range(8))
    if method == "pearl":
        from phrasezoo.methods.pearl.task import PearlTask

        dataset = {
            "phrase": PHRASES,
            "type_id": [i % 3 for i in range(8)],
            "hard_negatives": [[PHRASES[(i + 1) % 8], PHRASES[(i + 3) % 8]] for i in range(8)],
        }
        task = PearlTask(model, dataset, lambda p, rng: p.title(), lambda w, rng: w, terms=_terms(True))
    elif method == "uctopic":
        from phrasezoo.methods.uctopic.task import UCTopicTask

        # 8 mentions of 4 phrases, each phrase twice: every anchor's positive is the phrase's other mention, and
        # the phrase's other anchor sits on the other rank (a false negative only the gathered mask removes)
        keys = [PHRASES[i // 2] for i in range(8)]
        sentences = [f"{s} Also {k} again." for s, k in zip(SENTENCES, keys)]
        starts = [s.index(k, len(s) - len(k) - 8) for s, k in zip(sentences, keys)]
        dataset = {"sentence": sentences, "start": starts, "end": [s + len(k) for s, k in zip(starts, keys)],
                   "key": keys, "sentence_id": list(range(8))}  # fmt: skip
        task = UCTopicTask(model, dataset, keep_mention_probability=1.0, terms=_terms(False))
        task.anchors, task.candidates = list(range(8)), [[i ^ 1] for i in range(8)]
        order = [0, 2, 4, 6, 1, 3, 5, 7]
    elif method == "phrase_bert":
        from phrasezoo.methods.phrase_bert.task import PhraseBertTask

        paraphrases = [(p, p.title(), PHRASES[(i + 1) % 8]) for i, p in enumerate(PHRASES[:5])]
        contexts = [(p, SENTENCES[i].replace(p, "[MASK]"), SENTENCES[(i + 2) % 8]) for i, p in enumerate(PHRASES[5:])]
        task = PhraseBertTask(model, paraphrases, contexts, terms=_terms(True))
        order = [0, 5, 1, 6, 2, 7, 3, 4]  # context triples on both ranks
    elif method == "slice":
        from phrasezoo.methods.slice.task import SliceTask

        triplets = [(p, SENTENCES[i], SENTENCES[(i + 1) % 8]) for i, p in enumerate(PHRASES)]
        task = SliceTask(model, triplets, valid_max_triplets=0)
    else:
        from datasets import Dataset

        from phrasezoo.methods.codebook.task import CodebookTask

        texts = ["the man lifting weights", "hot dog", "civil order", "real property law", "sms messages used",
                 "some countries", "hospital appointments", "the woman in the garage"]  # fmt: skip
        targets = [t.split()[-2:] + ["word"] for t in texts]
        task = CodebookTask(model, Dataset.from_dict({"text": texts, "targets": targets}))
    return model, task, order


def _batch(method: str, task, order: list[int], rank: int | None):
    """The batch of ``order`` (``rank`` None) or of one rank's half, with the whole batch's lexicon draw (and, for
    the codebook model, the whole batch's negatives: each text's is the next text's targets)."""
    full = task.make_batch(order, random.Random(0))
    if rank is None:
        batch = full
    else:
        batch = task.make_batch(order[rank * 4 : rank * 4 + 4], random.Random(0))
        batch.update({key: full[key] for key in LEXICON_KEYS if key in full})
    if method == "codebook":
        rows = slice(None) if rank is None else slice(rank * 4, rank * 4 + 4)
        batch["negative_ids"] = torch.roll(full["target_ids"], -1, 0)[rows]
        batch["negative_mask"] = torch.roll(full["target_mask"], -1, 0)[rows]
    return batch


def _loss_and_grads(method: str, model, task, batch):
    torch.manual_seed(0)
    loss, _ = task.compute_loss(model, batch)
    loss.backward()
    plain = model.module if hasattr(model, "module") else model
    grads = {name: p.grad.detach().clone() for name, p in plain.named_parameters() if p.grad is not None}
    return float(loss.detach()), grads


def _worker(rank: int, world: int, port: int, folder: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    torch.distributed.init_process_group("gloo", rank=rank, world_size=world)
    try:
        results = {}
        for method in METHODS:
            model, task, order = _case(method)
            wrapped = torch.nn.parallel.DistributedDataParallel(model)
            loss, grads = _loss_and_grads(method, wrapped, task, _batch(method, task, order, rank))
            losses = [None] * world
            torch.distributed.all_gather_object(losses, loss)
            results[method] = (sum(losses) / world, grads)
        torch.save(results, os.path.join(folder, f"rank{rank}.pt"))
    finally:
        torch.distributed.destroy_process_group()


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory):
    """Every method's mean loss and DDP-averaged gradients from two gloo processes (one spawn for all methods)."""
    folder = tmp_path_factory.mktemp("ddp")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    mp.spawn(_worker, args=(2, port, str(folder)), nprocs=2, join=True)
    return [torch.load(folder / f"rank{r}.pt") for r in range(2)]


@pytest.mark.parametrize("method", METHODS)
def test_two_processes_with_half_batches_match_one_process(method, two_processes, one_thread):
    model, task, order = _case(method)
    loss, grads = _loss_and_grads(method, model, task, _batch(method, task, order, None))
    for rank, results in enumerate(two_processes):
        got_loss, got_grads = results[method]
        assert got_loss == pytest.approx(loss, rel=1e-5, abs=1e-6), (method, rank)
        assert set(got_grads) == set(grads), (method, sorted(set(grads) ^ set(got_grads))[:5])
        scale = max(float(g.abs().max()) for g in grads.values())
        for name, grad in grads.items():
            torch.testing.assert_close(got_grads[name], grad, rtol=1e-4, atol=1e-5 * scale, msg=f"{method} {name}")

"""Two processes with half a batch each train like one process with the whole batch: same loss, same gradients.

For every method's training task (each method's ``tests/methods/<name>/ddp_case.py``: its task with the teacher
and lexicon terms where the method takes them), two gloo processes (spawned with ``torch.multiprocessing``) each
compute the task's loss on their half of a batch of 8 through a ``DistributedDataParallel`` model (the model the
loop passes under ``accelerate launch``), and backpropagate. Their mean loss and DDP's averaged gradients must equal
one process's loss and gradients on the whole batch, to float tolerance: in-batch negatives and the teacher's
similarity matrix are gathered across processes (:mod:`phrasezoo.objectives.distributed`). Each process draws its
own lexicon batch in training; here both take the one-process batch's, so that the comparison is exact. A case's
optional ``adjust(batch, full, (start, stop))`` makes a half batch consistent with the whole one in the same way.
"""

from __future__ import annotations

import importlib
import os
import random
import socket

import pytest
import torch
import torch.multiprocessing as mp

from phrasezoo.zoo.registry import list_methods

pytestmark = pytest.mark.slow  # two spawned processes build every method's tiny model (about 40 s on 2 cores)

METHODS = list(list_methods())
LEXICON_KEYS = ("lexicon_ids", "lexicon_features")


def _case(method: str):
    """``(model, task, order, adjust)``: ``order`` the batch's example indices (first half on rank 0)."""
    module = importlib.import_module(f"tests.methods.{method}.ddp_case")
    return (*module.case(), getattr(module, "adjust", None))


def _batch(task, order: list[int], adjust, rank: int | None):
    """The batch of ``order`` (``rank`` None) or of one rank's half, with the whole batch's lexicon draw."""
    full = task.make_batch(order, random.Random(0))
    half = len(order) // 2
    rows = (0, len(order)) if rank is None else (rank * half, rank * half + half)
    batch = full if rank is None else task.make_batch(order[rows[0] : rows[1]], random.Random(0))
    batch.update({key: full[key] for key in LEXICON_KEYS if key in full})
    if adjust is not None:
        adjust(batch, full, rows)
    return batch


def _loss_and_grads(model, task, batch):
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
            model, task, order, adjust = _case(method)
            wrapped = torch.nn.parallel.DistributedDataParallel(model)
            loss, grads = _loss_and_grads(wrapped, task, _batch(task, order, adjust, rank))
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
    model, task, order, adjust = _case(method)
    loss, grads = _loss_and_grads(model, task, _batch(task, order, adjust, None))
    for rank, results in enumerate(two_processes):
        got_loss, got_grads = results[method]
        assert got_loss == pytest.approx(loss, rel=1e-5, abs=1e-6), (method, rank)
        assert set(got_grads) == set(grads), (method, sorted(set(grads) ^ set(got_grads))[:5])
        scale = max(float(g.abs().max()) for g in grads.values())
        for name, grad in grads.items():
            torch.testing.assert_close(got_grads[name], grad, rtol=1e-4, atol=1e-5 * scale, msg=f"{method} {name}")

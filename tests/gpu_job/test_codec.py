"""The GPU job's task codec (JSON + arrays, no pickle) and its weight handling (fp16, row cuts, shards)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch

from phrasezoo.core.recipes import TrainingConfig
from phrasezoo.gpu_job.codec import (
    COLUMN_MIN_ITEMS,
    HALF_MIN_ELEMENTS,
    StateWriter,
    read_task_state,
    task_fingerprint,
    write_task_state,
)
from phrasezoo.gpu_job.travel import PackTooLarge, check_fits
from phrasezoo.gpu_job.weights import (
    check_cut_rows,
    cut_rows,
    expand_rows,
    read_shards,
    token_ids,
    travel_dtypes,
    untouched_row_factor,
    write_shards,
)
from tests.lexicon_fixtures import tiny_lexicon


class _Holder:  # a local class: not rebuildable from its import path
    pass


def _task(model):
    """An object shaped like a task: columns of every kind, a nested phrasezoo object and the model."""
    task = _Holder.__new__(_Holder)
    n = COLUMN_MIN_ITEMS + 3
    words, _, lexicon = tiny_lexicon()
    task.__dict__.update(
        {
            "model": model,
            "texts": [f"text {i} é" for i in range(n)],
            "ragged": [[f"w{i}", f"w{i + 1}"] if i % 3 else [] for i in range(n)],
            "ids": [[i, i * 2] for i in range(n)],
            "mentions": [(f"sentence {i}", (i, i + 3)) for i in range(n)],
            "ints": list(range(n)),
            "floats": [i / 7 for i in range(n)],
            "small": [1, "two", (3, 4), None, True, 2.5, float("inf")],
            "index": {f"w{i}": i for i in reversed(range(n))},
            "keys": {1: "one", (2, 3): {"x"}},
            "big": torch.randn(HALF_MIN_ELEMENTS),
            "small_tensor": torch.arange(5, dtype=torch.int64),
            "lexicon": lexicon,
        }
    )
    return task, words


def test_task_state_round_trips_without_pickle(tmp_path: Path):
    model = torch.nn.Linear(2, 2)
    task, words = _task(model)
    task.__class__ = type(task.lexicon)  # any phrasezoo class: rebuilt by import path (no __init__ runs)
    info = write_task_state(task, model, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["task.json.gz", "task.npz"]
    assert info["halved"] == ["task.big"]  # large float32 tensors travel as float16
    back = read_task_state(tmp_path, model)
    assert type(back) is type(task) and back.model is model
    for key in ("texts", "ragged", "ids", "mentions", "ints", "floats", "small", "keys"):
        assert getattr(back, key) == getattr(task, key), key
    assert list(back.index) == list(task.index)  # dict order kept
    assert isinstance(back.mentions[0], tuple) and isinstance(back.mentions[0][1], tuple)
    assert torch.allclose(back.big, task.big, rtol=1e-3, atol=1e-4) and back.big.dtype == torch.float32
    assert torch.equal(back.small_tensor, task.small_tensor)
    assert back.lexicon.neighbourhoods.strings == words and back.lexicon.anchors == task.lexicon.anchors
    rng_a, rng_b = random.Random(3), random.Random(3)
    assert back.lexicon.sample(rng_a) == task.lexicon.sample(rng_b)  # the rebuilt object behaves the same


def test_fingerprint_ignores_dict_order_only():
    model = torch.nn.Linear(2, 2)
    task, _ = _task(model)
    task.__class__ = type(task.lexicon)
    first = task_fingerprint(task, model)
    task.index = dict(reversed(list(task.index.items())))
    assert task_fingerprint(task, model) == first
    task.texts[0] = "changed"
    assert task_fingerprint(task, model) != first


def test_foreign_objects_and_modules_are_refused_with_their_path():
    writer = StateWriter(model=None)
    with pytest.raises(TypeError, match=r"task\['x'\].*module-level classes"):
        writer.encode({"x": _Holder()}, "task")
    with pytest.raises(TypeError, match="only the task's model travels"):
        writer.encode(torch.nn.Linear(1, 1), "task.encoder")
    with pytest.raises(TypeError, match="object array"):
        writer.encode(np.array([object()]), "task.a")


def test_fp16_travel_keeps_buffers_that_fp16_would_break():
    vectors = torch.randn(2000, 5)
    vectors[0, 0] = 1e-9  # a stray tiny component of a word vector may flush to zero
    state = {"weight": torch.randn(4, 3), "probs": torch.tensor([1e-9, 0.5]), "vectors": vectors}
    out = travel_dtypes(state, parameters=["weight"])
    assert out["weight"].dtype == torch.float16 and out["vectors"].dtype == torch.float16
    assert out["probs"].dtype == torch.float32  # 1e-9 would become 0 in fp16


def test_shards_split_large_tensors_by_rows_and_join_exactly(tmp_path: Path):
    state = {"big": torch.randn(1000, 64), "small": torch.arange(10), "scalar": torch.tensor(3.0)}
    max_bytes = (1 << 16) + 60_000  # 60 kB of tensors per shard after the header allowance
    paths = write_shards(state, tmp_path, "weights", max_bytes)
    assert len(paths) > 4 and all(p.stat().st_size <= max_bytes for p in paths)
    back = read_shards(reversed(paths))
    assert set(back) == set(state) and all(torch.equal(back[k], state[k]) for k in state)


def test_row_cut_travels_used_rows_and_reports_a_read_of_any_other(tmp_path: Path):
    state = {"emb": torch.randn(10, 3), "bias": torch.randn(3)}
    rows = torch.tensor([0, 2, 5])
    cut = cut_rows(state, ["emb"], rows)
    assert cut["emb"].shape == (3, 3) and torch.equal(cut["bias"], state["bias"])
    full = expand_rows(cut, ["emb"], rows, 10)
    assert torch.equal(full["emb"][rows], state["emb"][rows]) and torch.isnan(full["emb"][1]).all()
    assert check_cut_rows(full, ["emb"], rows) == []
    read = full["emb"].clone()
    read[1] = 0.0  # a row that did not travel was written: the run read it
    assert "changed" in check_cut_rows({"emb": read}, ["emb"], rows)[0]
    ids: set[int] = set()
    token_ids(
        {"input_ids": torch.tensor([[0, 5, 12]]), "mask": torch.ones(1, 3, dtype=torch.bool), "x": [2, 2]}, 10, ids
    )
    assert ids == {0, 2, 5}


def test_untouched_row_factor_is_what_adamw_does_to_rows_no_batch_reads():
    cfg = TrainingConfig(learning_rate=0.05, weight_decay=0.1, optimizer="adamw", scheduler="linear", warmup_ratio=0.2)
    emb = torch.nn.Embedding(6, 4)
    start = emb.weight.detach().clone()
    optimizer = torch.optim.AdamW(emb.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    from phrasezoo.training.loop import learning_rate_factor

    steps = 7
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = cfg.learning_rate * learning_rate_factor(cfg, step, steps)
        emb(torch.tensor([0, 1])).sum().backward()  # rows 2..5 are never read
        optimizer.step()
        optimizer.zero_grad()
    factor = untouched_row_factor(cfg, "weight", steps, steps)
    assert factor < 1.0
    assert torch.allclose(emb.weight[2:], start[2:] * factor, atol=1e-7)
    assert untouched_row_factor(TrainingConfig(weight_decay=0.0, optimizer="adamw"), "w", steps, steps) == 1.0


def test_a_pack_over_the_limit_is_refused_with_the_fix(tmp_path: Path):
    (tmp_path / "weights.safetensors").write_bytes(b"\0" * 300_000)
    with pytest.raises(PackTooLarge, match=r"over the 0\.1 MiB.*--row-cut on"):
        check_fits(tmp_path, max_mib=0.1)
    assert check_fits(tmp_path, max_mib=1.0)[0] == pytest.approx(300_000 / 2**20)


def test_every_methods_task_module_imports_without_the_data_libraries():
    """The GPU machine has no datasets, spaCy or faiss: a task's module must import without them (its package's
    ``__init__``, which imports the data builders, is skipped there)."""
    import subprocess
    import sys

    from phrasezoo.zoo.registry import list_methods

    modules = [f"phrasezoo.methods.{name}.task" for name in list_methods()]
    code = (
        "import sys\n"
        "for n in ('datasets', 'spacy', 'faiss'): sys.modules[n] = None\n"
        "from phrasezoo.gpu_job.codec import import_module_alone\n"
        f"for m in {modules!r}: import_module_alone(m)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]

"""SLICE training task: batch layout, the paper's loss from one passage pass, the whole-passage control, learning,
exact resume, validation facts and build_task from a recipe (MS MARCO layout, local)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
import torch.nn.functional as F

from phrasezoo.core.recipes import TrainingConfig, recipe_from_dict
from phrasezoo.methods.slice.assembly import build_task
from phrasezoo.methods.slice.task import SliceTask
from phrasezoo.models.slice.span_pooling import slice_loss
from phrasezoo.training.loop import RunOptions, TrainingInterrupted, train
from phrasezoo.zoo.registry import get_method

TRIPLETS = [
    ("a cheap water filter", "The engineer designed a cheap water filter for remote villages.", "Storms closed the line."),
    ("the great fire", "The harbour was rebuilt after the great fire of 1850 destroyed it.", "Trains run on Monday."),
    ("busy quays", "Merchants traded silk along its busy quays for centuries.", "The filter costs little."),
    ("fishing fleet", "Today a small fishing fleet still sails from the old port.", "The storm damaged tracks."),
    ("railway line", "A violent storm damaged the northern railway line last week.", "Spices came from far away."),
    ("normal timetable", "Trains returned to the normal timetable on Monday morning.", "Cafes line the harbour."),
    ("removes bacteria", "Her filter removes most bacteria from the river water.", "The fleet sails at dawn."),
    ("three stations", "The storm closed three stations for a whole week.", "Silk was traded in the port."),
]  # fmt: skip


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors (tests/conftest.py)


def tiny():
    return get_method("slice").tiny_model()


def test_batch_holds_queries_and_one_row_per_passage():
    model = tiny()
    task = SliceTask(model, TRIPLETS)
    batch = task.make_batch([0, 1, 2], random.Random(0))
    assert batch["size"] == 3 and batch["queries"]["input_ids"].shape[0] == 3
    passages = batch["passages"]
    assert len(passages) == 6  # positives then negatives
    assert (passages.word_index.max(dim=1).values + 1 == passages.word_mask.sum(1)).all()
    assert passages.word_mask[0].sum() == len(TRIPLETS[0][1].split())


def test_loss_is_the_papers_best_span_loss():
    model = tiny().eval()
    task = SliceTask(model, TRIPLETS)
    batch = task.make_batch([0, 1], random.Random(0))
    loss, logs = task.compute_loss(model, batch)
    cos_true, cos_false, span_words = task.similarities(model, batch)
    assert loss.item() == pytest.approx(slice_loss(cos_true, cos_false, 30.0).item(), rel=1e-6)
    assert ((span_words >= 1) & (span_words <= model.config.train_max_span_words)).all()
    # brute force for the first positive: the best over every span of 1..10 words
    with torch.no_grad():
        query = model(**{k: v[:1] for k, v in batch["queries"].items()}).query_embedding[0]
        out = model(**batch["passages"].model_inputs())
        tokens, words = out.token_embeddings[0], batch["passages"].word_index[0]
        n = int(words.max()) + 1
        best = max(
            F.cosine_similarity(tokens[(words >= i) & (words < j)].mean(0), query, dim=0).item()
            for i in range(n)
            for j in range(i + 1, min(n, i + 10) + 1)
        )
    assert cos_true[0].item() == pytest.approx(best, abs=1e-5)
    assert set(logs) == {"accuracy", "cos_true", "cos_false", "span_words"}


def test_control_uses_the_whole_passage_mean():
    model = tiny().eval()
    task = SliceTask(model, TRIPLETS, passage_loss=True)
    batch = task.make_batch([0], random.Random(0))
    cos_true, _, span_words = task.similarities(model, batch)
    assert span_words is None
    with torch.no_grad():
        query = model(**batch["queries"]).query_embedding[0]
        out = model(**batch["passages"].model_inputs())
        mean = out.token_embeddings[0][batch["passages"].word_index[0] >= 0].mean(0)
    assert cos_true[0].item() == pytest.approx(F.cosine_similarity(mean, query, dim=0).item(), abs=1e-5)


def test_empty_training_set_is_a_clear_error():
    with pytest.raises(ValueError, match="training split is empty"):
        SliceTask(tiny(), [])


def test_training_lowers_the_loss_resumes_exactly_and_reports_validation(tmp_path: Path):
    cfg = TrainingConfig(batch_size=4, max_steps=30, learning_rate=1e-3, optimizer="adamw", scheduler="constant",
                         checkpoint_every=15, log_every=1, seed=3)  # fmt: skip
    model = tiny()
    task = SliceTask(model, TRIPLETS, valid_triplets=TRIPLETS[:4])
    before = task.validate(model)["loss"]
    train(model, task, cfg, RunOptions(tmp_path / "a", progress=False))
    assert task.valid_before is not None and task.valid_before["loss"] == pytest.approx(before)
    facts = task.facts()
    assert facts["validation loss (end)"] < facts["validation loss (start)"]
    logs = [json.loads(line) for line in (tmp_path / "a" / "train_log.jsonl").read_text().splitlines()]
    assert sum(r["loss"] for r in logs[-5:]) < sum(r["loss"] for r in logs[:5])

    short = TrainingConfig(**{**cfg.__dict__, "max_steps": 6, "checkpoint_every": 3})
    whole = tiny()
    train(whole, SliceTask(whole, TRIPLETS), short, RunOptions(tmp_path / "b", progress=False))
    broken = tiny()
    with pytest.raises(TrainingInterrupted):
        train(
            broken, SliceTask(broken, TRIPLETS), short, RunOptions(tmp_path / "c", stop_after_steps=4, progress=False)
        )
    resumed = tiny()
    out = train(resumed, SliceTask(resumed, TRIPLETS), short, RunOptions(tmp_path / "c", progress=False))
    assert out.resumed_from == 3
    for (name, a), b in zip(whole.state_dict().items(), resumed.state_dict().values()):
        torch.testing.assert_close(a, b, msg=name)


def test_build_task_from_a_recipe_with_local_msmarco(tmp_path: Path):
    repo = tmp_path / "msmarco"
    (repo / "triplet").mkdir(parents=True)
    columns = {k: [t[i] for t in TRIPLETS] for i, k in enumerate(("query", "positive", "negative"))}
    pq.write_table(pa.table(columns), repo / "triplet" / "train-00000-of-00001.parquet")
    (repo / "README.md").write_text(
        "---\nconfigs:\n- config_name: triplet\n  data_files:\n  - split: train\n    path: triplet/train-*\n---\n"
    )
    recipe = recipe_from_dict(
        {"name": "slice-test", "method": "slice", "repo_id": "x/slice-test", "backbone": "minilm-l6",
         "data": {"source": "msmarco", "msmarco_dataset": str(repo), "msmarco_valid_rows": 1},
         "training": {"method_args": {"passage_loss": True, "valid_max_triplets": 0}}}
    )  # fmt: skip
    from accelerate import Accelerator

    task = build_task(recipe, tiny(), Accelerator(cpu=True))
    assert task.num_examples() == len(TRIPLETS) and task.passage_loss and task.valid == []
    assert task.facts()["data: triplets"] == len(TRIPLETS)

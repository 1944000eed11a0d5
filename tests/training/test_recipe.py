"""train_recipe's first minutes (issue 65, item 7): what the run cannot do is refused before any data is built, and
under several processes only the first one prints the soup's progress."""

from __future__ import annotations

import pytest
import torch

from phrasezoo.cli import main as cli_main
from phrasezoo.core.recipes import load_recipe
from phrasezoo.training import one_run, recipe
from phrasezoo.training.loop import RunOptions
from phrasezoo.training.one_run import TrainedRun


def _no_data_build(*args, **kwargs):
    raise AssertionError("the run started (model and data build) before the recipe was checked")


@pytest.mark.skipif(torch.cuda.is_available(), reason="fp16 is refused on a CPU only")
def test_fp16_on_a_cpu_is_one_error_line_before_the_data_build(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(recipe, "train_one_run", _no_data_build)
    monkeypatch.setattr(one_run, "create_model", _no_data_build)
    assert cli_main(["train", "pearl-mini", "--set", "training.mixed_precision=fp16"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "fp16" in err and "pearl-mini.yaml" in err
    assert not (tmp_path / "outputs").exists()


def test_a_batch_the_processes_do_not_divide_is_refused_before_the_data_build(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(recipe, "train_one_run", _no_data_build)
    monkeypatch.setenv("WORLD_SIZE", "3")  # what accelerate launch --num_processes 3 sets in each process
    cfg = load_recipe("pearl-mini", ["training.batch_size=32"])
    with pytest.raises(ValueError, match=r"batch_size 32 .* divisible by the processes \(3\)"):
        recipe.train_recipe(cfg, RunOptions(progress=False))
    cfg = load_recipe("pearl-mini", ["training.soup_seeds=[42, 42]"])
    monkeypatch.setenv("WORLD_SIZE", "1")
    with pytest.raises(ValueError, match="two different seeds"):
        recipe.train_recipe(cfg, RunOptions(progress=False))


@pytest.mark.parametrize("rank", ["0", "1"])
def test_only_the_first_process_prints_the_soups_progress(tmp_path, monkeypatch, capsys, rank):
    monkeypatch.setenv("RANK", rank)
    monkeypatch.setenv("WORLD_SIZE", "2")
    cfg = load_recipe("pearl-mini")
    trained = []

    def fake_run(seeded, options, method):
        trained.append(seeded.training.seed)
        return TrainedRun(None, options.output_dir, rank == "0")

    monkeypatch.setattr(recipe, "train_one_run", fake_run)
    options = RunOptions(tmp_path, progress=False, workers=1)
    recipe._Seeds(cfg, None, options).train([42, 7, 1])
    assert trained == [42, 7, 1]  # every process trains every seed (its share of each batch)
    printed = [line for line in capsys.readouterr().out.splitlines() if "soup ingredient" in line]
    assert len(printed) == (3 if rank == "0" else 0)

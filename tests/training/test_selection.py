"""Dev selection with a margin (issue 65, item 7): a reproduction keeps the release's values unless the dev suite
prefers another by more than the spread between seeds, and says so when its choice differs from the release's."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from phrasezoo.core.errors import InputError
from phrasezoo.core.recipes import load_recipe
from phrasezoo.training import selection
from phrasezoo.training.selection import check_selection, select_from_recipe, select_on_dev

#: pearl-mini's fresh-clone dev averages (char_weight 0.0 won by 0.2 points, within the seeds' spread)
FRESH_CLONE = {0.0: 0.5795, 0.25: 0.5780, 0.5: 0.5774}
GRID = {"weight_average": [0.0, 0.25], "char_weight": [0.0, 0.25, 0.5]}
RELEASED = {"weight_average": 0.0, "char_weight": 0.5}


class _Model(torch.nn.Linear):
    """One weight, 1 - weight_average after a blend of a checkpoint of ones with a start of zeros."""

    def __init__(self) -> None:
        super().__init__(1, 1, bias=False)
        self.config = SimpleNamespace(char_weight=0.25)


def _dev(scores: dict[float, float]):
    """A fake dev suite: ``scores`` by char_weight, 0.01 less for a blend with the starting weights."""

    def evaluate_dev(model, tasks=None, progress=False, max_items=None) -> dict:
        blend = 1.0 - float(model.weight.detach()[0, 0])
        score = scores[model.config.char_weight] - (0.01 if blend > 0 else 0.0)
        return {"dev_avg": score, "dev_avg_tasks": ["dev_fake"], "tasks": {"dev_fake": {"score": score}}}

    return evaluate_dev


@pytest.fixture
def cfg(monkeypatch):
    state = {"weight": torch.ones(1, 1)}
    start = {"weight": torch.zeros(1, 1)}
    monkeypatch.setattr(selection, "_checkpoint_weights", lambda cfg: (Path("step-000300"), state, start, {}))
    return load_recipe("pearl-mini")


def test_a_dev_difference_inside_the_margin_keeps_the_releases_values(cfg, tmp_path, capsys):
    out = tmp_path / "selection.json"
    chosen, facts = select_on_dev(cfg, GRID, _dev(FRESH_CLONE), _Model(), out, margin=0.006, released=RELEASED)
    assert chosen["chosen"] == RELEASED and cfg.model["char_weight"] == 0.5
    assert chosen["release"]["kept"] and "not the release's choice" not in facts
    assert "differs from the release" not in capsys.readouterr().out
    assert json.loads(out.read_text())["margin"] == 0.006


def test_a_choice_beyond_the_margin_is_taken_and_said(cfg, tmp_path, capsys):
    clear_win = {**FRESH_CLONE, 0.0: 0.5900}
    model = _Model()
    chosen, facts = select_on_dev(
        cfg, GRID, _dev(clear_win), model, tmp_path / "s.json", margin=0.006, released=RELEASED
    )
    assert chosen["chosen"] == {"weight_average": 0.0, "char_weight": 0.0} and model.config.char_weight == 0.0
    assert not chosen["release"]["kept"] and "not the release's choice" in facts
    said = [line for line in capsys.readouterr().out.splitlines() if "differs from the release" in line]
    assert len(said) == 1 and "char_weight 0.0 where the release has 0.5" in said[0]


def test_without_a_margin_the_best_dev_score_wins(cfg, tmp_path):
    chosen, _ = select_on_dev(cfg, GRID, _dev(FRESH_CLONE), _Model(), tmp_path / "s.json")
    assert chosen["chosen"] == {"weight_average": 0.0, "char_weight": 0.0}  # what the fresh clone exported


def test_the_recipe_block_gives_margin_and_release_and_misspelt_keys_fail_before_training(cfg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the selection file goes to results/pearl/ here
    block = cfg.eval["select_on_dev"]
    assert block["released"] == RELEASED and block["margin"] > 0  # pearl-mini's: the release and its seeds' spread
    cfg.eval["select_on_dev"] = {**block, "tasks": None}
    _, chosen, _ = select_from_recipe(cfg, _dev(FRESH_CLONE), _Model(), progress=False)
    assert chosen["chosen"] == RELEASED and (tmp_path / "results" / "pearl" / "pearl-mini-dev-selection.json").exists()
    cfg.eval["select_on_dev"] = {**block, "margn": 0.01}
    with pytest.raises(InputError, match="unknown keys.*margn"):
        check_selection(cfg)
    cfg.eval["select_on_dev"] = {**block, "released": {"char_wieght": 0.5}}
    with pytest.raises(InputError, match="released"):
        check_selection(cfg)

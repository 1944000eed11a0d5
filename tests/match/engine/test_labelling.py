"""``phrasezoo match label``: the session driven through stdin by a simulated user who answers from a gold table
(y / n / skip / undo / quit, and resume), the rule that chooses the pair, and the file it writes."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from phrasezoo.match import CalibrationError, dedupe, join, read_calibration
from phrasezoo.match.commands import main
from phrasezoo.match.engine.labelling import AnswerPool, LabelSession, run_session, session_path
from tests.match.conftest import GOLD, LEFT, RIGHT, hand_made_decision

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "experiments" / "matching"))
from open_world_lib import label_loop_shift  # noqa: E402


class User:
    """Answers the pair last printed on ``screen`` from ``gold`` (query -> its answer); ``script`` replaces the reply
    of given turns (1-based): ``s``, ``u``, ``q``, anything else, or ``EOF`` (the end of input)."""

    def __init__(self, screen: io.StringIO, gold: dict, script: dict[int, str] | None = None) -> None:
        self.screen, self.gold, self.script, self.asked = screen, gold, script or {}, []

    def readline(self) -> str:
        text = self.screen.getvalue()
        pair = (re.findall(r"query:  '(.*)'", text)[-1], re.findall(r"answer: '(.*)'  \(score", text)[-1])
        turn = len(self.asked) + 1
        reply = self.script.get(turn, "y" if self.gold[pair[0]] == pair[1] else "n")
        self.asked.append((*pair, reply))
        return "" if reply == "EOF" else reply + "\n"


@pytest.fixture
def tables(tmp_path) -> tuple[Path, Path]:
    left, right = tmp_path / "left.csv", tmp_path / "right.csv"
    pd.DataFrame({"id": range(len(LEFT)), "name": LEFT}).to_csv(left, index=False)
    pd.DataFrame({"vendor": RIGHT, "amount": range(len(RIGHT))}).to_csv(right, index=False)
    return left, right


def label(tables, output: Path, monkeypatch, script=None, budget: int = 4) -> tuple[int, str, User]:
    """Run ``phrasezoo match label`` in this process with a simulated user; ``(exit status, screen, user)``."""
    screen = io.StringIO()
    user = User(screen, GOLD, script)
    left, right = tables
    with monkeypatch.context() as terminal:
        terminal.setattr(sys, "stdout", screen)
        terminal.setattr(sys, "stdin", user)
        status = main(["label", "--left", str(left), "--right", str(right), "--left-column", "name",
                       "--right-column", "vendor", "--budget", str(budget), "--output", str(output),
                       "--no-progress"])  # fmt: skip
    return status, screen.getvalue(), user


def test_a_session_asks_each_pair_once_and_writes_the_labels(tables, tmp_path, decision_cli, monkeypatch):
    output = tmp_path / "calibration.json"
    status, screen, user = label(tables, output, monkeypatch)
    assert status == 0, screen
    calibration = read_calibration(output)
    assert [(row["query"], row["answer"]) for row in calibration.labels] == [a[:2] for a in user.asked]
    assert len(set(a[:2] for a in user.asked)) == 4  # never the same pair twice
    assert all(row["right"] == (GOLD[row["query"]] == row["answer"]) for row in calibration.labels)
    assert re.search(r"4 of 4 labelled; (threshold now \d\.\d\d, expected precision \d\.\d\d|no threshold)", screen)
    assert [row[0] for row in calibration.cuts] == sorted(row[0] for row in calibration.cuts)
    assert json.loads(session_path(output).read_text())["labels"] == calibration.labels
    # the file changes the join's threshold, and a streamed join's stored one is the join's own on these tables
    decision_cli.fit(LEFT)
    plain = join(LEFT, RIGHT, model=decision_cli, threshold="auto")
    calibrated = join(LEFT, RIGHT, model=decision_cli, threshold="auto", calibration=output)
    assert calibrated.attrs["threshold"] != plain.attrs["threshold"] == pytest.approx(0.7)
    assert calibrated.attrs["threshold"] == calibration.stored_cut(0.9)


def test_skip_undo_a_wrong_reply_quit_and_resume(tables, tmp_path, decision_cli, monkeypatch):
    output = tmp_path / "calibration.json"
    status, screen, user = label(tables, output, monkeypatch, script={1: "maybe", 2: "s", 3: "u", 5: "q"})
    assert status == 0
    assert "answer y (the same thing), n (not)" in screen and ">> undone:" in screen
    first = user.asked[0][:2]
    asked = [a[:2] for a in user.asked]
    assert asked[1] == asked[3] == first != asked[2]  # asked again after a wrong reply, and after the skip is undone
    assert [(row["query"], row["answer"]) for row in read_calibration(output).labels] == [first]
    status, screen, user = label(tables, output, monkeypatch, budget=3)
    assert status == 0 and f"resuming {session_path(output)}: 1 labelled, 0 skipped" in screen
    labels = read_calibration(output).labels
    assert len(labels) == 3 and (labels[0]["query"], labels[0]["answer"]) == first
    assert first not in [a[:2] for a in user.asked]
    status, screen, user = label(tables, output, monkeypatch, script={1: "EOF"}, budget=5)  # end of input: saved
    assert status == 0 and len(read_calibration(output).labels) == 3 and "the same command resumes it" in screen


def test_a_session_of_other_tables_is_not_resumed(tables, tmp_path, decision_cli, monkeypatch):
    output = tmp_path / "calibration.json"
    session_path(output).write_text(json.dumps({"kind": "phrasezoo.match label session", "format_version": 1,
                                                "matcher": decision_cli.name, "labels": []}))  # fmt: skip
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)
    left, right = tables
    status = main(["label", "--left", str(left), "--right", str(right), "--left-column", "name", "--right-column",
                   "vendor", "--output", str(output), "--no-progress"])  # fmt: skip
    assert status == 2 and "is a session of other" in screen.getvalue() and "delete it" in screen.getvalue()


def test_the_pair_asked_is_chosen_as_the_study_simulated_it(tmp_path):
    """Rule 35 of docs/experiments/matching.md: the product asks the pairs the simulation asked, so it ends on the
    simulation's threshold and shift."""
    rng = np.random.default_rng(3)
    p = rng.beta(3, 1.5, size=400).astype(np.float32)
    truth = rng.random(400) < p**2  # the join is harder than its probabilities say
    queries = [f"q{i}" for i in range(400)]
    pool = AnswerPool(queries, [f"a{i}" for i in range(400)], p)
    session = LabelSession(tmp_path / "c.json", "m", hand_made_decision().to_dict(), pool, 0.9, 25, {})
    screen = io.StringIO()
    run_session(session, User(screen, {q: f"a{i}" if truth[i] else None for i, q in enumerate(queries)}), screen)
    cut, q = label_loop_shift(p.astype(np.float64), truth, 0.9, 25)
    calibration = read_calibration(tmp_path / "c.json")
    assert calibration.stored_cut(0.9) == pytest.approx(cut, rel=1e-5)
    np.testing.assert_allclose(calibration.apply(p), q, rtol=1e-5)
    assert calibration.shift < 0


#: a list whose rows name a few entities (the gold cluster of each row), for a session over a list's own pairs
LIST = {"The New York Times": 0, "NY Times": 0, "New York Times": 0, "Washington Post": 1,
        "Washington Post (newspaper)": 1, "Los Angeles Times": 2, "LA Times": 2, "Goldman Sachs": 3, "Goldman": 3,
        "JPMorgan Chase": 4, "JP Morgan": 4, "Morgan Stanley": 5, "apple pie": 6, "apple pies": 6,
        "banana bread": 7}  # fmt: skip


class ListUser:
    """Answers the list pair last printed on ``screen`` from :data:`LIST`'s clusters."""

    def __init__(self, screen: io.StringIO, script: dict[int, str] | None = None) -> None:
        self.screen, self.script, self.asked = screen, script or {}, []

    def readline(self) -> str:
        text = self.screen.getvalue()
        pair = (re.findall(r"name:  '(.*)'", text)[-1], re.findall(r"other: '(.*)'  \(score", text)[-1])
        reply = self.script.get(len(self.asked) + 1, "y" if LIST[pair[0]] == LIST[pair[1]] else "n")
        self.asked.append((*pair, reply))
        return reply + "\n"


def label_list(path: Path, output: Path, monkeypatch, budget: int = 6, extra=()) -> tuple[int, str, ListUser]:
    screen = io.StringIO()
    user = ListUser(screen)
    with monkeypatch.context() as terminal:
        terminal.setattr(sys, "stdout", screen)
        terminal.setattr(sys, "stderr", screen)
        terminal.setattr(sys, "stdin", user)
        status = main(["label", "--input", str(path), "--column", "name", "--budget", str(budget), "--output",
                       str(output), "--no-progress", *extra])  # fmt: skip
    return status, screen.getvalue(), user


def test_a_session_over_one_list_labels_its_pairs_once_in_either_order_for_dedupe(tmp_path, decision_cli,
                                                                                   monkeypatch):  # fmt: skip
    """Rule 46 of docs/experiments/matching.md: ``--input`` labels each distinct name's best other row, a pair once
    whichever row it came from, and writes a calibration that dedupe takes and a join refuses."""
    path, output = tmp_path / "list.csv", tmp_path / "list.json"
    pd.DataFrame({"name": list(LIST), "n": range(len(LIST))}).to_csv(path, index=False)
    status, screen, user = label_list(path, output, monkeypatch)
    assert status == 0, screen
    assert "distinct names have another row to compare" in screen and "match dedupe ... --threshold auto" in screen
    asked = [frozenset(a[:2]) for a in user.asked]
    assert len(asked) == 6 and len(set(asked)) == 6  # never one pair twice, in either order
    calibration = read_calibration(output)
    assert calibration.labels_of == "list" and calibration.of_list
    assert all(row["right"] == (LIST[row["query"]] == LIST[row["answer"]]) for row in calibration.labels)
    # the same command resumes it; a join's session file is not a list's
    status, screen, user = label_list(path, output, monkeypatch, budget=7)
    assert status == 0 and "resuming" in screen and len(read_calibration(output).labels) == 7
    assert frozenset(user.asked[0][:2]) not in asked
    found = dedupe(list(LIST), model=decision_cli, calibration=output)
    assert found.attrs["report"]["calibration"]["labels"] == 7 and found.attrs["report"]["scored_by"] == "join decision"
    with pytest.raises(CalibrationError, match="calibrates dedupe only"):
        join(list(LIST), ["NY Times"], model=decision_cli, calibration=output)
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)
    status = main(["join", "--left", str(path), "--right", str(path), "--left-column", "name", "--right-column",
                   "name", "--calibration", str(output), "--output", str(tmp_path / "j.csv"),
                   "--no-progress"])  # fmt: skip
    assert status == 2 and "calibrates dedupe only" in screen.getvalue()


def test_a_list_session_refuses_a_join_session_file_and_tables_of_both_kinds(tables, tmp_path, decision_cli,
                                                                             monkeypatch):  # fmt: skip
    path, output = tmp_path / "list.csv", tmp_path / "calibration.json"
    pd.DataFrame({"name": list(LIST)}).to_csv(path, index=False)
    status, screen, _ = label(tables, output, monkeypatch, budget=1)  # a join's session
    assert status == 0
    status, screen, _ = label_list(path, output, monkeypatch)
    assert status == 2 and "is a session of other inputs" in screen and "labels_of" in screen
    left, _ = tables
    status, screen, _ = label_list(path, output, monkeypatch, extra=["--left", str(left)])
    assert status == 2 and "not both: drop --left or --input" in screen
    pd.DataFrame({"name": ["one name", "one name"]}).to_csv(path, index=False)
    status, screen, _ = label_list(path, tmp_path / "other.json", monkeypatch)
    assert status == 2 and "The list has 1 distinct row(s)" in screen


def test_a_large_table_is_labelled_from_a_seeded_sample_of_its_rows(tables, tmp_path, decision_cli, monkeypatch):
    """``--sample``: the pool is a seeded sample of the right rows (a list's distinct names), so a large table is not
    searched whole before the first question; the same sample again on resume."""
    output = tmp_path / "calibration.json"
    screen = io.StringIO()
    user = User(screen, GOLD)
    left, right = tables
    argv = ["label", "--left", str(left), "--right", str(right), "--left-column", "name", "--right-column", "vendor",
            "--budget", "3", "--sample", "4", "--output", str(output), "--no-progress"]  # fmt: skip
    with monkeypatch.context() as terminal:
        terminal.setattr(sys, "stdout", screen)
        terminal.setattr(sys, "stdin", user)
        assert main(argv) == 0
    assert "a seeded sample of 4 of the 10 right rows" in screen.getvalue()
    from phrasezoo.match.engine.labelling import sampled_rows

    sample = {RIGHT[i] for i in sampled_rows(len(RIGHT), 4)}
    assert {q for q, *_ in user.asked} <= sample and len(user.asked) == 3
    path = tmp_path / "list.csv"
    pd.DataFrame({"name": list(LIST)}).to_csv(path, index=False)
    status, screen, user = label_list(path, tmp_path / "list.json", monkeypatch, budget=2, extra=["--sample", "5"])
    assert status == 0 and "a seeded sample of 5 of the 15 distinct names" in screen
    names = {list(LIST)[i] for i in sampled_rows(len(LIST), 5)}
    assert all(a[0] in names for a in user.asked)

"""The learned combinations as data files: the shipped numbers are those of the Python literal they replace, the
reader refuses a file it cannot use with a message that names the file and the fix, and the writer round-trips."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from phrasezoo.match.model.combinations import Combination
from phrasezoo.match.model.learned import (
    FORMAT_VERSION,
    LEARNED_FILE,
    LearnedFileError,
    default_combination,
    read_learned,
    shipped_learned,
    store_learned,
)

SRC = Path(__file__).resolve().parents[3] / "src" / "phrasezoo"
#: sha256 of ``json.dumps(LEARNED, sort_keys=True)`` for the ``LEARNED`` literal the JSON file replaced (the generated
#: block of match/combinations.py at 8ac19a8): floats print as their shortest repr, so an equal digest means every
#: weight, threshold and meta value is the same float, int and string (a method's own file: tests/methods/<name>/)
SHIPPED_DIGEST = "cec45256ec2ca7c22d411621486c4bd3793935e3036a031f9a7f29fc0ef2c8a3"


def digest(combinations: dict) -> str:
    return hashlib.sha256(json.dumps(combinations, sort_keys=True).encode()).hexdigest()


def test_the_data_file_holds_the_numbers_of_the_literal_it_replaces():
    shipped = shipped_learned()
    # round 9 added a decision to the default's entry (open_world.py fit); everything the literal held is unchanged
    without_decisions = {key: {k: v for k, v in entry.items() if k != "decision"} for key, entry in shipped.items()}
    assert digest(without_decisions) == SHIPPED_DIGEST
    assert shipped["baseline:minilm-l6@onnx-int8"]["decision"]["inputs"][0] == "score"
    # a few of the literal's numbers, spelled out
    torch_path, default = shipped["baseline:minilm-l6"], shipped["baseline:minilm-l6@onnx-int8"]
    assert torch_path["weights"][0] == 1.3590645310244618 and torch_path["weights"][-1] == 1.7609528438220727
    assert default["weights"][0] == 1.3775816019408826 and default["probability"][2] == -3.0831288510090205
    assert default["calibration"][0] == [0.5, 0.013399, 0.821] and default["calibration"][-1] == [
        0.99,
        0.999925,
        0.1216,
    ]
    assert shipped["baseline:nomic-v1.5"]["probability"] == [
        0.6688076452141393,
        0.6265188257139457,
        -3.5058204032990283,
    ]
    assert default_combination().to_dict() == default  # what the default matcher scores with


def test_no_python_file_in_the_package_holds_generated_numbers():
    found = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if "# --- generated" in (text := path.read_text()) or "LEARNED = {" in text
    ]
    assert not found


def write(path: Path, document: dict) -> Path:
    path.write_text(json.dumps(document))
    return path


def test_a_file_of_another_format_version_is_refused_with_its_name_and_the_fix(tmp_path):
    path = write(tmp_path / "learned.json", {"format_version": FORMAT_VERSION + 1, "combinations": {}})
    with pytest.raises(LearnedFileError, match=r"learned\.json: format_version 2, but this phrasezoo reads version 1"):
        read_learned(path)
    with pytest.raises(LearnedFileError, match="upgrade it"):
        read_learned(path)


def test_an_unknown_feature_is_refused_with_the_file_the_entry_and_the_fix(tmp_path):
    entry = {**shipped_learned()["baseline:minilm-l6"], "features": ["emb", "colour"], "weights": [1.0, 1.0]}
    path = write(tmp_path / "matcher.json", {"format_version": FORMAT_VERSION, "combinations": {"some-export": entry}})
    with pytest.raises(LearnedFileError) as err:
        read_learned(path)
    message = str(err.value)
    assert str(path) in message and "'some-export'" in message and "['colour']" in message
    assert "names_dev.py fit" in message


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("{not json", "cannot read"),
        ('{"format_version": 1}', "no 'combinations' mapping"),
        ('{"format_version": 1, "combinations": {"x": {"features": ["emb"], "weights": [1, 2]}}}', "is not valid"),
    ],
)
def test_a_broken_file_is_refused_with_its_name(tmp_path, text, what):
    path = tmp_path / "learned.json"
    path.write_text(text)
    with pytest.raises(LearnedFileError, match=what) as err:
        read_learned(path)
    assert str(path) in str(err.value)


def test_store_learned_sets_one_entry_and_keeps_the_others(tmp_path):
    path = tmp_path / "matcher.json"
    first = Combination(["emb", "char"], [0.5, 0.25], link="identity", meta={"encoder": "a"})
    store_learned("a", first, path)
    second = default_combination()
    store_learned("b", second, path)
    store_learned("a", Combination(["emb"], [1.0], meta={"encoder": "a2"}), path)
    stored = read_learned(path)
    assert list(stored) == ["a", "b"] and stored["a"]["meta"] == {"encoder": "a2"}
    assert stored["b"] == second.to_dict()  # floats round-trip exactly
    document = json.loads(path.read_text())
    assert document["format_version"] == FORMAT_VERSION and document["about"]


def test_the_shipped_file_is_the_one_beside_the_loader():
    assert LEARNED_FILE == SRC / "match" / "model" / "learned.json" and LEARNED_FILE.is_file()

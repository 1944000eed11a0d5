"""Property tests of the ``phrasezoo`` subcommands that read a user's file (issue 34): results and dev-results JSON
(``report``, ``dev-eval --table``, ``export --results``), hub-config YAML and ``--set`` overrides (``train``,
``export``), corpus text files (``topics mine``, ``topics pntm``) and saved topic miners (``topics show``).

Whatever the file holds (arbitrary JSON/YAML, wrong field types, None/NaN, duplicate keys, another encoding, random
bytes), the command either does its documented job (a table row per file, every document line read) or exits with
status 2 and one ``error:`` line that names the file (and the line, entry or key when there is one). It never raises.
``phrasezoo match`` has its own tests (tests/match/).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from phrasezoo.cli import main
from phrasezoo.core.recipes import RECIPES_DIR, list_recipes
from phrasezoo.resources import iter_corpus
from tests.properties import SETTINGS, cells, unicode_text

RECIPE_NAME = list_recipes()[0]  # any published recipe: its model folder does not exist in the tests' folder
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
TASKS = ["turney", "bird", "autofj", "conll2003", "my_task"]
result_entries = st.fixed_dictionaries(
    {
        "task": st.one_of(st.sampled_from(TASKS), json_values),
        "metric": st.one_of(st.sampled_from(["accuracy", "pearson", "nmi"]), json_values),
        "value": st.one_of(st.floats(0, 1), st.none(), st.just(math.nan), json_values),
        "n": st.one_of(st.integers(0, 10_000), json_values),
        "seconds": st.one_of(st.floats(0, 100), json_values),
        "notes": st.one_of(st.text(max_size=20), json_values),
    }
)
results_docs = st.fixed_dictionaries(
    {
        "model": st.one_of(unicode_text, json_values),
        "model_revision": st.one_of(st.none(), st.text(max_size=10), json_values),
        "created": st.one_of(st.just("2026-11-27T00:00:00+00:00"), json_values),
        "results": st.one_of(st.lists(result_entries, max_size=4), json_values),
    }
)


def _encoded(text: str, data) -> bytes:
    """``text`` as UTF-8 (mostly), or in an encoding a user's tool may have chosen."""
    encoding = data.draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-8-sig", "latin-1", "utf-16", "cp1252"]))
    return text.encode(encoding, errors="replace")


@st.composite
def json_files(draw, documents) -> bytes:
    """The bytes of a JSON file: a document (maybe with a key repeated), any JSON value, or random bytes."""
    kind = draw(st.sampled_from(["document", "document", "document", "duplicate", "value", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=60))
    document = draw(documents if kind != "value" else json_values)
    text = json.dumps(document, ensure_ascii=draw(st.booleans()))
    if kind == "duplicate" and text.startswith("{") and len(text) > 2:
        text = '{"model": "again", ' + text[1:]
    return _encoded(text, draw(st.data()))


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``phrasezoo ARGV`` in this process: (exit status, stdout, stderr); an exception fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit_:  # argparse
            status = exit_.code
    return status, out.getvalue(), err.getvalue()


def assert_names_file(status: int, err: str, path: Path) -> None:
    assert status == 2, err
    assert err.startswith("error:") and str(path) in err, err
    assert "Traceback" not in err


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A folder for the generated files; every command runs once first, so that the examples' deadline does not
    count the first import of its modules."""
    folder = tmp_path_factory.mktemp("cli-inputs")
    missing = str(folder / "missing.json")
    valid = folder / "valid.json"
    valid.write_text(json.dumps({"model": "m", "model_revision": None, "created": "2026", "results": []}))
    for argv in (
        ["report", missing],
        ["dev-eval", "--table", missing],
        ["export", RECIPE_NAME, "--results", str(valid)],
        ["export", missing],
        ["topics", "show", missing],
    ):
        with contextlib.chdir(folder):  # outputs/<recipe>/ of the checkout is never touched
            run_cli(argv)
    from phrasezoo.evaluation import report, results  # noqa: F401 - imported lazily by the commands
    from phrasezoo.evaluation.dev.suite import format_dev_table  # noqa: F401

    return folder


# ----------------------------------------------------------------------------------------------- results files
ODD_NAMES = json.dumps(
    {"model": "a\nmodel | name", "model_revision": None, "created": "2026", "results": [
        {"task": "my\ntask", "metric": "m|n", "value": 0.5, "n": 1, "seconds": 1.0, "notes": ""}]}
).encode()  # fmt: skip


@SETTINGS
@given(contents=st.lists(json_files(results_docs), min_size=1, max_size=3))
@example(contents=[ODD_NAMES, ODD_NAMES])
def test_report_gives_one_row_per_results_file_or_names_the_bad_file(workdir, contents):
    paths = []
    for i, content in enumerate(contents):
        paths.append(workdir / f"results-{i}.json")
        paths[-1].write_bytes(content)
    status, out, err = run_cli(["report", *map(str, paths), "--no-reference"])
    if status == 0:
        rows = [line for line in out.splitlines() if line.startswith("| ")][1:]  # minus the header
        assert len(rows) == len(paths), f"{len(paths)} files in, {len(rows)} rows out:\n{out}"
        return
    assert status == 2 and err.startswith("error:") and any(str(p) in err for p in paths), err


@SETTINGS
@given(content=json_files(results_docs))
def test_export_reads_the_results_file_or_names_it(workdir, content, monkeypatch):
    """``export --results`` reads the file before it looks for the model folder."""
    monkeypatch.chdir(workdir)  # outputs/<recipe>/ does not exist here: the card of a real export is never rewritten
    path = workdir / "card-results.json"
    path.write_bytes(content)
    status, _, err = run_cli(["export", RECIPE_NAME, "--results", str(path)])
    assert status == 2 and err.startswith("error:"), err
    assert str(path) in err or "holds no exported model" in err, err


dev_docs = st.fixed_dictionaries(
    {
        "suite": st.one_of(st.just("phrasezoo-dev"), json_values),
        "model": st.one_of(st.text(max_size=10), json_values),
        "tasks": st.one_of(
            st.dictionaries(
                st.one_of(st.sampled_from(["dev_fuzzy", "dev_topics", "dev_wordsim"]), st.text(max_size=6)),
                st.fixed_dictionaries({"score": st.one_of(st.floats(0, 1), st.none(), json_values)}),
                max_size=3,
            ),
            json_values,
        ),
        "dev_avg": st.one_of(st.floats(0, 1), st.none(), json_values),
    }
)


@SETTINGS
@given(contents=st.lists(json_files(dev_docs), min_size=1, max_size=3))
@example(contents=[json.dumps({"suite": "phrasezoo-dev", "model": "a\nb | c", "tasks": {}, "dev_avg": None}).encode()])
def test_dev_table_gives_one_row_per_file_or_names_the_bad_file(workdir, contents):
    paths = []
    for i, content in enumerate(contents):
        paths.append(workdir / f"dev-{i}.json")
        paths[-1].write_bytes(content)
    status, out, err = run_cli(["dev-eval", "--table", *map(str, paths)])
    if status == 0:
        rows = [line for line in out.splitlines() if line.startswith("| ")][1:]
        assert len(rows) == len(paths), out
        return
    assert status == 2 and err.startswith("error:") and any(str(p) in err for p in paths), err


# ------------------------------------------------------------------------------------------------- hub configs
RECIPE = yaml.safe_load((RECIPES_DIR / f"{RECIPE_NAME}.yaml").read_text())
yaml_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True), st.text(max_size=8)
)


@st.composite
def recipe_files(draw) -> bytes:
    """A real recipe with a few keys changed, removed or added (at any depth), arbitrary YAML, or random bytes."""
    kind = draw(st.sampled_from(["mutated", "mutated", "mutated", "yaml", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=80))
    if kind == "yaml":
        return _encoded(yaml.safe_dump(draw(json_values)), draw(st.data()))
    recipe = json.loads(json.dumps(RECIPE))
    for _ in range(draw(st.integers(1, 3))):
        node = recipe
        while isinstance(node, dict) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node)))
            if not isinstance(node[key], dict):
                break
            node = node[key]
        if not isinstance(node, dict):
            continue
        key = draw(st.one_of(st.sampled_from(sorted(node) or ["name"]), st.text(max_size=6)))
        action = draw(st.sampled_from(["set", "set", "delete"]))
        if action == "delete":
            node.pop(key, None)
        else:
            node[key] = draw(st.one_of(yaml_scalars, json_values))
    return _encoded(yaml.safe_dump(recipe, allow_unicode=True), draw(st.data()))


@SETTINGS
@given(content=recipe_files())
def test_export_reads_any_recipe_file_or_names_it(workdir, content, monkeypatch):
    monkeypatch.chdir(workdir)  # outputs/<name>/ does not exist here: a good recipe ends at "no exported model"
    path = workdir / "recipe.yaml"
    path.write_bytes(content)
    status, _, err = run_cli(["export", str(path)])
    assert status == 2 and err.startswith("error:") and "Traceback" not in err, err
    assert str(path) in err or "holds no exported model" in err, err


overrides = st.one_of(
    st.builds(
        lambda key, value: f"{key}={value}",
        st.one_of(
            st.sampled_from(["training.max_steps", "training.learning_rate", "model", "name", "training", "a.b.c"]),
            st.text(max_size=10),
        ),
        st.one_of(yaml_scalars.map(str), st.sampled_from(["[1, 2", "{a: 1}", "", "null", "abc: [", "- x"])),
    ),
    st.text(max_size=12),
)


@SETTINGS
@given(content=recipe_files(), sets=st.lists(overrides, max_size=3))
def test_train_checks_the_recipe_and_overrides_before_training(workdir, content, sets, monkeypatch):
    """``phrasezoo train`` validates the recipe (and its ``--set`` overrides) the way training's first step does; a
    recipe that passes reaches training (stubbed here) with every override applied."""
    from phrasezoo import train
    from phrasezoo.zoo.registry import validate_recipe

    reached = []
    monkeypatch.setattr(train, "train_and_export", lambda cfg, *_, **__: reached.append(validate_recipe(cfg)))
    path = workdir / "train-recipe.yaml"
    path.write_bytes(content)
    status, _, err = run_cli(["train", str(path), *[f"--set={s}" for s in sets]])
    if status == 0:
        assert len(reached) == 1
        return
    assert status == 2 and err.startswith("error:") and "Traceback" not in err, err
    assert str(path) in err or any(s.split("=", 1)[0] in err for s in sets) or "Override" in err, err


# --------------------------------------------------------------------------------------------- corpus files
corpus_lines = st.lists(st.one_of(st.text(max_size=40), st.sampled_from(["", "  ", "\t"]), cells.map(str)), max_size=8)


@SETTINGS
@given(lines=corpus_lines, newline=st.sampled_from(["\n", "\r\n", "\r"]), bom=st.booleans(), data=st.data())
def test_a_corpus_file_gives_every_non_blank_line_as_a_document(workdir, lines, newline, bom, data):
    """Rows in = documents out + blank lines skipped (documented); a line that is not UTF-8 is named."""
    lines = [line.replace("\r", " ").replace("\n", " ").replace("\x0b", " ") for line in lines]
    text = newline.join(lines)
    encoding = data.draw(st.sampled_from(["utf-8", "utf-8", "latin-1", "utf-16"]))
    raw = (b"\xef\xbb\xbf" if bom and encoding == "utf-8" else b"") + text.encode(encoding, errors="replace")
    path = workdir / "corpus.txt"
    path.write_bytes(raw)
    try:
        documents = list(iter_corpus(str(path)))
    except ValueError as error:
        assert encoding != "utf-8" and str(path) in str(error) and "line " in str(error), str(error)
        return
    expected = [line.strip() for line in text.encode(encoding, errors="replace").decode(encoding).split(newline)]
    assert documents == [line for line in expected if line], (documents, expected)


@pytest.mark.parametrize("command", ["mine", "pntm"])
@pytest.mark.parametrize("content", [b"caf\xe9 au lait\n", b"\xff\xfeb\x00a\x00d\x00", b"", b"\n \n\t\n"])
def test_topic_commands_name_a_corpus_file_they_cannot_use(workdir, monkeypatch, command, content):
    """Checked before any model is loaded or any text parsed: a non-UTF-8 line, or no document at all."""
    from phrasezoo.zoo.registry import get_method, list_methods

    for name in list_methods():  # every method's `topics` command module: none may load a model first
        method = get_method(name)
        for reference in method.topic_commands:
            module = method.load(reference.partition(":")[0])
            if hasattr(module, "load_topic_model"):
                monkeypatch.setattr(module, "load_topic_model", lambda spec: pytest.fail("the model was loaded first"))
    path = workdir / f"corpus-{command}.txt"
    path.write_bytes(content)
    argv = ["topics", "mine", "--model", "unused", "--corpus", str(path), "--no-plot"]
    if command == "pntm":
        argv = ["topics", "pntm", "--model", "unused", "--corpus", str(path), "--no-progress"]
    status, _, err = run_cli(argv)
    assert_names_file(status, err, path)


@SETTINGS
@given(state=st.one_of(json_values, st.binary(max_size=40)), centroids=st.binary(max_size=40))
def test_topics_show_names_a_damaged_miner_folder(workdir, state, centroids):
    folder = workdir / "miner"
    folder.mkdir(exist_ok=True)
    (folder / "topic_miner.json").write_bytes(state if isinstance(state, bytes) else json.dumps(state).encode())
    (folder / "centroids.npy").write_bytes(centroids)
    status, _, err = run_cli(["topics", "show", str(folder)])
    assert_names_file(status, err, folder)

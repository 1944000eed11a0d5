"""A method's name appears only in its own folders, its recipes and its tests.

Scanned: the code of src/phrasezoo (outside models/<m>/ and methods/<m>/), tests/ (outside tests/methods/<m>/ and
tests/experiments/<m>/), experiments/ (outside the method's own studies, ``experiments/<m>/``), benchmarks/ (outside
the method's own speed benchmarks, ``benchmarks/speed_<m>*.py``) and scripts/. Comments,
docstrings and prose strings (help texts and messages: strings with a space) are not scanned: citing a paper ("CCL,
UCTopic section 3.2") or naming an example recipe in ``--help`` is documentation, not dispatch. Identifiers and
one-word strings (``get_method("pearl")``, ``groups = ("uctopic",)``, ``"pearl-mini"``) are. Names match case-insensitively with ``_``/``-``/space variants ("phrase_bert",
"Phrase-BERT"), as whole words where ``_`` also separates words (``PEARL_TASKS`` counts, ``pearls`` does not).
"""

from __future__ import annotations

import fnmatch
import io
import re
import tokenize
from pathlib import Path

import pytest

from phrasezoo.zoo.registry import list_methods

REPO_ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("src/phrasezoo", "tests", "experiments", "benchmarks", "scripts")

#: (path pattern, method or "*") -> why the name may appear there. Keep this list short (at most ten entries, checked
#: below); each entry needs a reason.
ALLOWED = {
    ("tests/test_method_names.py", "*"): "this test",
    ("scripts/run_main.sh", "pearl"): "the README's main command trains the pearl-mini recipe",
    ("src/phrasezoo/evaluation/*", "pearl"): "the PEARL benchmark suite (Hub dataset Lihuchen/pearl_benchmark, task "
    "group `pearl`, the 'PEARL avg' columns) is named after the paper that released it, not the method",
    ("tests/evaluation/*", "pearl"): "the same: tests of the PEARL benchmark suite, its report and model-index",
    ("tests/spaces/test_*.py", "*"): "each Space demos one method and is tested on that method's tiny model",
    ("tests/integrations/*.py", "*"): "integration adapters are tested per method (sentence-transformers, spaCy)",
    ("tests/training/*.py", "pearl"): "the trainer is tested on a real task, PEARL's, over a hand-made phrase table",
    ("tests/test_pipeline.py", "pearl"): "the main job end to end on a tiny PEARL recipe",
    (
        "benchmarks/speed_encode.py",
        "pearl",
    ): "the zoo's encode-speed benchmark; README and results/speed/speed-encode.json name this path",
    ("benchmarks/space_load.py", "*"): "load test of every Space; each Space demos one method and serves its recipe's "
    "model",
}


def test_the_allow_list_stays_short():
    assert len(ALLOWED) <= 10, "more than ten exceptions: move the code home instead of allowing its name elsewhere"


def _patterns() -> dict[str, re.Pattern]:
    out = {}
    for name in list_methods():
        words = re.split(r"[_\- ]+", name)
        body = r"[_\- ]?".join(re.escape(w) for w in words)
        out[name] = re.compile(rf"(?<![a-z0-9]){body}(?![a-z0-9])", re.IGNORECASE)
    return out


def _own(path: str, method: str) -> bool:
    return any(
        path.startswith(prefix)
        for prefix in (
            f"src/phrasezoo/models/{method}/",
            f"src/phrasezoo/methods/{method}/",
            f"tests/methods/{method}/",
            f"experiments/{method}/",
            f"tests/experiments/{method}/",
            f"benchmarks/speed_{method}",
        )
    )


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of code without comments and docstrings (shell scripts: without comments)."""
    text = path.read_text(errors="replace")
    if path.suffix != ".py":
        return [(n, line.split("#", 1)[0]) for n, line in enumerate(text.splitlines(), 1)]
    out = []
    previous = tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        kind = token.type
        if kind in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            if kind in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                previous = kind
            continue
        docstring = kind == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
        previous = kind
        prose = kind == tokenize.STRING and any(c.isspace() for c in token.string)
        fstring_prose = kind in _FSTRING_PARTS and any(c.isspace() for c in token.string)
        if not (docstring or prose or fstring_prose):
            out.append((token.start[0], token.string))
    return out


_FSTRING_PARTS = {getattr(tokenize, name) for name in ("FSTRING_MIDDLE",) if hasattr(tokenize, name)}


def _files() -> list[Path]:
    files = []
    for root in SCANNED:
        base = REPO_ROOT / root
        files += [
            p for p in base.rglob("*") if p.is_file() and p.suffix in (".py", ".sh") and "__pycache__" not in p.parts
        ]
    return sorted(files)


def find_violations() -> list[str]:
    patterns = _patterns()
    found = []
    for path in _files():
        rel = path.relative_to(REPO_ROOT).as_posix()
        for method, pattern in patterns.items():
            if _own(rel, method) or any(fnmatch.fnmatch(rel, glob) and who in ("*", method) for glob, who in ALLOWED):
                continue
            for line, text in _code_lines(path):
                if pattern.search(text):
                    found.append(f"{rel}:{line}: {method}: {text.strip()[:90]}")
    return sorted(set(found))


def test_method_names_stay_in_their_folders():
    violations = find_violations()
    assert not violations, (
        "a method's name outside its own folders (move the code into methods/<m>/ or models/<m>/, declare it on the "
        "Method, or add an exception with a reason to ALLOWED):\n" + "\n".join(violations)
    )


@pytest.mark.parametrize("text", ["PEARL_TASKS = 1", "x = 'phrase-bert-mini'", "UCTopic()", "Phrase BERT"])
def test_patterns_catch_the_spellings(text):
    assert any(p.search(text) for p in _patterns().values())


@pytest.mark.parametrize("text", ["pearls", "uctopics_x", "phrasebertx"])
def test_patterns_need_whole_words(text):
    assert not any(p.search(text) for p in _patterns().values())

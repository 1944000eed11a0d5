"""Copies between the self-contained model files are marked, and marked copies stay copies (the transformers
``check_copies`` habit).

Model folders may not import each other, so small helpers are repeated. A repeated definition carries the comment
``# Copied from phrasezoo.models.<m>.modeling_<m>.<name>`` (``<name>`` may be ``Class.method``), optionally followed
by ``with A->B`` replacements (``with PhraseBert->Pearl``). This test fails when the copy no longer equals its
source after the replacements (compared as normalised syntax: formatting, comments and docstrings do not count, so a
copy may say what it means for its model), and when 8 or more lines of code repeat between two model files outside
marked copies (imports, docstrings and signatures do not count; a method's name counts as any other's). A definition
that repeats another but differs in substance says so instead: ``# Adapted from <dotted source> (<how it differs>)``.
"""

from __future__ import annotations

import ast
import copy
import re
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
MODEL_FILES = sorted((SRC / "phrasezoo" / "models").glob("*/*.py"))
MARKER = re.compile(r"^\s*# Copied from (phrasezoo\.models\.[\w.]+)(?: with (.+))?$")


def split_target(dotted: str) -> tuple[str, str]:
    """``phrasezoo.models.a.modeling_a.Class.method`` -> (module, ``Class.method``): the longest module prefix."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        if (SRC / ("/".join(parts[:cut]) + ".py")).exists():
            return ".".join(parts[:cut]), ".".join(parts[cut:])
    return dotted, ""


def definitions(tree: ast.AST) -> dict[str, ast.AST]:
    """Top-level functions/classes and class methods by name (``f``, ``Class``, ``Class.method``)."""
    out: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        out[f"{node.name}.{item.name}"] = item
    return out


def without_docstrings(node: ast.AST) -> ast.AST:
    node = copy.deepcopy(node)
    for item in ast.walk(node):
        body = getattr(item, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]):
            item.body = body[1:] or [ast.Pass()]
    return node


def _is_docstring(statement: ast.AST) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def normalised(node: ast.AST, replacements: list[tuple[str, str]] = ()) -> str:
    text = ast.unparse(without_docstrings(node))
    for old, new in replacements:
        text = text.replace(old, new)
    return ast.unparse(ast.parse(text))


def marked_copies() -> list[tuple[Path, int, str, str, list[tuple[str, str]]]]:
    found = []
    for path in MODEL_FILES:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = MARKER.match(line)
            if match:
                target, spec = match.groups()
                module, name = split_target(target)
                pairs = [tuple(p.strip() for p in part.split("->")) for part in (spec or "").split(",") if "->" in part]
                found.append((path, number, module, name, pairs))
    return found


COPIES = marked_copies()


def test_there_are_marked_copies():
    assert len(COPIES) >= 8


@pytest.mark.parametrize(
    ("path", "line", "module", "name", "pairs"), COPIES, ids=[f"{p.parent.name}:{n}" for p, n, *_ in COPIES]
)
def test_copy_matches_its_source(path, line, module, name, pairs):
    source_file = SRC / (module.replace(".", "/") + ".py")
    assert source_file.exists(), f"{path.name}:{line}: no source module {module}"
    source = definitions(ast.parse(source_file.read_text())).get(name)
    assert source is not None, f"{path.name}:{line}: {module} has no {name}"
    tree = ast.parse(path.read_text())
    copy = next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and min([node.lineno, *(d.lineno for d in node.decorator_list)]) in (line + 1,)
        ),
        None,
    )
    assert copy is not None, f"{path.name}:{line}: the marker must sit right above the copied definition"
    assert normalised(copy) == normalised(source, pairs), (
        f"{path.relative_to(SRC)}:{line} drifted from {module}.{name}; make them equal again (or drop the marker "
        "if the difference is wanted)"
    )


# ------------------------------------------------------------------------------------------ unmarked copies
#: shared code lines that make an unmarked copy (what ``duplicates`` and transformers' ``check_copies`` would flag)
MIN_COPY_LINES = 8
#: a near-copy kept on purpose says so above its definition: ``# Adapted from <dotted source> (<how it differs>)``
ADAPTED = re.compile(r"^\s*# Adapted from phrasezoo\.models\.[\w.]+ \(.+\)$")
_NAME_WORDS = re.compile(
    "|".join(r"_?".join(map(re.escape, p.name.split("_"))) for p in sorted((SRC / "phrasezoo" / "models").iterdir())
             if p.is_dir() and p.name != "__pycache__"),
    re.IGNORECASE,
)  # fmt: skip


def code_lines(path: Path) -> list[tuple[int, str]]:
    """(line, text) of the file's code that a copy is made of: no imports, docstrings, signatures, comments, marked
    copies or declared adaptations; a model's name reads as ``<M>`` (a copy with ``PhraseBert->Pearl`` is a copy)."""
    text = path.read_text()
    lines = text.splitlines()
    skip: set[int] = set()
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            skip.update(range(node.lineno, node.end_lineno + 1))
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]):
            skip.update(range(body[0].lineno, body[0].end_lineno + 1))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            skip.update(range(first, node.body[0].lineno))  # decorators and signature: the interface, not a copy
            if first >= 2 and (MARKER.match(lines[first - 2]) or ADAPTED.match(lines[first - 2])):
                skip.update(range(first, node.end_lineno + 1))
    return [
        (number, _NAME_WORDS.sub("<M>", line.strip()))
        for number, line in enumerate(lines, 1)
        if line.strip() and not line.strip().startswith("#") and number not in skip
    ]


def unmarked_copies(files: list[Path] = MODEL_FILES) -> list[str]:
    """``a.py:12 = b.py:40`` for every run of ``MIN_COPY_LINES`` code lines that two model files share unmarked."""
    windows: dict[tuple[str, ...], list[tuple[Path, int]]] = defaultdict(list)
    for path in files:
        lines = code_lines(path)
        for i in range(len(lines) - MIN_COPY_LINES + 1):
            windows[tuple(text for _, text in lines[i : i + MIN_COPY_LINES])].append((path, lines[i][0]))
    found = set()
    for places in windows.values():
        for i, (a, line_a) in enumerate(places):
            for b, line_b in places[i + 1 :]:
                if a != b:
                    found.add(f"{a.parent.name}/{a.name}:{line_a} = {b.parent.name}/{b.name}:{line_b}")
    return sorted(found)


def test_no_unmarked_copies_between_model_files():
    found = unmarked_copies()
    assert not found, (
        f"{MIN_COPY_LINES}+ code lines repeated between model files without a '# Copied from ...' marker (first line "
        "of each shared run): mark the repeated definition as a copy of its source, or share less:\n" + "\n".join(found)
    )


def test_the_copy_check_finds_a_new_unmarked_copy(tmp_path):
    """A helper pasted from one model file into another, unmarked, is found; the same paste marked is not."""
    _, _, module, name, _ = next(c for c in COPIES if "." not in c[3])  # a module-level helper that is copied today
    source = SRC / (module.replace(".", "/") + ".py")
    helper = ast.get_source_segment(source.read_text(), definitions(ast.parse(source.read_text()))[name])
    pasted = tmp_path / "other" / "modeling_other.py"
    pasted.parent.mkdir()
    pasted.write_text(f"def unrelated():\n    return 1\n\n\n{helper}\n")
    assert any("modeling_other.py" in row for row in unmarked_copies([source, pasted]))
    for marker in (f"# Copied from {module}.{name}", f"# Adapted from {module}.{name} (for a test)"):
        pasted.write_text(f"def unrelated():\n    return 1\n\n\n{marker}\n{helper}\n")
        assert not unmarked_copies([source, pasted])

"""Marked copies between the self-contained model files stay copies (the transformers ``check_copies`` habit).

Model folders may not import each other, so small helpers are repeated. A repeated definition carries the comment
``# Copied from phrasezoo.models.<m>.modeling_<m>.<name>`` (``<name>`` may be ``Class.method``), optionally followed
by ``with A->B`` replacements (``with PhraseBert->Pearl``). This test fails when the copy no longer equals its
source after the replacements (compared as normalised syntax: formatting and comments do not count).
"""

from __future__ import annotations

import ast
import re
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


def normalised(node: ast.AST, replacements: list[tuple[str, str]] = ()) -> str:
    text = ast.unparse(node)
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

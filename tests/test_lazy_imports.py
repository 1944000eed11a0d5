"""Imports inside functions only where they keep a heavy or optional dependency off an import path, each saying so.

An import inside a function hides a module's dependencies from its reader and from the import ladder's picture; it
pays only where importing at the top would load something heavy (torch, transformers, spaCy, Spark...) or optional
onto a light path (``phrasezoo --help``, ``import phrasezoo.match``, the registry's scan of the methods). So each one
carries its reason in a ``# lazy:`` comment on its line (or the line above), and there are at most
:data:`MAX_LAZY` of them in the package (issue 63: 427 before the house's third round).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "src" / "phrasezoo"
MAX_LAZY = 150
MARK = "# lazy:"


def function_level_imports(path: Path) -> list[tuple[int, int]]:
    """``(first line, last line)`` of every import inside a function of ``path``."""
    found = []

    def visit(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and inside:
                found.append((child.lineno, child.end_lineno or child.lineno))
            visit(child, inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(path.read_text(encoding="utf8")), False)
    return found


def has_reason(lines: list[str], first: int, last: int) -> bool:
    """A ``# lazy:`` comment on one of the import's lines or on the comment line right above it."""
    span = lines[first - 1 : last]
    above = lines[first - 2].strip() if first >= 2 else ""
    return any(MARK in line for line in span) or above.startswith(MARK)


def all_lazy_imports() -> list[tuple[str, int, bool]]:
    out = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        lines = path.read_text(encoding="utf8").splitlines()
        for first, last in function_level_imports(path):
            out.append((path.relative_to(PACKAGE_DIR).as_posix(), first, has_reason(lines, first, last)))
    return out


def test_every_import_inside_a_function_says_why():
    missing = [f"src/phrasezoo/{path}:{line}" for path, line, ok in all_lazy_imports() if not ok]
    assert not missing, (
        "imports inside functions without a '# lazy: <what it keeps off which path>' reason (move them to the "
        "module's top unless they keep a heavy or optional dependency off a light path):\n" + "\n".join(missing)
    )


def test_at_most_150_imports_inside_functions():
    found = all_lazy_imports()
    assert len(found) <= MAX_LAZY, f"{len(found)} imports inside functions (at most {MAX_LAZY}); move some to the top."


def test_the_check_sees_imports_in_nested_functions_and_reasons_above(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "import os\n"
        "def f():\n"
        "    import json  # lazy: a reason\n"
        "    def g():\n"
        "        # lazy: the reason above\n"
        "        from collections import (\n"
        "            OrderedDict,\n"
        "        )\n"
        "    import sys\n"
    )
    lines = source.read_text().splitlines()
    found = function_level_imports(source)
    assert found == [(3, 3), (6, 8), (9, 9)]
    assert [has_reason(lines, a, b) for a, b in found] == [True, True, False]

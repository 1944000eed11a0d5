"""No function in ``src/phrasezoo`` is over 80 lines (issue 45): a longer one does several jobs, and each job wants a
helper with a name and a docstring of its own. The count is the definition's lines, decorators left out, docstring,
comments and blank lines included (``end_lineno - lineno + 1`` of the ``def``)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "src" / "phrasezoo"
MAX_LINES = 80
#: Functions (``path:qualname``) left out of the check for now, each with its reason: in a JSON file, since one of a
#: method's own functions names the method, which generic test code may not (tests/test_method_names.py).
EXEMPT_FUNCTIONS = json.loads((Path(__file__).with_name("function_length_exemptions.json")).read_text())["functions"]


def long_functions(path: Path, limit: int = MAX_LINES) -> list[tuple[str, int, int]]:
    """``(qualname, first line, lines)`` of the functions (methods and nested ones too) of ``path`` over ``limit``."""
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lines = child.end_lineno - child.lineno + 1
                    if lines > limit:
                        found.append((name, child.lineno, lines))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf8")), "")
    return found


def test_no_function_over_80_lines():
    offenders = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        relative = path.relative_to(PACKAGE_DIR).as_posix()
        for name, line, lines in long_functions(path):
            if f"{relative}:{name}" not in EXEMPT_FUNCTIONS:
                offenders.append(f"src/phrasezoo/{relative}:{line} {name} ({lines} lines)")
    assert not offenders, f"functions over {MAX_LINES} lines (split them into helpers with one job each): {offenders}"


def test_the_check_finds_a_long_function(tmp_path):
    body = "".join(f"        x{i} = {i}\n" for i in range(MAX_LINES))
    path = tmp_path / "long.py"
    path.write_text(f"class A:\n    def short(self):\n        pass\n\n    def long(self):\n{body}")
    assert [(name, lines) for name, _, lines in long_functions(path)] == [("A.long", MAX_LINES + 1)]

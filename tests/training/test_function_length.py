"""Small steps: no function of the training workflow is over 100 lines, and the entry module stays orchestration."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "phrasezoo"
LIMIT = 100


def long_functions(folder: Path, limit: int) -> list[str]:
    """``path:line name (n lines)`` of every function or method in ``folder`` longer than ``limit`` lines."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = node.end_lineno - start + 1
                if length > limit:
                    found.append(f"{path.relative_to(folder)}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_training_function_is_over_100_lines():
    found = long_functions(PACKAGE / "training", LIMIT)  # "path:line name (n lines)"
    assert not found, f"split these into named steps: {found}"


def test_the_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    (tmp_path / "long.py").write_text(f"def short():\n    pass\n\n\ndef long():\n{body}\n")
    assert [line.split()[1] for line in long_functions(tmp_path, LIMIT)] == ["long"]


def test_the_pipeline_module_is_orchestration_only():
    assert len((PACKAGE / "pipeline.py").read_text().splitlines()) <= 150

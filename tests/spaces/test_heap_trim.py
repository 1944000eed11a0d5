"""Every Space trims glibc's heap after every request (issue 34's load test: without it a Space's memory creeps up
under load), with the same helper: a marked copy of pearl-demo's ``releasing_memory`` (Spaces are deployed one
folder each, so they cannot share a module). Checked on the source, no server needed."""

from __future__ import annotations

import ast

import pytest

from .helpers import SPACES

APPS = sorted(p.parent.name for p in SPACES.glob("*/app.py"))
HELPERS = ("_malloc_trim", "releasing_memory")
EVENTS = {"click", "load", "select", "upload", "change", "submit"}


def definitions(tree: ast.AST) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def handlers(tree: ast.AST) -> set[str]:
    """Names of the functions passed as the first argument of an event listener (``button.click(f, ...)``)."""
    found = set()
    for node in ast.walk(tree):
        listener = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EVENTS
        if listener and node.args and isinstance(node.args[0], ast.Name):
            found.add(node.args[0].id)
    return found


SOURCE = definitions(ast.parse((SPACES / "pearl-demo" / "app.py").read_text()))


@pytest.mark.parametrize("space", APPS)
def test_the_heap_trim_is_a_copy_of_pearl_demos(space):
    tree = ast.parse((SPACES / space / "app.py").read_text())
    own = definitions(tree)
    for name in HELPERS:
        assert name in own, f"spaces/{space}/app.py lacks {name} (copy it from spaces/pearl-demo/app.py)"
        assert ast.unparse(own[name]) == ast.unparse(SOURCE[name]), f"spaces/{space}/app.py: {name} drifted"


@pytest.mark.parametrize("space", APPS)
def test_every_event_handler_trims_the_heap(space):
    tree = ast.parse((SPACES / space / "app.py").read_text())
    own = definitions(tree)
    names = handlers(tree) & set(own)  # (``spacy.load(package)`` is no event listener)
    assert names, f"spaces/{space}/app.py: no event handler found"
    for name in sorted(names):
        decorators = [ast.unparse(d) for d in own[name].decorator_list]
        assert "releasing_memory" in decorators, f"spaces/{space}/app.py: handler {name} is not @releasing_memory"

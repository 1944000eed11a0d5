"""Every method folder has the shape CONTRIBUTING.md writes down (the table under "The zoo entry").

The table is read from CONTRIBUTING.md, so the page and the folders cannot drift apart: a required entry missing, a
``tasks.py``/``report.py`` module where the page asks for the package, or a sub-package that is none of the kinds
the table names fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from phrasezoo.zoo.registry import get_method, list_methods

REPO_ROOT = Path(__file__).resolve().parents[1]
TEXT = (REPO_ROOT / "CONTRIBUTING.md").read_text()
#: the shape table's rows: entry -> "required" | "optional package" | "optional"
SHAPE = dict(re.findall(r"^\| `([^`]+)` \| (required|optional package|optional) \|", TEXT, flags=re.M))
PLUGIN_PACKAGES = [
    entry.rstrip("/") for entry, kind in SHAPE.items() if kind == "optional package" and "<" not in entry
]


def test_the_table_is_found():
    assert SHAPE["__init__.py"] == "required" and SHAPE["task.py"] == "required"
    assert PLUGIN_PACKAGES == ["tasks", "report"]
    assert "<application>/" in SHAPE and "<helper>.py" in SHAPE and "<helper>/" in SHAPE


@pytest.mark.parametrize("name", list_methods())
def test_method_folder_has_the_shape(name):
    method = get_method(name)
    folder = method.folder
    entries = {p.name for p in folder.iterdir() if p.name != "__pycache__"}
    required = [entry for entry, kind in SHAPE.items() if kind == "required"]
    assert not [e for e in required if e not in entries], f"{name}: missing required files"
    for plugin in PLUGIN_PACKAGES:
        assert f"{plugin}.py" not in entries, f"{name}: {plugin}.py should be the package {plugin}/"
        if plugin in entries:
            assert (folder / plugin / "__init__.py").exists(), f"{name}: {plugin}/ is not a package"
    if "report" in entries:
        assert (folder / "report" / "__main__.py").exists(), f"{name}: report/ runs as a command (__main__.py)"
    commands = {entry.split(".")[0] for entry in method.topic_commands}
    for path in sorted(folder.iterdir()):
        if path.name == "__pycache__" or path.name in SHAPE or path.name in PLUGIN_PACKAGES:
            continue
        if path.is_dir():
            assert (path / "__init__.py").exists(), f"{name}: {path.name}/ is not a package"
            application = path.name in commands or any((path / f).exists() for f in ("__main__.py", "commands.py"))
            if application:  # a command of its own, reached from `phrasezoo topics`
                assert (path / "__main__.py").exists() and (path / "commands.py").exists(), f"{name}: {path.name}/"
                assert path.name in commands, f"{name}: {path.name}/ is not named in topic_commands"
            else:  # a helper package (`<helper>/`): plain modules only this method uses, no sub-packages
                inner = [p.name for p in path.iterdir() if p.name != "__pycache__" and p.suffix != ".py"]
                assert not inner, f"{name}: {path.name}/ holds {inner}: a helper package holds modules only"
        else:
            assert path.suffix == ".py", f"{name}: {path.name} is neither a module nor a package"

"""How much of each method lives at home: per method, the source lines that serve only it, and their share in its
own folders.

A method's own folders: ``src/phrasezoo/models/<m>/``, ``src/phrasezoo/methods/<m>/``, its studies in
``experiments/<m>/`` and its speed benchmarks ``benchmarks/speed_<m>*.py``. Outside them, the imports decide (every
import counts, function-level ones included, as in ``tests/test_import_ladder.py``):

* a module that others import serves only method ``m`` when every file that imports it is in ``m``'s folders or
  itself serves only ``m``;
* a file that nothing imports (a script in ``experiments/``, ``benchmarks/`` or ``scripts/``, an entry module) serves
  only ``m`` when the method code it imports (``m``'s folders, or modules that serve only ``m``) is ``m``'s alone.

Code that a workflow reaches through the registry (a method's tasks, its topic commands) is found at run time, not
imported by name, so it adds no importer. What the imports cannot show is not counted: code that serves one method
without importing it or being imported by it (an application that runs on any encoder but comes from one paper, say)
counts as neutral; review and the method-name test keep such code at home. Counted: the Python files of ``src/phrasezoo``, ``experiments/``,
``benchmarks/`` and ``scripts/`` (tests are not counted), in physical lines (``wc -l``).

    .venv/bin/python scripts/method_share.py            # the table
    .venv/bin/python scripts/method_share.py --files    # and the files each method has outside its folders
    .venv/bin/python scripts/method_share.py --min 0.8  # exit 1 when a method has less than 80% at home
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGE = REPO_ROOT / "src" / "phrasezoo"
ROOTS = ("src/phrasezoo", "experiments", "benchmarks", "scripts")


def methods(root: Path = REPO_ROOT) -> list[str]:
    """The method names: the sub-packages of ``phrasezoo/methods`` (what the registry scans)."""
    methods_dir = root / "src" / "phrasezoo" / "methods"
    return sorted(p.name for p in methods_dir.iterdir() if (p / "__init__.py").is_file())


def home_of(path: str, names: list[str]) -> str | None:
    """The method whose own folders hold ``path`` (a path from the repository root), else ``None``."""
    for name in names:
        if path.startswith((f"src/phrasezoo/models/{name}/", f"src/phrasezoo/methods/{name}/", f"experiments/{name}/")):
            return name
        if path.startswith(f"benchmarks/speed_{name}"):
            return name
    return None


def module_name(path: Path, package: Path = PACKAGE) -> str | None:
    """``phrasezoo.a.b`` for a file of the package, ``None`` for a script."""
    if package not in path.parents:
        return None
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, module: str | None, known: set[str]) -> set[str]:
    """The package modules ``path`` imports (``from pkg import submodule`` counts as the submodule)."""
    tree = ast.parse(path.read_text(errors="replace"))
    package = module if path.name == "__init__.py" else (module or "").rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            targets = [f"{target}.{a.name}" if f"{target}.{a.name}" in known else target for a in node.names]
        else:
            continue
        for target in targets:
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in known:
                found.add(target)
    return found


def share_table(root: Path = REPO_ROOT) -> tuple[dict[str, dict[str, int]], dict[str, list[tuple[str, int]]]]:
    """``({method: {"home": lines, "elsewhere": lines}}, {method: [(file, lines) outside its folders]})`` for the
    repository at ``root``."""
    names = methods(root)
    files = sorted(p for folder in ROOTS for p in (root / folder).rglob("*.py") if "__pycache__" not in p.parts)
    rel = {p: p.relative_to(root).as_posix() for p in files}
    modules = {p: module_name(p, root / "src" / "phrasezoo") for p in files}
    known = {m for m in modules.values() if m}
    by_module = {m: p for p, m in modules.items() if m}
    imports = {p: {by_module[m] for m in imported_modules(p, modules[p], known)} - {p} for p in files}
    importers: dict[Path, set[Path]] = {p: set() for p in files}
    for p, targets in imports.items():
        for target in targets:
            importers[target].add(p)
    owner = {p: home_of(rel[p], names) for p in files}  # a method, or None: not (yet) known to serve one method
    changed = True
    while changed:  # modules imported by one method's code only
        changed = False
        for p in files:
            if owner[p] is None and importers[p]:
                owners = {owner[q] for q in importers[p]}
                if len(owners) == 1 and None not in owners:
                    owner[p], changed = owners.pop(), True
    for p in files:  # scripts and entry modules: the method code they import
        if owner[p] is None and not importers[p]:
            owners = {owner[q] for q in imports[p]} - {None}
            if len(owners) == 1:
                owner[p] = owners.pop()
    table = {name: {"home": 0, "elsewhere": 0} for name in names}
    outside: dict[str, list[tuple[str, int]]] = {name: [] for name in names}
    for p in files:
        if owner[p] is None:
            continue
        lines = len(p.read_text(errors="replace").splitlines())
        if home_of(rel[p], names) == owner[p]:
            table[owner[p]]["home"] += lines
        else:
            table[owner[p]]["elsewhere"] += lines
            outside[owner[p]].append((rel[p], lines))
    return table, outside


def format_table(table: dict[str, dict[str, int]]) -> str:
    rows = ["| method | method-only lines | in its own folders | elsewhere | share at home |", "|---|---|---|---|---|"]
    for name, counts in table.items():
        total = counts["home"] + counts["elsewhere"]
        share = counts["home"] / total if total else 1.0
        rows.append(f"| {name} | {total:,} | {counts['home']:,} | {counts['elsewhere']:,} | {share:.0%} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", action="store_true", help="list each method's files outside its own folders")
    parser.add_argument("--min", type=float, help="exit 1 when a method's share at home is below this (e.g. 0.8)")
    args = parser.parse_args(argv)
    table, outside = share_table()
    print(format_table(table))
    if args.files:
        for name, found in outside.items():
            for path, lines in found:
                print(f"{name}: {path} ({lines})")
    low = [n for n, c in table.items() if c["home"] < (args.min or 0) * (c["home"] + c["elsewhere"])]
    if low:
        print(f"below {args.min:.0%} at home: {', '.join(low)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

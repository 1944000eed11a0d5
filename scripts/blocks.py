"""The generated blocks of README.md and docs/**/*.md, regenerated from the committed results files.

A block is the text between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``; the one block writer
(:func:`phrasezoo.core.files.write_readme_table`) fills it. ``docs/blocks.yaml`` is the registry: for every block, its page
and the existing report command (or renderer) that makes it from ``results/``. So a table cannot drift from its
file: ``tests/test_blocks.py`` regenerates every block into copies of the pages and fails on any difference.

    .venv/bin/python scripts/blocks.py --check                    # exit 1 with a diff when a block differs
    .venv/bin/python scripts/blocks.py --write                    # rewrite every block in place
    .venv/bin/python scripts/blocks.py --write pearl-mini-seeds   # one block (on every page it is on)
    .venv/bin/python scripts/blocks.py --list                     # the blocks, their pages and commands
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import io
import json
import re
import runpy
import shlex
import shutil
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = ROOT / "docs" / "blocks.yaml"


@dataclass(frozen=True)
class Block:
    """One registry entry: block ``name`` on ``page``, made by ``run`` (a command line, ``{page}`` standing for the
    page) or by ``render`` (``MODULE:FUNCTION``, ``SCRIPT.py:FUNCTION`` or ``zoo``) from ``results``."""

    name: str
    page: str
    run: str = ""
    render: str = ""
    results: str = ""
    args: tuple[str, ...] = ()
    prefix: str = ""
    missing: str = ""

    def argv(self, page: str | Path) -> list[str]:
        return [a.replace("{page}", str(page)) for a in shlex.split(self.run)]

    def describe(self) -> str:
        if self.run:
            return self.run
        return f"{self.render}({self.results})" if self.results else self.render


def load_registry(path: Path = REGISTRY) -> tuple[list[Block], list[dict]]:
    """The blocks and the zoo rows of the registry file."""
    doc = yaml.safe_load(path.read_text())
    blocks = []
    for entry in doc["blocks"]:
        entry = dict(entry)
        if bool(entry.get("run")) == bool(entry.get("render")):
            raise ValueError(f"{path}: block {entry.get('name')} needs exactly one of `run` and `render`.")
        entry["args"] = tuple(entry.get("args", ()))
        blocks.append(Block(**entry))
    return blocks, doc.get("zoo", [])


BLOCKS, ZOO = load_registry()


# ------------------------------------------------------------------------------------------------------ rendering
def _json(path: str) -> Any:
    return json.loads((ROOT / path).read_text())


def _function(spec: str):
    """``SCRIPT.py:NAME`` (a script of benchmarks/ or experiments/, loaded without running its main) or
    ``MODULE:NAME``."""
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py"):
        return runpy.run_path(str(ROOT / where), run_name="phrasezoo_block_renderer")[name]
    return getattr(importlib.import_module(where), name)


def render_function(block: Block) -> str:
    """The text of a ``render`` block."""
    if block.render == "zoo":
        return render_zoo(ZOO)
    if block.render == "zoo-shortfalls":
        return render_zoo_shortfalls(ZOO)
    if not (ROOT / block.results).is_file():
        if block.missing:
            return block.missing
        raise FileNotFoundError(f"block {block.name}: {block.results} does not exist")
    data = _json(block.results)
    fn = _function(block.render)
    text = fn(*(data[k] for k in block.args)) if block.args else fn(data)
    return block.prefix.replace("{results}", block.results) + text


def run_block(block: Block, page: str | Path) -> None:
    """Render ``block`` into ``page`` (a path), from the repository root, its output swallowed."""
    saved = sys.argv[:]
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = _run(block, page)
        finally:
            sys.argv = saved
    if code not in (0, None):
        raise RuntimeError(f"block {block.name}: `{' '.join(block.argv(page))}` exited {code}")


def _run(block: Block, page: str | Path) -> int | None:
    if block.run and block.results and block.missing and not (ROOT / block.results).is_file():
        from phrasezoo.core.files import write_readme_table  # not measured yet: the placeholder the page promises

        write_readme_table(page, block.missing, block=block.name)
        return 0
    if block.render:
        from phrasezoo.core.files import write_readme_table

        write_readme_table(page, render_function(block), block=block.name)
        return 0
    argv = block.argv(page)
    try:
        if argv[0] == "phrasezoo":
            from phrasezoo.cli import main as cli

            return cli(argv[1:])
        if argv[:2] == ["python", "-m"]:
            sys.argv = argv[2:]
            with warnings.catch_warnings():  # the module was imported before (by a block before it): harmless here
                warnings.filterwarnings("ignore", "'.*' found in sys.modules", RuntimeWarning)
                runpy.run_module(argv[2], run_name="__main__", alter_sys=False)
        elif argv[0] == "python":
            sys.argv = argv[1:]
            runpy.run_path(str(ROOT / argv[1]), run_name="__main__")
        else:
            raise ValueError(f"block {block.name}: `run` starts with phrasezoo, python -m or python, not {argv[0]!r}")
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    return 0


# ---------------------------------------------------------------------------------------------------- the zoo table
def _value(doc: dict, task: str, metric: str | None) -> float | None:
    from phrasezoo.evaluation.results import get_value

    if task.startswith("avg:"):
        found = [get_value(doc, t) for t in task[4:].split(",")]
        return None if None in found else sum(found) / len(found)
    return get_value(doc, task, metric)


def paper_value(spec: dict | None) -> float | None:
    """A paper's published number (a fraction): a method's ``paper_rows`` entry, or a constant of a module."""
    if not spec:
        return None
    if "method" in spec:
        from phrasezoo.zoo.registry import get_method

        values = get_method(spec["method"]).paper_rows[spec["row"]]
        key = spec["key"]
        if key.startswith("avg:"):
            found = [values.get(t) for t in key[4:].split(",")]
            return None if None in found else sum(found) / len(found)
        return values[key]
    value = _function(spec["attr"])
    for index in spec["key"]:
        value = value[tuple(index) if isinstance(index, list) else index]
    return value * spec.get("scale", 1.0)


@dataclass(frozen=True)
class Verdict:
    """One headline task of a zoo row: ours (the mean over its runs) against the backbone measured in the same run."""

    checkpoint: str
    label: str
    mean: float
    backbone: float
    spread: float
    runs: int
    paper: str

    @property
    def margin(self) -> float:
        return 100 * (self.mean - self.backbone)

    @property
    def beats(self) -> bool:
        """Above the backbone, and (with several runs) by more than their spread."""
        return self.mean > self.backbone if self.runs == 1 else self.mean - self.backbone > self.spread

    def text(self) -> str:
        if self.runs == 1:
            return f"**no**, {self.margin:+.1f}" if not self.beats else f"{self.margin:+.1f}, one run (no spread)"
        if self.beats:
            return f"yes, {self.margin:+.1f} > {100 * self.spread:.1f}"
        return f"**no**, {self.margin:+.1f} vs spread {100 * self.spread:.1f}"


def zoo_verdicts(row: dict) -> list[Verdict]:
    """The verdicts of a zoo row's headline tasks, from its results files."""
    from phrasezoo.evaluation.results import read_results

    docs = [read_results(ROOT / f) for f in row["runs"]]
    base = read_results(ROOT / row["backbone"]) if row.get("backbone") else None
    verdicts = []
    for task in row["tasks"]:
        values = [_value(d, task["task"], task.get("metric")) for d in docs]
        backbone = _value(base or docs[0], task["task"], task.get("baseline_metric", task.get("metric")))
        if None in values or backbone is None:
            raise ValueError(f"{row['checkpoint']}: {task['label']} is missing from its results files")
        paper = paper_value(task.get("paper"))
        note = (task.get("paper") or {}).get("note", "")
        paper_text = "–" if paper is None else f"{100 * paper:.1f}{note}"
        verdicts.append(Verdict(row["checkpoint"], task["label"], sum(values) / len(values), backbone,
                                max(values) - min(values), len(values), paper_text))  # fmt: skip
    return verdicts


AUTHORS_NOTE = (
    "- Authors' checkpoint: the paper's published weights (`authors:` in docs/blocks.yaml), converted by `phrasezoo "
    "convert` and scored here by `phrasezoo evaluate --model <repo id>` on the same tasks. ¹ Not measured: downloading "
    "it needs a network, and the machine that made this table had none; that command writes "
    "`results/<method>/authors-<name>.json` and the cell fills in. – : the paper published no weights."
)


def authors_cell(row: dict, root: Path | None = None) -> str:
    """The zoo row's "authors' checkpoint" cell: its headline tasks measured on the authors' published weights, or
    why they are not there (not measured: ¹; no published weights: –)."""
    from phrasezoo.evaluation.hub_model import authors_results_path
    from phrasezoo.evaluation.results import read_results

    repo = row.get("authors")
    if not repo:
        return "–"
    path = (root or ROOT) / authors_results_path(repo)
    if not path.is_file():
        return f"`{repo}`: not measured¹"
    doc = read_results(path)
    values = [(task["label"], _value(doc, task["task"], task.get("metric"))) for task in row["tasks"]]
    return f"`{repo}`: " + "<br>".join(f"{label}: {'–' if v is None else f'{100 * v:.1f}'}" for label, v in values)


def render_zoo(rows: list[dict]) -> str:
    """Markdown: one row per released checkpoint; per headline task, ours against the backbone measured in the same
    run and the paper's number, and whether the margin beats the seed spread (each task on its own line)."""
    lines = [
        "| checkpoint | backbone, measured in the same run | paper's model | per headline task: ours vs backbone "
        "(paper) · beats the backbone by more than the seed spread? | authors' checkpoint, measured here |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        cells = [f"{v.label}: **{100 * v.mean:.1f}** vs {100 * v.backbone:.1f} ({v.paper}) · {v.text()}"
                 for v in zoo_verdicts(row)]  # fmt: skip
        unit = "soups" if len(row["runs"]) > 1 and "soup" in " ".join(row["runs"]) else "runs"
        runs = f"mean of {len(row['runs'])} {unit}" if len(row["runs"]) > 1 else "1 run"
        lines.append(
            f"| **{row['checkpoint']}** ({runs}) | {row['backbone_label']} | {row['paper_label']} | "
            + "<br>".join(cells)
            + f" | {authors_cell(row)} |"
        )
    lines += [
        "",
        "- Percentages (accuracy, Pearson r, NMI x 100) from the benchmark suite on `../shared/benchmarks`. Ours: the "
        "mean over the released soups or training seeds (the released checkpoint is the first of them). A margin "
        "over the backbone counts only when it is larger than their spread (max - min).",
        "- Paper: the published number of the paper's own model (BERT-base size unless named), trained at paper scale; "
        "for reference, not re-run here. † UCTopic's paper reports only after CCL (all splits pooled, best score "
        "selected on gold labels). § The codebook paper's own split and GloVe 42B/840B 300-d vectors (our subset "
        "and GloVe 6B 50-d differ).",
        AUTHORS_NOTE,
        "- Per-task tables, seeds and the dev-suite choices are on each method's docs page.",
    ]
    return "\n".join(lines)


def render_zoo_shortfalls(rows: list[dict]) -> str:
    """Markdown: every headline task of the zoo table on which a checkpoint does not beat its backbone (the table's
    "no" cells), with the results files they come from."""
    lines = ["| checkpoint | task | ours vs backbone | margin | results files |", "|---|---|---|---|---|"]
    for row in rows:
        files = ", ".join(f"`{f}`" for f in [*row["runs"], *([row["backbone"]] if row.get("backbone") else [])])
        unit = "soups" if "soup" in " ".join(row["runs"]) else "runs"
        for v in zoo_verdicts(row):
            if not v.beats:
                spread = "one run" if v.runs == 1 else f"spread of {v.runs} {unit} {100 * v.spread:.1f}"
                lines.append(f"| {v.checkpoint} | {v.label} | {100 * v.mean:.1f} vs {100 * v.backbone:.1f} | "
                             f"{v.margin:+.1f} ({spread}) | {files} |")  # fmt: skip
    if len(lines) == 2:
        return "Every checkpoint of the zoo table beats its backbone on every headline task."
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------- checking
def block_text(text: str, name: str) -> str | None:
    """The content of block ``name`` in a page's text, or None when the page has no such block."""
    match = re.search(rf"<!-- {re.escape(name)}:start -->\n?(.*?)<!-- {re.escape(name)}:end -->", text, re.S)
    return match.group(1) if match else None


def block_names(text: str) -> list[str]:
    """Every block named in a page's text, in order."""
    return re.findall(r"<!-- ([A-Za-z0-9_.-]+):start -->", text)


def pages() -> list[Path]:
    """README.md and every markdown page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def regenerate(blocks: list[Block], workdir: Path) -> dict[str, tuple[str, str]]:
    """Render ``blocks`` into copies of their pages under ``workdir``: ``page: name`` -> (committed, regenerated)."""
    copies: dict[str, Path] = {}
    for block in blocks:
        if block.page not in copies:
            copies[block.page] = workdir / block.page
            copies[block.page].parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / block.page, copies[block.page])
    errors = {}
    for block in blocks:
        try:
            run_block(block, copies[block.page])
        except Exception as err:  # one broken renderer is reported with the others, not alone
            errors[block.name] = f"(the renderer failed: {type(err).__name__}: {err})"
    out = {}
    for block in blocks:
        committed = block_text((ROOT / block.page).read_text(), block.name)
        if committed is None:
            raise ValueError(f"{block.page} has no <!-- {block.name}:start --> block (docs/blocks.yaml says it does).")
        fresh = errors.get(block.name) or block_text(copies[block.page].read_text(), block.name) or ""
        out[f"{block.page}: {block.name}"] = (committed, fresh)
    return out


def unregistered() -> list[str]:
    """``page: block`` for every block on a page that the registry does not name."""
    known = {(b.page, b.name) for b in BLOCKS}
    missing = []
    for page in pages():
        rel = page.relative_to(ROOT).as_posix()
        missing += [f"{rel}: {n}" for n in block_names(page.read_text()) if (rel, n) not in known]
    return missing


def results_paths() -> list[str]:
    """Every results file the registry names (blocks and zoo rows)."""
    paths = [a for b in BLOCKS for a in shlex.split(b.run) if a.startswith("results/")]
    paths += [b.results for b in BLOCKS if b.results]
    paths += [p for row in ZOO for p in [*row["runs"], row.get("backbone", "")] if p]
    return sorted(set(paths))


def select(names: list[str]) -> list[Block]:
    """The registered blocks named ``names`` (every page a name appears on), or all of them."""
    if not names:
        return BLOCKS
    unknown = sorted(set(names) - {b.name for b in BLOCKS})
    if unknown:
        raise SystemExit(f"unknown block(s): {', '.join(unknown)}; `scripts/blocks.py --list` lists them.")
    return [b for b in BLOCKS if b.name in names]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="fail (exit 1) with a diff when a block differs")
    mode.add_argument("--write", action="store_true", help="rewrite the blocks in place from the results files")
    mode.add_argument("--list", action="store_true", help="list the blocks, their pages and commands")
    parser.add_argument("names", nargs="*", help="only these blocks (default: all)")
    args = parser.parse_args(argv)
    blocks = select(args.names)
    if args.list:
        for b in blocks:
            print(f"{b.page}: {b.name}\n    {b.describe()}")
        return 0
    if args.write:
        for block in blocks:
            run_block(block, ROOT / block.page)
            print(f"wrote {block.page}: {block.name}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        result = regenerate(blocks, Path(tmp))
    failed = 0
    for key, (committed, fresh) in result.items():
        if committed != fresh:
            failed += 1
            diff = difflib.unified_diff(
                committed.splitlines(), fresh.splitlines(), "committed", "regenerated", lineterm=""
            )
            print(f"--- block {key} differs from its results:\n" + "\n".join(diff))
    missing = unregistered() if not args.names else []
    for item in missing:
        print(f"unregistered block (add it to docs/blocks.yaml or remove it from the page): {item}")
    print(f"{len(result) - failed} of {len(result)} blocks match their results; {len(missing)} unregistered.")
    return 1 if failed or missing else 0


if __name__ == "__main__":
    raise SystemExit(main())

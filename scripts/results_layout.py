"""Lay out results/ by method and kind (issue 35), and write its index, results/README.md.

The layout is data, ``scripts/results_layout.tsv``: each file's old flat path and its place. ``--apply`` moves every
listed file that is still at its old path (``git mv``), rewrites every reference to an old path in the tracked text
files (``results/<old>`` and the shell patterns and help-text templates the map lists), and writes the index. It is
idempotent: a second run changes nothing, so it can be replayed on a branch that merged other work since.

    .venv/bin/python scripts/results_layout.py --apply     # move, rewrite references, write results/README.md
    .venv/bin/python scripts/results_layout.py --index     # only write results/README.md
    .venv/bin/python scripts/results_layout.py --dry-run   # list what --apply would change
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = ROOT / "scripts" / "results_layout.tsv"
RESULTS = ROOT / "results"
INDEX = RESULTS / "README.md"
#: the tracked folders and files whose text may name a results file
TEXT_ROOTS = (
    "README.md",
    "CONTRIBUTING.md",
    "docs",
    "src",
    "benchmarks",
    "experiments",
    "scripts",
    "tests",
    "hub_configs",
    "spaces",
    "model_cards",
    "train.py",
)
SKIP = {"scripts/results_layout.tsv", "scripts/results_layout.py", "tests/test_results_index.py", "results/README.md"}
MAX_FILES = 30
_NAME = r"[\w*{},./-]"  # characters of a path or shell pattern after results/
_MENTION = re.compile(rf"(?<![\w.-])results/({_NAME}+)")
_BLOCK = re.compile(r"<!-- ([\w.-]+):(start|end) -->")
_COMMAND_BLOCK = re.compile(r"--block[ =]([\w.-]+)")


def read_layout(path: Path = LAYOUT) -> dict[str, dict[str, str]]:
    """{"file": {old: new}, "glob": {old: new}, "text": {old: new}}, paths relative to results/."""
    out: dict[str, dict[str, str]] = {"file": {}, "glob": {}, "text": {}}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        kind, old, new = line.split("\t")
        if kind not in out or old in out[kind]:
            raise SystemExit(f"{path}:{number}: unknown kind or repeated entry: {line!r}")
        out[kind][old] = new
    news = list(out["file"].values())
    if len(set(news)) != len(news):
        raise SystemExit(f"{path}: two files map to one place")
    renamed = {Path(o).name for o, n in out["file"].items() if Path(o).name != Path(n).name}
    if clash := renamed & {Path(n).name for n in news}:
        raise SystemExit(f"{path}: a new name is an old name, so a rewrite would not be idempotent: {sorted(clash)}")
    return out


def tracked_text_files() -> list[Path]:
    """Tracked UTF-8 text files under TEXT_ROOTS (results/ itself is data, never rewritten)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *TEXT_ROOTS], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    out = []
    for rel in sorted(filter(None, listed.split("\0"))):
        path = ROOT / rel
        if rel in SKIP or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        out.append(path)
    return out


def _alternation(names) -> str:
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))


def _glob_target(pattern: str, files: dict[str, str]) -> str | None:
    """The new pattern naming exactly the new places of the old files ``pattern`` names, or None."""
    matched = {old for old in files if "/" not in old and fnmatch.fnmatchcase(old, pattern)}
    if not matched:
        return None
    wanted = {files[o] for o in matched}
    folders = {n.rsplit("/", 1)[0] if "/" in n else "" for n in wanted}
    if len(folders) != 1:
        return None
    folder = folders.pop()
    names = [n.rsplit("/", 1)[-1] for n in wanted]
    common = names[0]
    for name in names[1:]:
        while not name.startswith(common):
            common = common[:-1]
    candidates = [pattern]
    if pattern.count("*") == 1:
        tail = pattern.partition("*")[2]
        candidates.append(common.removesuffix(tail) + "*" + tail)
    for base in candidates:
        candidate = f"{folder}/{base}" if folder else base
        if {n for n in files.values() if fnmatch.fnmatchcase(n, candidate)} == wanted:
            return candidate
    return None


def rewrite(text: str, layout: dict[str, dict[str, str]]) -> tuple[str, list[str]]:
    """``text`` with every old results path, pattern and template replaced; and the patterns it could not map."""
    files, globs, templates = layout["file"], layout["glob"], layout["text"]
    unmapped: list[str] = []
    for old in sorted(templates, key=len, reverse=True):
        text = text.replace(f"results/{old}", f"results/{templates[old]}")

    def path_or_pattern(match: re.Match) -> str:
        mention = match.group(1).rstrip(".,")
        rest = match.group(1)[len(mention) :]
        if "*" not in mention:
            return match.group(0)
        if mention in globs:
            return f"results/{globs[mention]}{rest}"
        target = _glob_target(mention, files)
        if target is None:
            if any("/" not in o and fnmatch.fnmatchcase(o, mention) for o in files):
                unmapped.append(mention)
            return match.group(0)
        return f"results/{target}{rest}"

    text = _MENTION.sub(path_or_pattern, text)
    if files:
        paths = re.compile(rf"(?<![\w.-])results/({_alternation(files)})(?![\w-]|\.\w)")
        text = paths.sub(lambda m: f"results/{files[m.group(1)]}", text)
        bare = {Path(o).name: Path(n).name for o, n in files.items() if Path(o).name != Path(n).name}
        if bare:
            names = re.compile(rf"(?<![\w./-])({_alternation(bare)})(?![\w-]|\.\w)")
            text = names.sub(lambda m: bare[m.group(1)], text)
    return text, unmapped


def move_files(layout: dict[str, dict[str, str]], dry_run: bool) -> list[str]:
    """``git mv`` each listed file still at its old place; returns what it did (or would do)."""
    done = []
    for old, new in layout["file"].items():
        source, target = RESULTS / old, RESULTS / new
        if not source.exists():
            continue
        if target.exists():
            raise SystemExit(f"both results/{old} and results/{new} exist: merge them by hand, then rerun")
        done.append(f"results/{old} -> results/{new}")
        if not dry_run:
            target.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "mv", str(source), str(target)], cwd=ROOT, check=True)
    return done


def rewrite_references(layout: dict[str, dict[str, str]], dry_run: bool) -> tuple[list[str], list[str]]:
    """Rewrite the tracked text files; returns (changed files, shell patterns that named old files but were not mapped)."""
    changed, unmapped = [], []
    for path in tracked_text_files():
        text = path.read_text()
        new, missing = rewrite(text, layout)
        rel = path.relative_to(ROOT).as_posix()
        unmapped += [f"{rel}: results/{m}" for m in missing]
        if new != text:
            changed.append(rel)
            if not dry_run:
                path.write_text(new)
    return changed, unmapped


def result_files() -> list[str]:
    """Every file under results/ (relative to it), the index itself excepted."""
    return sorted(p.relative_to(RESULTS).as_posix() for p in RESULTS.rglob("*") if p.is_file() and p != INDEX)


def _label(rel: str, lines: list[str], number: int) -> str:
    """Where a mention on line ``number`` of a markdown file sits: its block, the block it introduces, or its
    section."""
    if not rel.endswith(".md"):
        return f"`{rel}`"
    open_block = None
    for line in lines[: number + 1]:
        for name, edge in _BLOCK.findall(line):
            open_block = name if edge == "start" else None
    if open_block is None:
        for line in lines[number + 1 : number + 20]:
            found = _BLOCK.findall(line)
            if found and found[0][1] == "start":
                open_block = found[0][0]
                break
    if open_block:
        return f"`{rel}` block `{open_block}`"
    heading = next((line.lstrip("#").strip() for line in reversed(lines[:number]) if line.startswith("#")), "")
    return f"`{rel}` § {heading}" if heading else f"`{rel}`"


def _stem_blocks(files: list[str], old_names: dict[str, str]) -> dict[str, list[str]]:
    """block name -> the files it is generated from by name: a block named after a file's stem, old or new
    (``<stem>``), or after a run's seeds (``<stem>-seeds``: the stem's soups and seeds)."""
    by_stem: dict[str, list[str]] = defaultdict(list)
    for rel in files:
        for name in {rel.rsplit("/", 1)[-1], Path(old_names.get(rel, rel)).name}:
            stem = name.split(".", 1)[0].removesuffix("-dev-selection")
            by_stem[stem].append(rel)
            if base := re.fullmatch(r"(.+)-(?:soup|seed)\d+", stem):
                by_stem[f"{base[1]}-seeds"].append(rel)
            by_stem[f"{stem}-seeds"].append(rel)
    return by_stem


def readers(files: list[str], old_names: dict[str, str] | None = None) -> dict[str, list[str]]:
    """results file -> the pages (block or section) and code that name it: by path, by a shell pattern (not one
    that names every file, such as ``results/*/*.json``), or as the block named after it."""
    found: dict[str, set[str]] = defaultdict(set)
    known = set(files)
    by_stem = _stem_blocks(files, old_names or {})
    by_name: dict[str, list[str]] = defaultdict(list)  # the release results in a method's own folder, by stem
    for rel in files:
        if rel.count("/") == 1 and rel.endswith(".json") and not rel.endswith("-dev-selection.json"):
            by_name[rel.rsplit("/", 1)[-1].removesuffix(".json")].append(rel)
    for path in tracked_text_files():
        rel = path.relative_to(ROOT).as_posix()
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines):
            for block, edge in _BLOCK.findall(line):
                if edge == "start":
                    for hit in by_stem.get(block, ()):
                        found[hit].add(f"`{rel}` block `{block}`")
            if rel.endswith(".md") and (command := _COMMAND_BLOCK.search(line)):  # a block writer given bare names
                window = "\n".join(lines[max(0, number - 2) : number + 3])
                for stem, hits in by_name.items():
                    if re.search(rf"(?<![\w/.-]){re.escape(stem)}(?![\w-]|\.\w)", window):
                        for hit in hits:
                            found[hit].add(f"`{rel}` block `{command[1]}`")
            for match in _MENTION.finditer(line):
                mention = match.group(1).rstrip(".,")
                if mention.rsplit("/", 1)[-1].startswith("*"):
                    continue
                hits = (
                    [f for f in files if fnmatch.fnmatchcase(f, mention)]
                    if "*" in mention
                    else [mention]
                    if mention in known
                    else []
                )
                for hit in hits:
                    found[hit].add(_label(rel, lines, number))
    for rel in files:  # a study's dev choices feed the trace beside them (experiments/common/dev_compare.py)
        if rel.endswith("-dev-selection.json"):
            try:
                model = json.loads((RESULTS / rel).read_text()).get("model")
            except (OSError, ValueError, AttributeError):
                continue
            for trace in sorted((RESULTS / rel).parent.glob("*.jsonl")):
                if model and f'"run": {json.dumps(model)}' in trace.read_text():
                    found[rel].add(f"trace `{trace.name}` (its row `{model}`)")
    return {f: sorted(found.get(f, ())) for f in files}


def write_index(old_names: dict[str, str]) -> str:
    """results/README.md: one table per folder, each file with its old flat name and who reads it."""
    files = result_files()
    by_folder: dict[str, list[str]] = defaultdict(list)
    for rel in files:
        by_folder[rel.rsplit("/", 1)[0] if "/" in rel else "."].append(rel)
    read_by = readers(files, old_names)
    out = [
        "# results/",
        "",
        "Every file the project's tables, pages and studies read. Generated by "
        "`.venv/bin/python scripts/results_layout.py --index`; do not edit by hand "
        "(`tests/test_results_index.py` checks it).",
        "",
        "- `<method>/`: the released recipe's results (`phrasezoo pipeline` writes `results/<method>/<recipe>.json` "
        "and its dev choices, `<recipe>-dev-selection.json`, beside it).",
        "- `<method>/earlier-releases/<what changed>/`: the results of an earlier release, kept for the record.",
        "- `<method>/experiments/<study>/`: a study's dev traces (`*-dev.jsonl`) and the dev choices of its runs; "
        "a run's name says the change it tried.",
        "- `baselines/`: the baselines' results (`baseline:<name>`) and their dev-suite scores (`dev-baseline-*`).",
        "- `speed/`, `spaces/`, `fuzzy-join/`, `matching/`, `reproducibility/`, `experiments/`: what serves no one "
        "method.",
        "",
        "Old flat names (before 2026-11-27) are in `scripts/results_layout.tsv`; run names inside the files keep the "
        "names they were run under.",
        "",
    ]
    for folder in sorted(by_folder):
        out += [f"## `{folder}/`", "", "| file | was | read by |", "|---|---|---|"]
        for rel in by_folder[folder]:
            name = rel.rsplit("/", 1)[-1]
            was = old_names.get(rel, "")
            where = "; ".join(read_by[rel]) or "not named by a page (kept as evidence)"
            out.append(f"| [`{name}`]({rel}) | {f'`{was}`' if was and was != name else ''} | {where} |")
        out.append("")
    INDEX.write_text("\n".join(out))
    return INDEX.relative_to(ROOT).as_posix()


def crowded_folders() -> dict[str, int]:
    """Folders under results/ holding more than MAX_FILES files."""
    counts: dict[str, int] = defaultdict(int)
    for rel in result_files():
        counts[rel.rsplit("/", 1)[0] if "/" in rel else "."] += 1
    return {folder: n for folder, n in counts.items() if n > MAX_FILES}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--apply", action="store_true", help="move the files, rewrite the references, write the index")
    mode.add_argument("--dry-run", action="store_true", help="list what --apply would change; change nothing")
    mode.add_argument("--index", action="store_true", help="only write results/README.md")
    args = parser.parse_args()
    layout = read_layout()
    if not args.index:
        moved = move_files(layout, args.dry_run)
        changed, unmapped = rewrite_references(layout, args.dry_run)
        print(
            f">> {len(moved)} files moved, {len(changed)} text files rewritten" + (" (dry run)" if args.dry_run else "")
        )
        for line in moved + [f"rewrote {c}" for c in changed]:
            print(f"   {line}")
        python_files = [c for c in changed if c.endswith(".py")]
        ruff = ROOT / ".venv" / "bin" / "ruff"
        if python_files and ruff.exists() and not args.dry_run:  # longer paths may break a line: format them
            subprocess.run([str(ruff), "format", "--quiet", *python_files], cwd=ROOT, check=False)
        if unmapped:
            print("!! shell patterns naming old files that the map does not cover (add a glob row):", file=sys.stderr)
            print("\n".join(f"   {u}" for u in unmapped), file=sys.stderr)
        flat = [f for f in result_files() if "/" not in f and f not in layout["file"]]
        if flat:
            print(f"!! files at the top of results/ that the map does not place: {', '.join(flat)}", file=sys.stderr)
        if args.dry_run:
            return
    print(f">> wrote {write_index({new: old for old, new in layout['file'].items()})}")
    if crowded := crowded_folders():
        print(f"!! folders over {MAX_FILES} files: {crowded}", file=sys.stderr)


if __name__ == "__main__":
    main()

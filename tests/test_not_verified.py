"""docs/not-verified.md is kept true by this test: each claim names what backs it, and goes stale visibly.

Every claim of the page is a ``##`` section that ends with one evidence line::

    *Evidence* (checked 2026-12-07): `results/x.json` (from `hub_configs/x.yaml`) · `tests/test_y.py::test_z`

naming results files (``results/...``) and tests (``tests/...``, optionally ``::function``) that back it, and, for a
results file, what it was made from. The rules:

1. every claim has one evidence line; every named path exists, a named test function is defined in its file, and a
   results file parses (JSON, or JSON lines);
2. a results file is not older than what it was made from. For a recipe (``hub_configs/*.yaml``) that means what a
   training run computes from (:func:`phrasezoo.training.recipe_guard.training_recipe`: a recipe's description or
   memory note may change later) is the same at the results file's last commit as now; for any other file, its last
   commit is not later than the results file's (so name a script only when any change to it should reopen the claim);
3. a claim is not older than its results: each named results file's last commit is on or before the day the claim
   was checked (a results file rewritten later may contradict it: read it again, then move the date);
4. no check date lies in the future.

Tests back a claim by running in CI on the current code, so they have no age; results do. Rules 2 and 3 read git
history (the last commit that touched each path), never file times, which a fresh clone sets all alike; without history (no git,
not a repository, a shallow clone) they are skipped.
"""

from __future__ import annotations

import ast
import datetime as dt
import functools
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from phrasezoo.core.recipes import recipe_from_dict
from phrasezoo.training.recipe_guard import changed_keys, training_recipe

ROOT = Path(__file__).resolve().parents[1]
PAGE = "docs/not-verified.md"
LINE = re.compile(r"^\*Evidence\* \(checked (?P<date>\d{4}-\d{2}-\d{2})\): (?P<items>.+)$")
ITEM = re.compile(r"^`(?P<path>[^`]+)`(?: \(from (?P<sources>`[^`]+`(?:, `[^`]+`)*)\))?$")


@dataclass(frozen=True)
class Evidence:
    """One evidence item: a results file or folder, or a test file (``::function`` optional), and its sources."""

    path: str
    sources: tuple[str, ...] = ()

    @property
    def file(self) -> str:
        return self.path.split("::", 1)[0]

    @property
    def function(self) -> str | None:
        return self.path.split("::", 1)[1] if "::" in self.path else None


@dataclass(frozen=True)
class Claim:
    title: str
    checked: dt.date
    evidence: tuple[Evidence, ...]


def parse_claims(text: str) -> list[Claim]:
    """The page's claims (its ``##`` sections); a ``ValueError`` names a claim whose evidence line is missing,
    repeated or unreadable."""
    claims = []
    for section in re.split(r"(?m)^## ", text)[1:]:
        title = section.splitlines()[0].strip()
        lines = [match for line in section.splitlines() if (match := LINE.match(line))]
        if len(lines) != 1:
            raise ValueError(f"claim '{title}': {len(lines)} evidence lines; one expected, as "
                             "*Evidence* (checked YYYY-MM-DD): `path` · `path` (from `source`)")  # fmt: skip
        items = []
        for raw in lines[0]["items"].split(" · "):
            match = ITEM.match(raw.strip())
            if match is None:
                raise ValueError(f"claim '{title}': cannot read the evidence item {raw!r}")
            items.append(Evidence(match["path"], tuple(re.findall(r"`([^`]+)`", match["sources"] or ""))))
        claims.append(Claim(title, dt.date.fromisoformat(lines[0]["date"]), tuple(items)))
    return claims


def _results_readable(path: Path) -> bool:
    files = sorted(p for p in path.rglob("*") if p.suffix in (".json", ".jsonl")) if path.is_dir() else [path]
    try:
        for file in files:
            text = file.read_text()
            _ = json.loads(text) if file.suffix == ".json" else [json.loads(x) for x in text.splitlines() if x.strip()]
    except (ValueError, UnicodeDecodeError):
        return False
    return True


def file_problems(claims: list[Claim], root: Path, today: dt.date) -> list[str]:
    """Rules 1 and 4: what is missing, unreadable or misplaced, one line each."""
    problems = []
    for claim in claims:
        if claim.checked > today:
            problems.append(f"'{claim.title}': checked {claim.checked}, a day still to come")
        for item in claim.evidence:
            path = root / item.file
            if not item.file.startswith(("results/", "tests/")):
                problems.append(f"'{claim.title}': {item.file} is neither a results file nor a test")
            elif not path.exists():
                problems.append(f"'{claim.title}': {item.file} does not exist")
            elif item.function and item.function not in {
                n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)
            }:
                problems.append(f"'{claim.title}': {item.file} defines no {item.function}")
            elif item.file.startswith("results/") and not _results_readable(path):
                problems.append(f"'{claim.title}': {item.file} does not parse as JSON (lines)")
            if item.sources and not item.file.startswith("results/"):
                problems.append(f"'{claim.title}': only a results file is made from something ({item.file})")
            problems += [f"'{claim.title}': {s} ({item.file} is made from it) does not exist"
                         for s in item.sources if not (root / s).exists()]  # fmt: skip
    return problems


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def has_history(root: Path) -> bool:
    """A git repository with its full history (a shallow clone's last commits say nothing about age)."""
    return _git(root, "rev-parse", "--is-shallow-repository") == "false"


def last_commits(root: Path, paths: list[str]) -> dict[str, tuple[str, int]]:
    """``{path: (sha, commit time)}`` of the last commit that touched each path (a folder: any file in it), from one
    ``git log`` over their history; a path no commit touched (not committed yet) is left out."""
    out = _git(root, "log", "--format=@%H %ct", "--name-only", "--", *sorted(set(paths))) or ""
    found: dict[str, tuple[str, int]] = {}
    commit = None
    for line in out.splitlines():
        if line.startswith("@"):
            sha, when = line[1:].split()
            commit = sha, int(when)
        elif line and commit is not None:
            for path in paths:
                if path not in found and (line == path or line.startswith(path.rstrip("/") + "/")):
                    found[path] = commit
    return found


@functools.cache
def _recipe_changes(root: Path, recipe: str, commit: str, head: str) -> tuple[str, ...] | None:
    """Keys of what a run computes from that differ between ``recipe`` at ``commit`` and at ``head`` (its last
    commit); None when either version cannot be read (then the commit times decide)."""
    try:
        before, after = (training_recipe(recipe_from_dict(yaml.safe_load(_git(root, "show", f"{sha}:{recipe}") or "")))
                         for sha in (commit, head))  # fmt: skip
    except (ValueError, KeyError, TypeError, yaml.YAMLError):
        return None
    return tuple(changed_keys(before, after))


def history_problems(claims: list[Claim], root: Path) -> list[str]:
    """Rules 2 and 3, from the last commits of the named files."""
    items = [(claim, i) for claim in claims for i in claim.evidence if i.file.startswith("results/")]
    commits = last_commits(root, [path for _, i in items for path in (i.file, *i.sources)])
    problems = []
    for claim, item in items:
        made = commits.get(item.file)
        if made is None:
            continue  # not committed yet: nothing to compare
        day = dt.datetime.fromtimestamp(made[1], dt.UTC).date()
        if day > claim.checked:
            problems.append(f"'{claim.title}': {item.file} changed on {day}, after the claim was checked "
                            f"({claim.checked}); read it again, then update the claim and its date")  # fmt: skip
        for source in item.sources:
            problems += _source_problems(root, claim.title, item.file, made, source, commits.get(source))
    return problems


def _source_problems(root: Path, title: str, results: str, made: tuple[str, int], source: str,
                     changed: tuple[str, int] | None) -> list[str]:  # fmt: skip
    if changed is None or changed[1] <= made[1]:
        return []
    if source.startswith("hub_configs/") and source.endswith(".yaml"):
        keys = _recipe_changes(root, source, made[0], changed[0])
        if keys == ():
            return []  # changed later, but not in anything a training run computes from
        detail = f"what a run computes from changed ({', '.join(keys)})" if keys else "it changed"
    else:
        detail = "it changed"
    return [f"'{title}': {results} is older than {source}: {detail} in {changed[0][:8]}, after the results' last "
            f"commit {made[0][:8]}; measure again, or name what it was made from"]  # fmt: skip


# ------------------------------------------------------------------------------------------------ the page itself
def test_every_claim_names_evidence_that_exists():
    claims = parse_claims((ROOT / PAGE).read_text())
    assert len(claims) >= 10 and all(claim.evidence for claim in claims)
    assert file_problems(claims, ROOT, dt.datetime.now(dt.UTC).date()) == []


def test_no_results_file_is_older_than_its_sources_or_newer_than_its_claim():
    if not has_history(ROOT):
        pytest.skip("no git history here (not a repository, or a shallow clone): rules 2 and 3 need it")
    assert history_problems(parse_claims((ROOT / PAGE).read_text()), ROOT) == []


def test_the_page_covers_spaces_loading_by_repo_id_and_every_checkpoint_that_loses_to_its_backbone():
    """The claims issue 65 asked for are there, and each checkpoint the zoo table shows below its backbone on a
    headline task has a claim of its own that names its results (the generated block lists them all)."""
    import runpy

    claims = {c.title: {e.file for e in c.evidence} for c in parse_claims((ROOT / PAGE).read_text())}
    assert "tests/spaces/test_space_build.py" in claims["Spaces"]
    assert "tests/spaces/test_converted_releases.py" in claims["Publishing to the Hub, and loading by repo id"]
    blocks = runpy.run_path(str(ROOT / "scripts" / "blocks.py"), run_name="phrasezoo_blocks")
    losing = {row["runs"][0] for row in blocks["ZOO"] if not all(v.beats for v in blocks["zoo_verdicts"](row))}
    named = {path for title, paths in claims.items() if title != "Checkpoints that do not beat their backbone"
             for path in paths}  # fmt: skip
    assert losing and losing <= named, f"no claim of their own names {sorted(losing - named)}"


# ------------------------------------------------------------------------------------------- the rules at work
def test_a_claim_without_evidence_or_with_an_unreadable_item_is_refused():
    with pytest.raises(ValueError, match="'Spaces': 0 evidence lines"):
        parse_claims("# Page\n\n## Spaces\n\nNever deployed.\n")
    with pytest.raises(ValueError, match="cannot read the evidence item"):
        parse_claims("## Spaces\n\n*Evidence* (checked 2026-12-07): tests/x.py\n")


def test_missing_files_and_functions_and_wrong_kinds_are_named(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_here():\n    pass\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.json").write_text("{not json")
    page = ("## A\n\n*Evidence* (checked 2026-12-07): `tests/test_x.py::test_gone` · `results/missing.json` · "
            "`results/r.json` (from `src/gone.py`) · `docs/page.md`\n")  # fmt: skip
    problems = file_problems(parse_claims(page), tmp_path, dt.date(2026, 12, 7))
    assert problems == [
        "'A': tests/test_x.py defines no test_gone",
        "'A': results/missing.json does not exist",
        "'A': results/r.json does not parse as JSON (lines)",
        "'A': src/gone.py (results/r.json is made from it) does not exist",
        "'A': docs/page.md is neither a results file nor a test",
    ]
    assert file_problems(parse_claims(page.replace("2026-12-07", "2026-12-09")), tmp_path, dt.date(2026, 12, 8))[0] == (
        "'A': checked 2026-12-09, a day still to come"
    )


def _commit(repo: Path, files: dict[str, str], day: str) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    when = f"{day}T12:00:00+00:00"
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "add", "-A"], check=True, env=env)
    subprocess.run([*git, "commit", "-qm", day], check=True, env=env)


def test_results_older_than_their_sources_or_newer_than_their_claim_are_found(tmp_path):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    name = next(p.name for p in sorted((ROOT / "hub_configs").glob("*.yaml")) if "\ndescription:" in p.read_text())
    recipe, path = (ROOT / "hub_configs" / name).read_text(), f"hub_configs/{name}"
    _commit(repo, {path: recipe, "bench.py": "v1"}, "2026-11-20")
    _commit(repo, {"results/r.json": "{}", "results/s.json": "{}"}, "2026-11-21")
    page = (f"## A\n\n*Evidence* (checked 2026-11-22): `results/r.json` (from `{path}`) · `results/s.json` (from "
            "`bench.py`)\n")  # fmt: skip
    assert has_history(repo) and history_problems(parse_claims(page), repo) == []
    described = recipe.replace("description:", "description: Reworded.", 1)
    assert described != recipe
    _commit(repo, {path: described}, "2026-11-23")
    assert history_problems(parse_claims(page), repo) == []  # a description is not what a run computes from
    data = yaml.safe_load(described)
    data["training"]["learning_rate"] = 2 * float(data["training"]["learning_rate"])
    _commit(repo, {path: yaml.safe_dump(data), "bench.py": "v2"}, "2026-11-24")
    _commit(repo, {"results/s.json": '{"again": 1}'}, "2026-11-25")
    problems = history_problems(parse_claims(page), repo)
    assert len(problems) == 2
    assert f"results/r.json is older than {path}" in problems[0]
    assert "training.learning_rate" in problems[0]
    assert problems[1].startswith("'A': results/s.json changed on 2026-11-25, after the claim was checked")
    assert not has_history(tmp_path / "not-a-repo")

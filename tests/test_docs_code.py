"""Every python and bash block of README.md and docs/**/*.md runs, or says why it cannot.

A block runs in a sandbox folder that looks like a fresh clone after the main job: ``examples/`` and, for every
``outputs/<recipe>`` a runnable block names, an export of that recipe made with the real export code from the embedded
defaults without training (the recipe's pretrained backbone; a method without one gets its tiny model). Untrained
weights make the numbers meaningless but exercise the same loading and encoding code a trained export does.

Code inside a generated block (``<!-- NAME:start -->`` ... ``<!-- NAME:end -->``, docs/blocks.yaml) is data its
renderer wrote, e.g. the GPU job's prepared lease commands: it is not run here (the renderer's own tests check it).
A hand-written block that cannot run here is marked, on the lines just above its fence, with
``<!-- docs-test: skip (the reason) -->`` (it trains for an hour, needs the Hub, a GPU or a token, starts a server
that runs until stopped, or is an API sketch with placeholders); the reason is required. The python blocks of a page
run in order in one process, so a later block may use what an earlier one defined (like a notebook).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
MARK = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<reason>[^)]*\S[^)]*)\)\s*-->")
RUNNABLE = {"python": "python", "py": "python", "bash": "bash", "sh": "bash", "shell": "bash"}
OUTPUT = re.compile(r"outputs/([a-z0-9][a-z0-9-]*)")


@dataclass(frozen=True)
class CodeBlock:
    page: str
    line: int
    lang: str
    code: str
    skip: str | None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


GENERATED = re.compile(r"<!-- ([A-Za-z0-9_.-]+):start -->.*?<!-- \1:end -->", re.S)


def code_blocks(page: Path) -> list[CodeBlock]:
    """The python and bash blocks of a page, each with the skip reason written above it (or None)."""
    text = page.read_text()
    generated = [(m.start(), m.end(), m.group(1)) for m in GENERATED.finditer(text)]
    blocks, end = [], 0
    for match in FENCE.finditer(text):
        lang = RUNNABLE.get(match.group(1).lower())
        before = text[end : match.start()]
        end = match.end()
        if lang is None:
            continue
        # the marker belongs to this block when only blank lines separate it from the fence
        tail = before.rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.fullmatch(tail.strip())
        line = text[: match.start()].count("\n") + 1
        rel = page.relative_to(ROOT).as_posix()
        reason = mark.group("reason") if mark else None
        inside = [name for start, stop, name in generated if start < match.start() < stop]
        if inside:
            reason = f"inside the generated block {inside[0]}: its renderer wrote it, and its tests check it"
        blocks.append(CodeBlock(rel, line, lang, match.group(2), reason))
    return blocks


PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCKS = [b for page in PAGES for b in code_blocks(page)]


def test_blocks_are_found_and_most_run():
    assert len(BLOCKS) >= 20
    assert sum(b.skip is None for b in BLOCKS) >= 8, "most examples should run; mark only what truly cannot"


def test_a_marker_needs_a_reason():
    for page in PAGES:
        for line in page.read_text().splitlines():
            if "docs-test:" in line:
                assert MARK.search(line), f"{page.name}: `{line.strip()}` needs the form <!-- docs-test: skip (why) -->"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Path:
    """A folder like a fresh clone after the main job: examples/ and untrained exports of the recipes named."""
    from phrasezoo.core.recipes import load_recipe
    from phrasezoo.hub.export import export_model
    from phrasezoo.zoo.registry import create_model, get_method

    root = tmp_path_factory.mktemp("clone")
    shutil.copytree(ROOT / "examples", root / "examples")
    recipes = sorted({name for b in BLOCKS if b.skip is None for name in OUTPUT.findall(b.code)})
    for name in recipes:
        recipe = load_recipe(name)
        method = get_method(recipe.method)
        model = create_model(recipe) if method.from_backbone and recipe.backbone else method.tiny_model()
        export_model(model, root / "outputs" / name, recipe, card=False)
    return root


def _env() -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _shell(code: str) -> str:
    """A bash block as it runs in the sandbox: the repository's .venv is this interpreter's environment."""
    return code.replace(".venv/bin/", f"{Path(sys.executable).parent}/")


PYTHON_PAGES = sorted({b.page for b in BLOCKS if b.lang == "python" and b.skip is None})
BASH_BLOCKS = [b for b in BLOCKS if b.lang == "bash" and b.skip is None]


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_python_blocks_run(sandbox, page):
    blocks = [b for b in BLOCKS if b.page == page and b.lang == "python" and b.skip is None]
    script = "\n".join(f"print('>> block {b.id}', flush=True)\n{b.code}" for b in blocks)
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=sandbox, env=_env(), capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, f"a python block of {page} failed (the last '>> block' line names it):\n" + (
        run.stdout[-3000:] + run.stderr[-3000:]
    )


@pytest.mark.parametrize("block", BASH_BLOCKS, ids=[b.id for b in BASH_BLOCKS])
def test_bash_blocks_run(sandbox, block):
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", _shell(block.code)],
        cwd=sandbox, env=_env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, f"{block.id} failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}"


def test_ci_runs_the_readme_test_command():
    """CI (.ci/run) runs exactly the test command the README shows, so a newcomer runs what CI runs."""
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    command = [line for line in ci if line and not line.startswith(("#", "set ", "cd "))]
    assert command == ["bash scripts/run_tests.sh"], command
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"^bash scripts/run_tests\.sh\s+#", readme, re.M), "the README must show the CI test command"

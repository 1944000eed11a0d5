"""Same results, bit for bit, across a refactoring of how training tasks are built (issue 45).

Each method's ``tests/methods/<name>/test_assembly.py`` declares a tiny version of its mini recipe (a tiny corpus, a few
steps, one thread, the shared parts on where the method has them: benchmark filter, teacher, lexicon term) and checks
that it trains to the weights and training facts recorded in ``assembly_golden.json`` beside it, first recorded
before the assembler existed. Bits depend on the CPU's float kernels, so a record is kept per kernel set
(:func:`cpu_kernels`); ``python -m tests.training.golden <name> ...`` adds this machine's. The lexicon term is a
hand-made one (no WordNet, no faiss, no teacher run); everything else is the real code path, through
``Method.build_task``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch

from tests.training.test_reproducibility import SENTENCES as REPRODUCIBILITY_SENTENCES

#: facts that change from run to run (time, date, machine), left out of the comparison
VOLATILE = ("training time (min)", "trained on", "device", "torch threads", "torch", "seconds", "time")
SENTENCES = [
    *REPRODUCIBILITY_SENTENCES,
    "The New York Times and the Washington Post wrote about the trade agreement in Paris.",
    "Climate change and deep learning were discussed at the United Nations in New York.",
]
TRAINING = {"batch_size": 4, "max_steps": 2, "learning_rate": 1e-3, "seed": 3, "num_threads": 1, "log_every": 1}
LEXICON = {"lexicon_weight": 0.5, "lexicon": {"max_strings": 8}}
TEACHER = {"distill_weight": 5.0, "teacher": "minilm-l6"}
#: ``root -> {"backbone"?, "model"?, "data", "method_args"}``: a method's tiny recipe, files it reads under ``root``
Spec = Callable[[Path], dict]


def corpus(root: Path) -> str:
    """The tiny corpus (:data:`SENTENCES`, three times) as a file under ``root``."""
    path = root / "corpus.txt"
    path.write_text("\n".join(SENTENCES * 3) + "\n")
    return str(path)


def tiny_lexicon_builder(options, teacher, filter_mode, progress=True):
    """A hand-made lexicon term in place of WordNet + teacher neighbourhoods (no global random state used)."""
    from phrasezoo.objectives.lexicon_distillation import LexiconDistillation, TeacherNeighbourhoods

    words = ["violin", "cello", "contrabass", "double bass", "tuba", "trumpet", "banana", "apple"]
    generator = torch.Generator().manual_seed(0)
    vectors = torch.nn.functional.normalize(torch.randn(len(words), 7, generator=generator), dim=-1)
    neighbours = [[(i + k) % len(words) for k in (1, 2, 3)] for i in range(len(words))]
    return LexiconDistillation(TeacherNeighbourhoods(words, vectors, neighbours), 2, 2, 0.1)


def train_tiny(method: str, spec: Spec, root: Path) -> dict:
    """Train ``method``'s tiny recipe in this process; its weights' hash and its training facts (in order)."""
    from phrasezoo.core.recipes import recipe_from_dict
    from phrasezoo.objectives import lexicon_distillation
    from phrasezoo.training.loop import RunOptions
    from phrasezoo.training.one_run import train_one_run

    found = spec(root)
    recipe = recipe_from_dict(
        {"name": "golden", "method": method, "repo_id": "test/golden",
         **({"backbone": found["backbone"]} if "backbone" in found else {}), "model": found.get("model", {}),
         "data": found["data"], "training": {**TRAINING, "method_args": found["method_args"]}}
    )  # fmt: skip
    original = lexicon_distillation.build_lexicon_distillation
    lexicon_distillation.build_lexicon_distillation = tiny_lexicon_builder
    try:
        run = train_one_run(recipe, RunOptions(root / "out", resume=False, progress=False))
    finally:
        lexicon_distillation.build_lexicon_distillation = original
    state = run.result.model.state_dict()
    digest = hashlib.sha256()
    for key in sorted(state):
        digest.update(key.encode())
        digest.update(state[key].detach().cpu().contiguous().numpy().tobytes())
    facts = [[k, v] for k, v in run.facts.items() if not any(word in k for word in VOLATILE)]
    facts = json.loads(json.dumps(facts, default=str).replace(str(root), "<root>"))
    return {"weights": digest.hexdigest(), "facts": facts}


def cpu_kernels() -> str:
    """The CPU instruction set that decides which float kernels torch runs (bf16 autocast included): the same
    recipe trains to other bits on another one (``amx`` on Intel AMX, ``avx512_bf16`` on AMD EPYC, ...)."""
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        flags = set()
    for name in ("amx_bf16", "avx512_bf16", "avx512f", "avx2"):
        if name in flags:
            return f"torch {torch.__version__}, {name.removesuffix('_bf16') if name == 'amx_bf16' else name}"
    return f"torch {torch.__version__}, {torch.backends.cpu.get_cpu_capability()}"


def close_facts(got: list, expected: list, rel: float = 0.02) -> bool:
    """The same facts in the same order, numbers (the logged losses) within ``rel`` of each other."""
    if isinstance(got, (int, float)) and isinstance(expected, (int, float)) and not isinstance(got, bool):
        return abs(got - expected) <= rel * max(abs(expected), 1e-3)
    if isinstance(got, dict) and isinstance(expected, dict):
        return got.keys() == expected.keys() and all(close_facts(got[k], expected[k], rel) for k in got)
    if isinstance(got, list) and isinstance(expected, list):
        return len(got) == len(expected) and all(close_facts(a, b, rel) for a, b in zip(got, expected))
    return got == expected


def check(method: str, spec: Spec, golden: Path, root: Path, monkeypatch, benchmarks_dir: Path) -> None:
    """Assert that ``method``'s tiny recipe trains to the weights and facts recorded in ``golden`` for this CPU's
    kernels, bit for bit. On kernels with no record, the facts must agree with every record, losses within 2%:
    the same computation, other rounding."""
    monkeypatch.setenv("PHRASEZOO_CACHE", str(root / "cache"))
    monkeypatch.setenv("PHRASEZOO_BENCHMARKS", str(benchmarks_dir))
    monkeypatch.chdir(root)
    records = json.loads(golden.read_text())["by_cpu_kernels"]
    got = train_tiny(method, spec, root)
    expected = records.get(cpu_kernels())
    if expected is not None:
        assert got["facts"] == expected["facts"]
        assert got["weights"] == expected["weights"]
        return
    for kernels, other in records.items():
        assert close_facts(got["facts"], other["facts"]), f"facts differ from the record of {kernels} beyond rounding"


def record(method: str) -> None:
    """Train ``method``'s tiny recipe (``tests.methods.<method>.test_assembly.SPEC``) and add this CPU's record to
    its golden file (the records of other kernels stay)."""
    from tests.conftest import BENCHMARKS_DIR

    module = importlib.import_module(f"tests.methods.{method}.test_assembly")
    torch.set_num_threads(1)
    os.environ["PHRASEZOO_BENCHMARKS"] = str(BENCHMARKS_DIR.resolve())
    path = Path(module.__file__).with_name("assembly_golden.json")
    with tempfile.TemporaryDirectory() as folder:
        os.environ["PHRASEZOO_CACHE"] = str(Path(folder) / "cache")
        cwd = os.getcwd()
        os.chdir(folder)
        found = train_tiny(method, module.SPEC, Path(folder))
        os.chdir(cwd)
    records = json.loads(path.read_text())["by_cpu_kernels"] if path.exists() else {}
    records[cpu_kernels()] = found
    path.write_text(json.dumps({"by_cpu_kernels": records}, indent=1) + "\n")
    print(method, cpu_kernels(), found["weights"], flush=True)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        record(name)

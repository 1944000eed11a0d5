"""The training entry points as a new user meets them (issue 65, item 7): ``python train.py``, the documented
``accelerate launch`` command, and ``accelerate launch -m phrasezoo.cli train`` (a wheel install has no train.py).

A bad recipe is one ``error:`` line, said once (the first process's), exit status 2 from the processes, no traceback
of phrasezoo's (accelerate then reports the failed process with a traceback of its own, which names that status),
and the documented launch prints no "values were not passed" warning. Two launches at most: each
costs about 10 s.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from phrasezoo.core.recipes import list_recipes
from phrasezoo.train import LAUNCH_FLAGS

ROOT = Path(__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    "OMP_NUM_THREADS": "1",
    "TQDM_DISABLE": "1",
}
LAUNCH = [sys.executable, "-m", "accelerate.commands.launch"]
#: a released recipe, and that name misspelt as a new user might
RECIPE = next(name for name in list_recipes() if name.endswith("-mini"))
MISSPELT = RECIPE[:-3] + RECIPE[-2:]


def _run(command: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)


def _our_tracebacks(output: str) -> list[str]:
    """Traceback frames in phrasezoo's own files (the launcher's report of a failed process is its own)."""
    return re.findall(r'File ".*phrasezoo/[^"]*"', output)


def test_python_train_py_with_a_misspelt_recipe_is_one_line(tmp_path):
    proc = _run([sys.executable, str(ROOT / "train.py"), MISSPELT], tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"error: No recipe '{MISSPELT}'")
    assert f"Did you mean {RECIPE}" in proc.stderr and "Traceback" not in proc.stderr


def test_the_documented_two_process_launch_says_a_bad_recipe_once_and_no_launch_warning(tmp_path):
    proc = _run([*LAUNCH, *LAUNCH_FLAGS.split(), str(ROOT / "train.py"), MISSPELT], tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert output.count(f"No recipe '{MISSPELT}'") == 1, output[-3000:]
    assert re.search(rf"^error: No recipe '{MISSPELT}'.*Did you mean {RECIPE}", output, re.M)
    assert not _our_tracebacks(output), output[-3000:]
    assert "were not passed" not in output


@pytest.mark.skipif(torch.cuda.is_available(), reason="fp16 is refused on a CPU only")
def test_a_wheel_installs_launch_runs_the_cli_and_refuses_fp16_on_a_cpu_before_any_work(tmp_path):
    flags = ["--num_processes", "1", "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no"]
    command = [*LAUNCH, *flags, "-m", "phrasezoo.cli", "train", RECIPE, "--set", "training.mixed_precision=fp16"]
    proc = _run(command, tmp_path)
    assert proc.returncode != 0, proc.stdout[-2000:] + proc.stderr[-2000:]  # the launcher's own report follows
    assert proc.stderr.startswith("error: ") and "training.mixed_precision fp16" in proc.stderr
    assert not _our_tracebacks(proc.stdout + proc.stderr) and "were not passed" not in proc.stderr
    assert not (tmp_path / "outputs").exists()  # refused before the run's folder, model or data

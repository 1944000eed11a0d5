"""A pack's ``run`` tool call, and what makes it safe to fire: the self-test, the check of an existing pack
(``phrasezoo device call``) and the packs record (``results/gpu-job/device-packs.json``, the docs' table).

The self-test trains a pack for a few steps on this CPU from the pack alone, in a fresh process where the data
libraries cannot be imported and the data cache is empty: what the GPU run does, shortened.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from phrasezoo.core.files import PACKAGE_DIR, REPO_ROOT, atomic_write_text
from phrasezoo.core.recipes import load_recipe, recipe_from_dict
from phrasezoo.gpu_job.travel import DEFAULT_TIMEOUT_S, MiB, check_fits, read_manifest, travel_size, verify_files
from phrasezoo.training.recipe_guard import changed_keys, training_recipe


def run_call(pack_dir: str | Path, timeout_s: int = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """The ``run`` tool call that trains ``pack_dir`` (a path relative to the repository root) on the GPU."""
    pack_dir = Path(pack_dir).as_posix()
    command = (
        "set -o pipefail; nvidia-smi -L; PYTHONPATH=src PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false python3 -m "
        f"phrasezoo.gpu_job run {pack_dir} --out $OUT --device cuda --forbid-imports 2>&1 | tee $OUT/run.log"
    )
    return {"command": command, "carry": [pack_dir], "timeout_s": timeout_s}


def print_call(pack: Path, timeout_s: int) -> None:
    """Print the run call of ``pack`` (the run tool carries only paths inside the repository)."""
    try:
        relative = pack.resolve().relative_to(REPO_ROOT.resolve())
    except ValueError:
        print(f">> {pack} is outside the repository {REPO_ROOT}: the run tool carries only paths inside it.")
        return
    print(">> the run tool call for a GPU lease (then give_back):")
    print(json.dumps(run_call(relative, timeout_s), indent=1))


def selftest(pack: Path, steps: int = 3) -> dict[str, Any]:
    """Train ``pack`` for ``steps`` steps per seed on this CPU, from the pack alone, in a fresh process where the
    data libraries cannot be imported and the data cache is empty: what the GPU run does, shortened. Raises when it
    fails; returns the seconds per step after the first (one thread)."""
    source = PACKAGE_DIR.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")]))}
    env["OMP_NUM_THREADS"] = "1"
    env["HF_HUB_OFFLINE"] = "1"  # no network on the machine
    with tempfile.TemporaryDirectory(prefix="phrasezoo-selftest-") as out, tempfile.TemporaryDirectory() as cache:
        env["PHRASEZOO_CACHE"] = cache  # no data caches there either: an empty one here
        command = [sys.executable, "-m", "phrasezoo.gpu_job", "run", str(pack), "--out", out, "--device", "cpu",
                   "--max-steps", str(steps), "--forbid-imports", "--budget-minutes", "0"]  # fmt: skip
        print(f">> self-test: {steps} steps per seed on this CPU from the pack alone (datasets, spaCy, faiss blocked; "
              "an empty data cache)")  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"the pack's self-test failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        record = json.loads((Path(out) / "run_manifest.json").read_text())
    per_step = record["runs"][0]["seconds_per_step_median"] or record["runs"][0]["seconds_per_step"]
    print(f">> self-test passed: {steps} steps per seed in {record['seconds']:.0f} s ({per_step:.2f} s/step here)")
    return {"steps per seed": steps, "cpu seconds per step": round(per_step, 3), "cpu": record["device_name"],
            "torch threads": record["runs"][0]["facts"].get("torch threads")}  # fmt: skip


def record_pack(path: Path, pack: Path, manifest: dict, test: dict | None, timeout_s: int) -> None:
    """Add this pack's facts and run call to the packs record (``results/gpu-job/device-packs.json``): the docs' table."""
    try:
        relative = pack.resolve().relative_to(REPO_ROOT.resolve())
    except ValueError:
        print(f">> not recorded in {path}: {pack} is outside the repository")
        return
    path = REPO_ROOT / path
    records = json.loads(path.read_text()) if path.exists() else {}
    records[manifest["recipe_name"]] = {
        "created": manifest["created"],
        "overrides": manifest["overrides"],
        "commit": manifest["commit"],
        "dirty": manifest["dirty"],
        "data_fingerprint": manifest["data_fingerprint"],
        "training_examples": manifest["training_examples"],
        "seeds": manifest["seeds"],
        "steps_per_seed": manifest["steps_per_seed"],
        "pack_mib": manifest["pack_mib"],
        "repository_mib": round(travel_size(REPO_ROOT) / MiB, 2),
        "returned_weights_mib": manifest["returned_weights_mib"],
        "row_cut": manifest["row_cut"]["note"] if manifest["row_cut"] else None,
        **({"teacher_rows": [t["note"] for t in manifest["teacher_rows"]]} if manifest.get("teacher_rows") else {}),
        "selftest": test,
        "call": run_call(relative, timeout_s),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(dict(sorted(records.items())), indent=1) + "\n")


def call_command(args: argparse.Namespace) -> int:
    """``phrasezoo device call``: check an existing pack (files, sizes, the recipe, one CPU step from the pack with
    this checkout) and print its run call again; 2 when the recipe changed since it was packed."""
    pack = Path(args.pack)
    manifest = read_manifest(pack)
    verify_files(pack, manifest)
    size, tree = check_fits(pack, args.max_mib, REPO_ROOT)
    print(f">> {manifest['recipe_name']}: pack {size:.1f} MiB + repository {tree or 0:.1f} MiB travel")
    rebuild = f"rebuild it with `phrasezoo device pack {manifest['recipe_name']}`"
    changed = _recipe_changes(manifest)
    if changed:
        print(f"error: the recipe changed since it was packed ({', '.join(changed[:5])}): {rebuild}.", file=sys.stderr)
        return 2
    if (
        manifest.get("commit")
        and subprocess.run(
            ["git", "diff", "--quiet", manifest["commit"], "--", "src/"], cwd=REPO_ROOT, capture_output=True
        ).returncode
    ):
        print(f">> note: src/ changed since the pack was built at {manifest['commit'][:10]}; if the change touches "
              f"training or the recipe's data, {rebuild}.")  # fmt: skip
    if not args.no_selftest:
        selftest(pack, steps=1)  # this tree trains this pack: what the lease will run
    print_call(pack, args.timeout_s)
    return 0


def _recipe_changes(manifest: dict) -> list[str]:
    """Keys of the recipe that changed since the pack was built (what its weights would be trained under)."""
    current = load_recipe(manifest.get("recipe_source") or manifest["recipe_name"], manifest["overrides"])
    return changed_keys(training_recipe(recipe_from_dict(manifest["recipe"])), training_recipe(current))

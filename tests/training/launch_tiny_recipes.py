"""Run by ``accelerate launch --multi_gpu --num_processes 2`` (see ``test_accelerate_launch.py``): train.py's code path
on every tiny recipe in a folder, in turn, then an interrupted and resumed run against an uninterrupted one.

``python -m accelerate.commands.launch ... tests/training/launch_tiny_recipes.py <folder>``: ``<folder>/recipes/*.yaml``
are trained and exported with ``train.py``'s entry point (:func:`phrasezoo.train.main`) into
``<folder>/out/<name>``, each process with one thread. The lexicon term is the golden tests' hand-made one (no WordNet,
no faiss), patched in each process, as :mod:`tests.training.golden` does in one process. Then ``<folder>/resume.yaml``
is trained to its end (``out/resume-a``) and, in ``out/resume-b``, stopped after step 3 (``--stop-after-steps``) and
resumed from its step-2 checkpoint; rank 0 writes ``<folder>/resume.json`` with both runs' largest weight difference.
One launch for everything: a launch costs more than a tiny recipe's training.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file


def main(folder: Path) -> None:
    from phrasezoo.objectives import lexicon_distillation
    from phrasezoo.train import main as train_main
    from phrasezoo.training.loop import TrainingInterrupted
    from tests.training.golden import tiny_lexicon_builder

    torch.set_num_threads(1)
    lexicon_distillation.build_lexicon_distillation = tiny_lexicon_builder
    out = folder / "out"
    for recipe in sorted((folder / "recipes").glob("*.yaml")):
        train_main([str(recipe), "--output-dir", str(out / recipe.stem), "--no-progress", "--no-resume"])
    resume = str(folder / "resume.yaml")
    train_main([resume, "--output-dir", str(out / "resume-a"), "--no-progress", "--no-resume"])
    try:
        train_main([resume, "--output-dir", str(out / "resume-b"), "--no-progress", "--stop-after-steps", "3"])
        raise AssertionError("the run was not interrupted")
    except TrainingInterrupted:
        pass
    train_main([resume, "--output-dir", str(out / "resume-b"), "--no-progress"])
    if torch.distributed.get_rank() == 0:
        a, b = (load_file(out / name / "model.safetensors") for name in ("resume-a", "resume-b"))
        differences = {key: float((a[key].float() - b[key].float()).abs().max()) for key in a}
        facts = json.loads((out / "resume-b" / "training_facts.json").read_text())
        record = {"keys": sorted(a) == sorted(b), "max_difference": max(differences.values()), "facts": facts}
        (folder / "resume.json").write_text(json.dumps(record, default=str))


if __name__ == "__main__":
    main(Path(sys.argv[1]))

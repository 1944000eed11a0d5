"""Run by ``accelerate launch`` (see ``test_paper_recipes.py``): train.py's entry point on several recipes in one
process, one after the other, because a launch costs more than a tiny recipe's training.

``python -m accelerate.commands.launch ... tests/recipes_offline/launch_paper_recipes.py <work> <plan.json>``:
``plan.json`` maps a recipe file to its ``--set`` arguments; each recipe is trained and exported into
``<work>/out/<recipe name>`` by :func:`phrasezoo.train.main`. A recipe that fails does not stop the others:
its traceback is written to ``<work>/out/<recipe name>.error``.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path


def main(work: Path, plan: Path) -> None:
    from phrasezoo.train import main as train_main

    for recipe, sets in json.loads(plan.read_text()).items():
        out = work / "out" / Path(recipe).stem
        try:
            train_main([recipe, "--output-dir", str(out), "--no-progress", "--no-resume", *sets])
        except Exception:  # noqa: BLE001 - recorded for the test of this recipe
            out.parent.mkdir(parents=True, exist_ok=True)
            out.with_name(out.name + ".error").write_text(traceback.format_exc())


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))

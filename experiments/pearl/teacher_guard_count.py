"""Rule 21, step 0: how many name rows the teacher guard would switch off, before any run is spent on it.

For every alias direction of the ``names`` source (anchor -> another name of it, each with the anchor's look-alike
siblings as its hard negatives, exactly as the recipe builds them: ``names_max`` 20000, ``names_siblings`` 4), the
teacher's cosines to the alias and to each sibling are read from the teacher cache (rows cached by content, so a run
that trained with the source has them all; missing ones are embedded). A direction is misranked when a sibling is at
least as close to the anchor as the alias (:func:`phrasezoo.objectives.terms.misranked_rows`'s test). A batch draws
``hard_negatives`` (2) of the siblings, so the share of drawn rows switched off is also given in expectation.

    OMP_NUM_THREADS=1 .venv/bin/python experiments/pearl/teacher_guard_count.py \
        --output results/pearl/experiments/teacher-guard/teacher-guard-step0.json

A seeded sample of directions (``--sample``, 2000) is judged: the teacher embeds the strings its cache lacks (the
runs cached only the rows they drew), and 2000 directions give the share to about +-1 point.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
from math import comb
from pathlib import Path

import torch

from phrasezoo.core.files import atomic_write_text
from phrasezoo.data.benchmark_filter import load_blocklist
from phrasezoo.data.benchmarks.held_out import dev_set_strings
from phrasezoo.methods.pearl.aliases.name_aliases import name_alias_rows
from phrasezoo.objectives.teacher import teacher_embeddings


def misranked_share(alias_cos: float, sibling_cos: list[float], drawn: int) -> tuple[bool, float]:
    """``(a sibling ranks at or above the alias, chance that a draw of ``drawn`` siblings holds one)``."""
    bad = sum(c >= alias_cos for c in sibling_cos)
    k = len(sibling_cos)
    take = min(drawn, k)
    return bad > 0, 1.0 - comb(k - bad, take) / comb(k, take)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--teacher", default="mpnet-base")
    parser.add_argument("--names-max", type=int, default=20000)
    parser.add_argument("--siblings", type=int, default=4)
    parser.add_argument("--drawn", type=int, default=2, help="hard negatives a batch draws per row (the recipe's)")
    parser.add_argument("--sample", type=int, default=2000, help="alias directions judged, drawn with seed 0 (0: all)")
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    alias = {"names_max": args.names_max, "names_siblings": args.siblings}
    pairs, siblings, facts = name_alias_rows(alias, load_blocklist(), lambda: dev_set_strings(progress=False))
    directions = [(a, b) for x, y in pairs for a, b in ((x, y), (y, x)) if siblings.get(a)]
    total = len(directions)
    if args.sample and args.sample < total:  # the teacher embeds what its cache lacks: a seeded sample is enough
        directions = random.Random(0).sample(directions, args.sample)
    strings = sorted({s for a, b in directions for s in (a, b, *siblings[a])})
    teacher = teacher_embeddings(strings, args.teacher, progress=True)
    rows, found = teacher.lookup(strings)
    unit = torch.nn.functional.normalize(rows.float(), dim=-1)
    position = {s: i for i, s in enumerate(strings)}
    any_bad, expected, examples = 0, 0.0, []
    for anchor, other in directions:
        a = unit[position[anchor]]
        alias_cos = float(unit[position[other]] @ a)
        sibling_cos = [float(unit[position[s]] @ a) for s in siblings[anchor]]
        bad, share = misranked_share(alias_cos, sibling_cos, args.drawn)
        any_bad += bad
        expected += share
        if bad and len(examples) < 12:
            worst = max(zip(sibling_cos, siblings[anchor]))
            examples.append({"anchor": anchor, "alias": other, "alias_cos": round(alias_cos, 3),
                             "sibling": worst[1], "sibling_cos": round(worst[0], 3)})  # fmt: skip
    n = len(directions)
    report = {
        "rule": "docs/experiments/pearl.md, rule 21, step 0",
        "teacher": args.teacher,
        "alias_directions_with_siblings": total,
        "judged (seeded sample)": n,
        "misranked_by_some_sibling": any_bad,
        "misranked_share": round(any_bad / n, 4),
        "expected_share_of_drawn_rows": round(expected / n, 4),
        "drawn_siblings_per_row": args.drawn,
        "strings_not_in_teacher": int((~found).sum()),
        "passes_step0": expected / n >= 0.05,
        "examples": examples,
        "facts": facts,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": f"OMP_NUM_THREADS=1 .venv/bin/python experiments/pearl/teacher_guard_count.py --sample {args.sample} "
        f"--output {args.output}",
    }
    atomic_write_text(Path(args.output), json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k not in ("examples", "facts")}, indent=1))


if __name__ == "__main__":
    main()

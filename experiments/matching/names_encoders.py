"""Issue 46 item 5: the default matcher's encoder, MiniLM or a PEARL export, judged on part 1's five dev domains.

Rule 22 of ``docs/experiments/matching.md`` (written before these numbers): each encoder gets the default's feature
set retrained on its own vectors, scored two-fold cross-fitted (``names_dev.cross_fitted``). A PEARL export replaces
MiniLM only if its mean top-1 over the five domains beats MiniLM's by more than 0.3 points and it loses no more
than 0.5 points on any domain; among those that pass, the best mean wins. Reported, not deciding: each encoder
alone (cosine nearest neighbour among the same candidates). Test splits are never read.

    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/names_encoders.py \
        --models baseline:minilm-l6 outputs/pearl-ref outputs/pearl-names
    .venv/bin/python scripts/blocks.py --write names-encoders-dev
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from matching_dev import RESULTS, CachedEncoder  # noqa: E402
from names_dev import (  # noqa: E402
    ALL_DOMAINS,
    CANDIDATE_SETS,
    LABELS,
    SINGLE,
    by_domain,
    cross_fitted,
    fixed_scores,
    load_domains,
)

OUT = RESULTS / "names-encoders-dev.json"
DEFAULT = "baseline:minilm-l6"
TORCH_TEST_FILE = Path("results/matching/names-test-baseline-minilm-l6.json")  # the torch default's last test read
MEAN_MARGIN, DOMAIN_BAR = 0.3, 0.5  # rule 22, in accuracy points


def decide(rows: dict[str, dict], default: str = DEFAULT) -> dict:
    """Rule 22 on the cross-fitted rows: per candidate its gain on the mean and its worst domain loss against
    ``default``, whether it passes, and the chosen encoder (``default`` when none passes)."""
    ref = rows[default]["matcher"]
    checks = {}
    for name, row in rows.items():
        if name == default:
            continue
        new = row["matcher"]
        gain = round(100 * (new["mean"]["accuracy"] - ref["mean"]["accuracy"]), 2)
        losses = {d: round(100 * (ref[d]["accuracy"] - new[d]["accuracy"]), 2) for d in ALL_DOMAINS}
        worst = max(losses, key=losses.get)
        checks[name] = {"mean_gain": gain, "worst_domain": worst, "worst_loss": losses[worst],
                        "passes": gain > MEAN_MARGIN and losses[worst] <= DOMAIN_BAR}  # fmt: skip
    passing = [n for n, c in checks.items() if c["passes"]]
    chosen = max(passing, key=lambda n: checks[n]["mean_gain"]) if passing else default
    return {"checks": checks, "chosen": chosen}


def measure(model: str, features: list[str], candidates: int) -> dict:
    """One encoder's cross-fitted matcher row and its cosine-alone row, per domain."""
    encoder = CachedEncoder(model)
    tables = load_domains("dev", encoder, candidates)
    scores, parts = cross_fitted(tables, features)
    return {"encoder": encoder.name, "revision": encoder.revision, "matcher": by_domain(parts, scores),
            "alone": by_domain(tables, fixed_scores(tables, SINGLE["emb alone"]))}  # fmt: skip


def main() -> None:
    from phrasezoo.match.model.learned import default_combination

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", required=True, help=f"{DEFAULT} first, then the export folders")
    parser.add_argument("--candidates", type=int, default=10)
    parser.add_argument("--output", type=Path, default=OUT, help=f"the results file (default {OUT})")
    parser.add_argument("--rule", type=int, default=22, help="the rule of docs/experiments/matching.md it answers")
    args = parser.parse_args()
    if args.models[0] != DEFAULT:
        parser.error(f"the first model must be the reference, {DEFAULT}")
    os.environ.setdefault("PHRASEZOO_NO_PROGRESS", "1")
    feature_set = default_combination().meta["feature_set"]
    rows = {}
    for model in args.models:
        rows[model] = measure(model, CANDIDATE_SETS[feature_set], args.candidates)
        print(model, {d: rows[model]["matcher"][d]["accuracy"] for d in (*ALL_DOMAINS, "mean")}, flush=True)
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "split": "dev",
              "feature_set": feature_set, "candidates": args.candidates, "rows": rows,
              "rule": f"docs/experiments/matching.md rule {args.rule}", "file": _relative(args.output),
              "command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/names_encoders.py --models "
                         + " ".join(args.models) + _options(args)}  # fmt: skip
    report["decision"] = decide(rows)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    print(render(report))
    print(f"wrote {args.output}", file=sys.stderr)


def _relative(path: Path) -> str:
    """``path`` as the results files name it: relative to the repository when inside it."""
    root = Path(__file__).resolve().parents[2]
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)


def _options(args) -> str:
    """The non-default options of the command line, for the report's reproduce line."""
    out = "" if args.output == OUT else f" --output {_relative(args.output)}"
    return out + ("" if args.rule == 22 else f" --rule {args.rule}")


def render(report: dict) -> str:
    """Rule 22's dev table (matcher cross-fitted, encoder alone) and the decision it gives."""
    head = "| encoder | row | " + " | ".join(LABELS[d] for d in ALL_DOMAINS) + " | mean |"
    lines = [head, "|---|---|" + "---:|" * (len(ALL_DOMAINS) + 1)]
    for model, row in report["rows"].items():
        for kind, label in (("matcher", "default's features, cross-fitted"), ("alone", "encoder alone")):
            cells = [f"{100 * row[kind][d]['accuracy']:.1f}" for d in (*ALL_DOMAINS, "mean")]
            lines.append(f"| {model} | {label} | " + " | ".join(cells) + " |")
    decision = report["decision"]
    notes = "; ".join(
        f"{name}: mean {c['mean_gain']:+.2f}, worst domain {LABELS[c['worst_domain']]} {-c['worst_loss']:+.2f} "
        f"({'passes' if c['passes'] else 'fails'})"
        for name, c in decision["checks"].items()
    )
    chosen = decision["chosen"]
    rule = report.get("rule", "rule 22").rsplit(" ", 2)[-2:]
    source = report.get("file", str(OUT))
    verdict = (f"no candidate passes, **{chosen}** stays the encoder" if chosen == DEFAULT
               else f"**{chosen}** passes with the best mean")  # fmt: skip
    return "\n".join(lines) + (
        f"\n\nTop-1 accuracy on dev (AutoFJ: mean over dev-10), feature set `{report['feature_set']}`. Against "
        f"{DEFAULT}: {notes}. {' '.join(rule).capitalize()}: {verdict}. From `{source}` (`{report['command']}`, "
        f"{report['created'][:10]})."
    )


def render_test_pair(report: dict) -> str:
    """The test read of a ``hybrid:<encoder>`` matcher beside the torch default's (``TORCH_TEST_FILE``: every such read
    was made while it was the default, until round 8), top-1 (MRR@10) per domain and the difference in points."""
    default = json.loads(TORCH_TEST_FILE.read_text())
    mine = next(iter(report["rows"]))
    rows = {"hybrid:baseline:minilm-l6 (torch, the default until round 8)": default["rows"]["default (hybrid)"],
            mine: report["rows"][mine]}  # fmt: skip
    lines = ["| matcher (test) | " + " | ".join(LABELS[d] for d in ALL_DOMAINS) + " | mean |",
             "|---|" + "---:|" * (len(ALL_DOMAINS) + 1)]  # fmt: skip
    common = [d for d in ALL_DOMAINS if all(d in row for row in rows.values())]
    for name, row in rows.items():
        cells = [f"{100 * row[d]['accuracy']:.1f} ({row[d]['mrr10']:.3f})" if d in row else "not run"
                 for d in ALL_DOMAINS]  # fmt: skip
        cells.append(_mean_cell(row, common, len(common) < len(ALL_DOMAINS)))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    a, b = rows.values()
    diff = [f"{100 * (b[d]['accuracy'] - a[d]['accuracy']):+.1f}" if d in common else "–" for d in ALL_DOMAINS]
    diff.append(f"{100 * (_mean(b, common) - _mean(a, common)):+.1f}")
    lines.append("| difference, top-1 points | " + " | ".join(diff) + " |")
    partial = (
        ""
        if len(common) == len(ALL_DOMAINS)
        else (f" The mean is over the domains both rows ran ({', '.join(LABELS[d] for d in common)}).")
    )
    return "\n".join(lines) + (
        f"\n\nTop-1 accuracy (MRR@10); AutoFJ: mean over its test datasets.{partial} From `{TORCH_TEST_FILE}` "
        f"({default['created'][:10]}) and `{report['file']}` (`{report['command']}`, {report['created'][:10]})."
    )


def _mean(row: dict, domains: list[str]) -> float:
    return sum(row[d]["accuracy"] for d in domains) / len(domains)


def _mean_cell(row: dict, domains: list[str], partial: bool) -> str:
    """The row's mean cell: its own five-domain mean, or the mean top-1 over ``domains`` when a row skipped some."""
    if not partial:
        return f"{100 * row['mean']['accuracy']:.1f} ({row['mean']['mrr10']:.3f})"
    return f"{100 * _mean(row, domains):.1f}"


if __name__ == "__main__":
    main()

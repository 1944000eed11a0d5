"""The hybrid matcher's encoder: MiniLM or a zoo model, by the rule written before the zoo models' numbers existed.

Rule (docs/experiments/matching.md, "The encoder"): each encoder goes through the same ``+hub`` combination, trained
and scored leave-one-dataset-out on AutoFJ's dev-10 with 10 candidates per channel. The default encoder becomes the
one with the best cross-fitted dev accuracy. MiniLM stays on a tie within 0.3 points (it is the embedded offline
default and the fastest). A zoo model also needs an alias-proxy ``name->alias`` MRR at least raw MiniLM's. Nothing
here reads test-40.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/matching_vectors.py --model outputs/pearl-mini   # per model, once
    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/matching_encoders.py \
        --models baseline:minilm-l6 outputs/pearl-mini outputs/phrase-bert-mini
    .venv/bin/python scripts/blocks.py --write dev-encoders
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import matching_dev as study  # noqa: E402
from matching_alias_proxy import alias_mrr, load_alias_groups  # noqa: E402

RESULTS_FILE = study.RESULTS / "dev-encoders.json"
DEFAULT = "baseline:minilm-l6"
TIE = 0.003  # MiniLM stays unless another encoder is better by more than 0.3 points of dev accuracy


def choose(rows: dict[str, dict], default: str = DEFAULT) -> tuple[str, str]:
    """``(encoder, why)`` by the rule: the best dev accuracy, the default on a tie within ``TIE``, and a zoo model
    only when its alias-proxy ``name->alias`` MRR is at least raw MiniLM's (the default's ``emb alone`` row)."""
    base = rows[default]
    best = max(rows, key=lambda name: rows[name]["accuracy"])
    if best == default or rows[best]["accuracy"] - base["accuracy"] <= TIE:
        return default, f"no encoder beats {default} by more than {100 * TIE:.1f} points of dev accuracy"
    if rows[best]["alias_proxy_raw"]["name->alias"] < base["alias_proxy_raw"]["name->alias"]:
        return default, f"{best} has the best dev accuracy but ranks aliases below raw {default} on the proxy"
    return best, f"{best}: the best dev accuracy, and aliases ranked at least as well as raw {default}"


def run(args) -> None:
    from phrasezoo.match.model.combinations import Combination

    groups = load_alias_groups()
    names = study.FEATURE_SETS["+hub"]
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "candidates": args.candidates,
              "features": "+hub", "split": "dev", "tie": TIE,
              "command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/matching_encoders.py --models "
                         + " ".join(args.models), "rows": {}}  # fmt: skip
    for model in args.models:
        encoder = study.CachedEncoder(model)
        tables = study.load_tables("dev", encoder, args.candidates)
        result = study.score_cross_fitted(tables, names, "ranked")
        result.pop("scores")
        result["revision"] = encoder.revision
        result["alias_proxy_raw"] = alias_mrr(groups, study.proxy_scorer(encoder, groups, Combination(["emb"], [1.0])))
        report["rows"][encoder.name] = result
        study.print_row(encoder.name, result)
    report["chosen"], report["why"] = choose(report["rows"])
    RESULTS_FILE.write_text(json.dumps(report, indent=1))
    print(f"chosen: {report['chosen']} ({report['why']}); wrote {RESULTS_FILE}", file=sys.stderr)


def render_dev_encoders(report: dict) -> str:
    """The docs block: each encoder's cross-fitted dev metrics and raw alias-proxy MRR, and the rule's choice."""
    lines = ["| encoder (`+hub`, dev-10, leave one dataset out) | revision | accuracy | recall at P 0.9 | best F1 | "
             "candidates hold gold | raw cosine on the alias proxy, name->alias |",
             "|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for name, row in report["rows"].items():
        cells = [f"{100 * row[k]:.1f}" for k in ("accuracy", "recall_at_p90", "best_f1", "candidate_recall")]
        lines.append(f"| {name} | `{row['revision']}` | " + " | ".join(cells)
                     + f" | {row['alias_proxy_raw']['name->alias']:.3f} |")  # fmt: skip
    return "\n".join(lines) + (
        f"\n\nChosen: **{report['chosen']}** ({report['why']}). From `{RESULTS_FILE}` (`{report['command']}`, "
        f"created {report['created'][:16]})."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=[DEFAULT], help="encoder specs; the first is the default")
    parser.add_argument("--candidates", type=int, default=10)
    run(parser.parse_args())


if __name__ == "__main__":
    main()

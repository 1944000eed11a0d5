"""The companies example of docs/matching.md: a join where some rows have no partner (issue 64).

15 companies (``examples/open-world/companies.csv``) and 26 vendor spellings (``vendors.csv``): 15 of the companies
under other spellings, 11 vendors that are not among them, several a sibling of one ("Apple Inc." and "Alphabet
Inc.", "General Motors" and "General Electric"). The default matcher joins them at ``threshold="auto"`` for each
target precision, then once more after labelling 8 answers (the least certain first, replies from the ``truth``
column, as ``phrasezoo match label`` would ask them); every kept answer is written with its verdict to
``results/matching/companies-open-world.json``, which the page's block renders.

    .venv/bin/python experiments/matching/companies_open_world.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from phrasezoo.match import calibrate, join

EXAMPLES = Path("examples/open-world")
RESULTS = Path("results/matching/companies-open-world.json")
TARGETS = (0.8, 0.9, 0.95)
LABELS = 8


def verdicts(result: pd.DataFrame, truth: dict[str, str]) -> list[dict]:
    """Every vendor's answer (kept or not) with what it should have been."""
    rows = []
    for _, r in result.iterrows():
        expected = truth.get(r["right"]) or None
        rows.append({"vendor": r["right"], "answer": r["left"] if pd.notna(r["left"]) else None,
                     "score": None if pd.isna(r["score"]) else round(float(r["score"]), 4), "expected": expected})  # fmt: skip
    return rows


def summary(rows: list[dict]) -> dict:
    kept = [r for r in rows if r["answer"] is not None]
    right = [r for r in kept if r["answer"] == r["expected"]]
    present = [r for r in rows if r["expected"]]
    absent_matched = [r for r in kept if not r["expected"]]
    return {"kept": len(kept), "right": len(right), "present": len(present),
            "absent": len(rows) - len(present), "absent_matched": len(absent_matched)}  # fmt: skip


def least_certain(scores: pd.DataFrame, cut: float, n: int) -> list[int]:
    """The ``n`` answers whose probability is nearest the cut (what the labelling session asks first)."""
    return list((scores["score"] - cut).abs().sort_values().index[:n])


def main() -> None:
    companies = pd.read_csv(EXAMPLES / "companies.csv")
    vendors = pd.read_csv(EXAMPLES / "vendors.csv", keep_default_na=False)
    truth = dict(zip(vendors["vendor"], vendors["truth"]))
    runs = {}
    for target in TARGETS:
        result = join(companies, vendors, left_column="name", right_column="vendor", threshold="auto",
                      target_precision=target, keep_unmatched=True, progress=False)  # fmt: skip
        rows = verdicts(result, truth)
        runs[f"auto {target}"] = {"threshold": result.attrs["threshold"], "estimate": result.attrs.get("estimate"),
                                   "summary": summary(rows), "rows": rows}  # fmt: skip
    every = join(companies, vendors, left_column="name", right_column="vendor", progress=False)
    asked = least_certain(every, runs["auto 0.9"]["threshold"], LABELS)
    every["label"] = None
    for i in asked:
        every.loc[i, "label"] = every.loc[i, "left"] == truth[every.loc[i, "right"]]
    calibration = calibrate(companies, vendors, every, left_column="name", right_column="vendor")
    result = join(companies, vendors, left_column="name", right_column="vendor", threshold="auto",
                  target_precision=0.9, keep_unmatched=True, calibration=calibration, progress=False)  # fmt: skip
    rows = verdicts(result, truth)
    runs[f"auto 0.9 + {LABELS} labels"] = {"threshold": result.attrs["threshold"], "summary": summary(rows),
                                           "rows": rows, "labelled": [every.loc[i, "right"] for i in asked]}  # fmt: skip
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"command": "python experiments/matching/companies_open_world.py",
                                   "runs": runs}, indent=1, default=str) + "\n")  # fmt: skip
    print(render(json.loads(RESULTS.read_text())))


def render(report: dict) -> str:
    """Per run: what was kept, right and wrong, and the absent vendors that got a match (the misses named)."""
    lines = ["| threshold=\"auto\" | threshold | kept | right | vendors present kept | absent vendors matched |",
             "|---|---:|---:|---:|---:|---|"]  # fmt: skip
    for name, run in report["runs"].items():
        s = run["summary"]
        wrong = [f"{r['vendor']} -> {r['answer']} ({r['score']:.3f})" for r in run["rows"]
                 if r["answer"] is not None and r["answer"] != r["expected"]]  # fmt: skip
        lines.append(f"| {name} | {run['threshold']:.3f} | {s['kept']} | {s['right']} | {s['right']} of {s['present']} "
                     f"| {s['absent_matched']} of {s['absent']}{': ' + '; '.join(wrong) if wrong else ''} |")  # fmt: skip
    lines += ["", f"From `{RESULTS}` (`{report['command']}`)."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()

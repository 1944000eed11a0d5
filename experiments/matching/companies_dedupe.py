"""The company-names example of docs/dedupe.md: one list, deduplicated without labels and after a short labelling
session over its own pairs (issue 64; an illustration, not a benchmark).

``examples/open-world/company-names.csv``: 22 company names with the company each names (``truth``), several
initialisms ("GM", "GE", "BofA") and look-alikes ("General Motors", "General Mills", "General Electric"). ``dedupe``
at target 0.9, then ``phrasezoo match label --input`` run in this process with a scripted user who answers from the
``truth`` column (8 answers, the pairs the session asks first), then ``dedupe`` with the calibration it wrote. Every
cluster is written with its verdict to ``results/matching/companies-dedupe.json``, which the page's block renders.

    .venv/bin/python experiments/matching/companies_dedupe.py
"""

from __future__ import annotations

import io
import json
import re
import sys
import tempfile
from pathlib import Path

import pandas as pd

from phrasezoo.match import dedupe
from phrasezoo.match.commands import main as match_main

EXAMPLE = Path("examples/open-world/company-names.csv")
RESULTS = Path("results/matching/companies-dedupe.json")
LABELS = 8


class Answers:
    """Replies to the session from the truth column: the pair last shown on ``screen`` is the same company or not."""

    def __init__(self, screen: io.StringIO, truth: dict[str, str]) -> None:
        self.screen, self.truth, self.asked = screen, truth, []

    def readline(self) -> str:
        text = self.screen.getvalue()
        pair = (re.findall(r"name:  '(.*)'", text)[-1], re.findall(r"other: '(.*)'  \(score", text)[-1])
        same = self.truth[pair[0]] == self.truth[pair[1]]
        self.asked.append({"name": pair[0], "other": pair[1], "same": same})
        return ("y" if same else "n") + "\n"


def clusters_of(result: pd.DataFrame, truth: dict[str, str]) -> dict:
    """The clusters of more than one row, each with whether its rows name one company, and the pair counts."""
    groups = [list(g["name"]) for _, g in result.groupby("cluster", sort=True)]
    merged = [{"names": g, "one company": len({truth[n] for n in g}) == 1} for g in groups if len(g) > 1]
    predicted = [(a, b) for g in groups for i, a in enumerate(g) for b in g[i + 1 :]]
    right = sum(truth[a] == truth[b] for a, b in predicted)
    gold = sum(truth[a] == truth[b] for i, a in enumerate(truth) for b in list(truth)[i + 1 :])
    return {"pairs": len(predicted), "right pairs": right, "gold pairs": gold, "clusters": merged}


def labelled_session(truth: dict[str, str], folder: Path) -> tuple[Path, list[dict]]:
    """``phrasezoo match label --input`` with the scripted user; the calibration file and the pairs asked."""
    output = folder / "list-calibration.json"
    screen = io.StringIO()
    user = Answers(screen, truth)
    stdin, stdout = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = user, screen
    try:
        status = match_main(["label", "--input", str(EXAMPLE), "--column", "name", "--budget", str(LABELS),
                             "--output", str(output), "--no-progress"])  # fmt: skip
    finally:
        sys.stdin, sys.stdout = stdin, stdout
    if status != 0:
        raise SystemExit(screen.getvalue())
    return output, user.asked


def main() -> None:
    table = pd.read_csv(EXAMPLE)
    truth = dict(zip(table["name"], table["truth"]))
    runs = {}
    with tempfile.TemporaryDirectory() as folder:
        calibration, asked = labelled_session(truth, Path(folder))
        for method in ("components", "average"):
            plain = dedupe(table, column="name", method=method, progress=False)
            runs[f"auto 0.9, {method}"] = {"threshold": plain.attrs["report"]["threshold"], **clusters_of(plain, truth)}
            found = dedupe(table, column="name", method=method, calibration=calibration, progress=False)
            runs[f"auto 0.9 + {LABELS} labels, {method}"] = {
                "threshold": found.attrs["report"]["threshold"], "asked": asked,
                "labels_honoured": found.attrs["report"]["labels_honoured"], **clusters_of(found, truth)}  # fmt: skip
    RESULTS.write_text(json.dumps({"command": "python experiments/matching/companies_dedupe.py", "rows": len(table),
                                   "runs": runs}, indent=1) + "\n")  # fmt: skip
    print(render(json.loads(RESULTS.read_text())))


def render(report: dict) -> str:
    """One row per run: threshold, pairs merged (right of them, of the list's true pairs), the clusters (a wrong one
    marked), and for the labelled run the pairs asked."""
    lines = ["| dedupe | threshold | pairs merged (right) | true pairs | clusters of more than one row |",
             "|---|---:|---:|---:|---|"]  # fmt: skip
    for name, run in report["runs"].items():
        shown = "; ".join(("" if c["one company"] else "**wrong:** ") + " + ".join(c["names"]) for c in run["clusters"])
        lines.append(f"| {name} | {run['threshold']:.3f} | {run['pairs']} ({run['right pairs']}) | "
                     f"{run['gold pairs']} | {shown} |")  # fmt: skip
    asked = next((run["asked"] for run in report["runs"].values() if "asked" in run), [])
    pairs = "; ".join(f"{a['name']} / {a['other']} ({'y' if a['same'] else 'n'})" for a in asked)
    return "\n".join(lines) + (
        f"\n\nThe pairs the session asked, in order, with the scripted answers: {pairs}. {report['rows']} rows; from "
        f"`results/matching/companies-dedupe.json` (`{report['command']}`)."
    )


if __name__ == "__main__":
    main()

"""Rules 20, 21, 23 and 24 of docs/experiments/pearl.md, counted from the files: a variant against its reference, soup by soup.

For each soup (seeds 42/7/1, 2/3/4, 5/6/8) whose two sides are trained, the mean ``names_dev`` top-1 over the four
name domains and the nine-task dev-suite average of each side's export (its dev-chosen blend), read from
``results/pearl/experiments/names-source/<run>-names-dev.json`` and ``<run>-dev-selection.json``. Step 2's verdict,
once the three soups are in: adopted if the names side's mean ``names_dev`` over the soups is higher, at least two
of three soups are above their counterpart, and its mean dev-suite average is not lower by more than 0.5. No test
number is read.

    .venv/bin/python experiments/pearl/names_source_soups.py --output results/pearl/experiments/names-source/rule20-soups.json \\
        --docs docs/experiments/pearl.md
    .venv/bin/python experiments/pearl/names_source_soups.py --rule 21 \\
        --output results/pearl/experiments/teacher-guard/rule21-soups.json --docs docs/experiments/pearl.md

Step 1 of rules 21 (the teacher guard, ``teacher-guard/pearl-guard``) and 24 (nomic-embed-text-v1.5 as the teacher,
``teacher-nomic/pearl-nomic``), each against rule 20's names soup of the same seeds, passes if the mean ``names_dev``
top-1 rises by at least 0.5 and the dev-suite average falls by at most 0.5. Rule 23's step 1 (character augmentation,
``char-augmentation/pearl-char10n``) passes if ``noisy`` top-1 rises by at least 1.0, the ``names_dev`` mean does
not fall and the dev-suite average falls by at most 0.5.

    .venv/bin/python experiments/pearl/names_source_soups.py --rule 23 \
        --output results/pearl/experiments/char-augmentation/rule23-soups.json --docs docs/experiments/pearl.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

FOLDER = Path("results/pearl/experiments")
#: per rule: the sides' labels, the soups (seeds, the reference's run, the variant's run; as folder/run under FOLDER)
#: and the docs block
RULES = {
    "20": {"labels": ("recipe", "+ names source"), "block": "pearl-mini-names-source-rule20",
           "soups": (("42/7/1", "names-source/pearl-ref", "names-source/pearl-names"),
                     ("2/3/4", "names-source/pearl-ref-soup2", "names-source/pearl-names-soup2"),
                     ("5/6/8", "names-source/pearl-ref-soup5", "names-source/pearl-names-soup5"))},
    "21": {"labels": ("names recipe", "+ teacher guard"), "block": "pearl-mini-teacher-guard-rule21",
           "soups": (("42/7/1", "names-source/pearl-names", "teacher-guard/pearl-guard"),)},
    "23": {"labels": ("names recipe", "+ 10% char views"), "block": "pearl-mini-char-augmentation-rule23",
           "soups": (("42/7/1", "names-source/pearl-names", "char-augmentation/pearl-char10n"),)},
    "24": {"labels": ("names recipe (mpnet teacher)", "nomic teacher"), "block": "pearl-mini-teacher-nomic-rule24",
           "soups": (("42/7/1", "names-source/pearl-names", "teacher-nomic/pearl-nomic"),)},
}  # fmt: skip
MIN_GAIN = 0.5  # rules 21 and 24: names_dev mean
MIN_NOISY_GAIN = 1.0  # rule 23: the noisy domain's top-1
DOMAINS = ("names_acronyms_dev", "names_aliases_dev", "names_short_names_dev", "names_noisy_dev")
MAX_DEV_LOSS = 0.5


def side(folder: Path, path: str) -> dict | None:
    """One export's ``names_dev`` top-1 per domain and mean, and its dev-suite average (x 100); None if not run."""
    run = Path(path).name
    names, selection = folder / f"{path}-names-dev.json", folder / f"{path}-dev-selection.json"
    if not (names.exists() and selection.exists()):
        return None
    results = json.loads(names.read_text())["results"]
    top1 = {r["task"]: 100 * r["value"] for r in results if r["metric"] == "accuracy" and r["task"] in DOMAINS}
    chosen = json.loads(selection.read_text())["chosen"]
    dev = next(
        row for row in json.loads(selection.read_text())["rows"] if all(row.get(k) == v for k, v in chosen.items())
    )
    return {"run": run, "names_dev": top1, "names_dev_mean": sum(top1.values()) / len(top1),
            "dev_avg": 100 * dev["dev_avg"]}  # fmt: skip


def verdict(pairs: list[dict], rule: str = "20") -> dict:
    """The rule over the trained soups (``complete`` once all of the rule's soups are in): rule 20's step 2, or rule
    21's step 1."""
    done = [p for p in pairs if p["recipe"] and p["names"]]
    if not done:
        return {"complete": False, "soups": 0}
    names_mean = sum(p["names"]["names_dev_mean"] for p in done) / len(done)
    recipe_mean = sum(p["recipe"]["names_dev_mean"] for p in done) / len(done)
    above = sum(p["names"]["names_dev_mean"] > p["recipe"]["names_dev_mean"] for p in done)
    dev_change = sum(p["names"]["dev_avg"] - p["recipe"]["dev_avg"] for p in done) / len(done)
    noisy = "names_noisy_dev"
    noisy_gain = sum(p["names"]["names_dev"][noisy] - p["recipe"]["names_dev"][noisy] for p in done) / len(done)
    out = {"complete": len(done) == len(pairs), "soups": len(done), "names_dev_mean": {"recipe": recipe_mean,
           "names": names_mean}, "soups_above": above, "dev_avg_change": dev_change,
           "noisy_change": noisy_gain}  # fmt: skip
    if not out["complete"]:
        return out
    dev_ok = dev_change >= -MAX_DEV_LOSS
    if rule == "20":
        out["adopted"] = names_mean > recipe_mean and above >= 2 and dev_ok
    elif rule == "23":
        out["adopted"] = noisy_gain >= MIN_NOISY_GAIN and names_mean >= recipe_mean and dev_ok
    else:
        out["adopted"] = names_mean - recipe_mean >= MIN_GAIN and dev_ok
    return out


def table(results: dict) -> str:
    short = {"names_acronyms_dev": "acronyms", "names_aliases_dev": "aliases", "names_short_names_dev": "short names",
             "names_noisy_dev": "noisy"}  # fmt: skip
    lines = ["| soup | side | run | " + " | ".join(short.values()) + " | names_dev mean | dev-suite avg |",
             "|---|---|---|" + ":---:|" * (len(short) + 2)]  # fmt: skip
    rule = results.get("rule_id", "20")
    labels = RULES[rule]["labels"]
    for pair in results["soups"]:
        for label, key in ((labels[0], "recipe"), (labels[1], "names")):
            row = pair[key]
            if row is None:
                lines.append(f"| {pair['seeds']} | {label} | not trained yet |" + " |" * (len(short) + 2))
                continue
            cells = " | ".join(f"{row['names_dev'][d]:.1f}" for d in short)
            lines.append(f"| {pair['seeds']} | {label} | {row['run']} | {cells} | {row['names_dev_mean']:.2f} | "
                         f"{row['dev_avg']:.2f} |")  # fmt: skip
    v = results["verdict"]
    lines.append("")
    if v["soups"]:
        lines.append(f"- Over the {v['soups']} trained soup(s): names_dev mean {v['names_dev_mean']['recipe']:.2f} -> "
                     f"{v['names_dev_mean']['names']:.2f}; {labels[1]} above its counterpart in {v['soups_above']} "
                     f"of {v['soups']}; " + (f"noisy {v['noisy_change']:+.2f}; " if "noisy_change" in v else "")
                     + f"dev-suite average {v['dev_avg_change']:+.2f} (allowed: -{MAX_DEV_LOSS}).")  # fmt: skip
    step, words = (
        ("step 2", ("**adopted**", "**not adopted**")) if rule == "20" else ("step 1", ("**passes**", "**fails**"))
    )
    total = len(RULES[rule]["soups"])
    lines.append(f"- Rule {rule}, {step}: " + ((words[0] if v["adopted"] else words[1]) + "."
                 if v["complete"] else f"incomplete, {v['soups']} of {total} soups trained; no verdict yet."))  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rule", choices=sorted(RULES), default="20")
    parser.add_argument("--folder", default=str(FOLDER))
    parser.add_argument("--output", required=True)
    parser.add_argument("--docs", help="markdown page whose block for the rule gets the table")
    args = parser.parse_args(argv)
    folder = Path(args.folder)
    spec = RULES[args.rule]
    pairs = [{"seeds": seeds, "recipe": side(folder, ref), "names": side(folder, variant)}
             for seeds, ref, variant in spec["soups"]]  # fmt: skip
    results = {"rule": f"docs/experiments/pearl.md, rule {args.rule}", "rule_id": args.rule, "soups": pairs,
               "verdict": verdict(pairs, args.rule)}  # fmt: skip
    Path(args.output).write_text(json.dumps(results, indent=1) + "\n")
    if args.docs:
        from phrasezoo.core.files import write_readme_table

        write_readme_table(args.docs, table(results), block=spec["block"])
    print(table(results))


if __name__ == "__main__":
    main()

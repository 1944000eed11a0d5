"""How well PEARL's type head types names it never trained on (issue 46): CoNLL-2003 *dev* mentions, typed bare.

The type head predicts one of 95 labels, a phrase class times a spaCy entity type ("NP-ORG"), learned from spaCy's
silver labels on the training corpus. CoNLL-2003's dev split (``../shared/benchmarks/conll2003/dev.jsonl``, never
trained on; the test split is not read) gives gold types for real names: each distinct PER / LOC / ORG mention is
typed without its sentence, and a prediction counts as right when its entity type is one the gold type covers
(PER: PERSON; LOC: GPE, LOC, FAC; ORG: ORG). MISC has no counterpart and is left out; a mention seen with two gold
types is left out.

Two references in the same table: the majority class (always the commonest gold type), and spaCy's own NER on the
bare mention (the source of the training labels; a label only when one entity covers the whole mention, else OTHER).

    OMP_NUM_THREADS=1 .venv/bin/python experiments/pearl/type_head_dev.py --models outputs/pearl-ref --refit 8000 16000 30000 \\
        --output results/pearl/experiments/type-head/type-head-dev.json --docs docs/experiments/pearl.md

``--refit N ...`` adds each model with its type head refitted on N phrases of the recipe's table (what
``type_head_refit`` does after training; several N: the screen that chose its default). The column "not in the table" scores the mentions that are not a phrase of that table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections import Counter
from pathlib import Path

from transformers import AutoModel

from phrasezoo.core.recipes import load_recipe
from phrasezoo.methods.pearl.type_head import fit_type_head, typed_table

GOLD = {"PER": ("PERSON",), "LOC": ("GPE", "LOC", "FAC"), "ORG": ("ORG",)}


def dev_mentions(benchmarks: Path) -> list[tuple[str, str]]:
    """Distinct ``(mention, gold type)`` pairs of the CoNLL-2003 dev split, PER/LOC/ORG, one gold type each."""
    from phrasezoo.evaluation.tasks.clustering import read_ner_jsonl

    data = read_ner_jsonl(benchmarks / "conll2003" / "dev.jsonl", list(GOLD))
    types: dict[str, set[str]] = {}
    for phrase, label in zip(data.phrases, data.labels):
        types.setdefault(phrase, set()).add(label)
    return sorted((p, next(iter(t))) for p, t in types.items() if len(t) == 1)


def score(predicted: list[str], mentions: list[tuple[str, str]], seen: set[str]) -> dict:
    """Accuracy overall, per gold type and on the mentions that are not a phrase of the training table (``seen``),
    the share typed OTHER, and the commonest confusions."""
    right = [p in GOLD[g] for p, (_, g) in zip(predicted, mentions)]
    unseen = [r for r, (m, _) in zip(right, mentions) if m not in seen]
    per_type = {}
    for gold in GOLD:
        rows = [r for r, (_, g) in zip(right, mentions) if g == gold]
        per_type[gold] = round(sum(rows) / max(1, len(rows)), 4)
    wrong = Counter(f"{g} -> {p}" for p, (_, g), r in zip(predicted, mentions, right) if not r)
    return {
        "accuracy": round(sum(right) / len(right), 4),
        "accuracy_not_in_table": round(sum(unseen) / max(1, len(unseen)), 4),
        "per_type": per_type,
        "share_other": round(sum(p == "OTHER" for p in predicted) / len(predicted), 4),
        "confusions": dict(wrong.most_common(5)),
    }


def model_types(model, phrases: list[str]) -> list[str]:
    return [label.split("-", 1)[1] for ((label, _),) in model.predict_type(phrases, top_k=1)]


def spacy_types(phrases: list[str]) -> list[str]:
    from phrasezoo.resources import load_spacy

    nlp = load_spacy()
    out = []
    for doc in nlp.pipe(phrases, batch_size=256):
        whole = [e for e in doc.ents if e.start == 0 and e.end == len(doc)]
        out.append(whole[0].label_ if whole else "OTHER")
    return out


def table(results: dict) -> str:
    lines = ["| typed by | accuracy | not in the table | PER | LOC | ORG | typed OTHER | commonest confusion |",
             "|---|:---:|:---:|:---:|:---:|:---:|:---:|---|"]  # fmt: skip
    for row in results["rows"]:
        s = row["scores"]
        top = next(iter(s["confusions"].items()), ("", 0))
        lines.append(f"| {row['name']} | {100 * s['accuracy']:.1f} | {100 * s['accuracy_not_in_table']:.1f} | "
                     f"{100 * s['per_type']['PER']:.1f} | "
                     f"{100 * s['per_type']['LOC']:.1f} | {100 * s['per_type']['ORG']:.1f} | "
                     f"{100 * s['share_other']:.1f} | {top[0]} ({top[1]}) |")  # fmt: skip
    counts = results["gold_counts"]
    lines += ["", f"- {results['mentions']:,} distinct CoNLL-2003 dev mentions, typed without their sentence "
              f"(PER {counts['PER']:,}, LOC {counts['LOC']:,}, ORG {counts['ORG']:,}; {results['not_in_table']:,} of them "
              f"not a phrase of {results['recipe']}'s training table); right = the predicted entity "
              "type is one the gold type covers (PER: PERSON; LOC: GPE, LOC, FAC; ORG: ORG). "
              f"`{results['command']}`, {results['date']}."]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", required=True, help="exported PEARL folders")
    parser.add_argument("--benchmarks", default=str(Path(__file__).resolve().parents[3] / "shared" / "benchmarks"))
    parser.add_argument(
        "--recipe", default="pearl-mini", help="whose training table (for --refit and the unseen column)"
    )
    parser.add_argument("--refit", nargs="*", type=int, metavar="MAX_ROWS",
                        help="also each model with its type head refitted on that many table phrases "
                        "(phrasezoo.methods.pearl.type_head; several values: a screen on this dev set)")  # fmt: skip
    parser.add_argument("--output", required=True)
    parser.add_argument("--docs", help="markdown page whose pearl-type-head-dev block gets the table")
    args = parser.parse_args(argv)
    mentions = dev_mentions(Path(args.benchmarks))
    phrases = [m for m, _ in mentions]
    table_phrases, table_labels = typed_table(load_recipe(args.recipe))
    seen = set(table_phrases)
    counts = Counter(g for _, g in mentions)
    majority = counts.most_common(1)[0][0]
    rows = [{"name": f"majority class ({majority})", "scores": score([GOLD[majority][0]] * len(mentions), mentions, seen)},
            {"name": "spaCy NER on the bare mention (the labels' source)",
             "scores": score(spacy_types(phrases), mentions, seen)}]  # fmt: skip
    for folder in args.models:
        model = AutoModel.from_pretrained(folder, trust_remote_code=True)
        rows.append({"name": f"type head of {folder}", "scores": score(model_types(model, phrases), mentions, seen)})
        for max_rows in args.refit or ():
            facts = fit_type_head(model, table_phrases, table_labels, max_rows=max_rows)
            rows.append({"name": f"type head of {folder}, refitted on {max_rows:,} table phrases", "facts": facts,
                         "scores": score(model_types(model, phrases), mentions, seen)})  # fmt: skip
    results = {
        "task": "type head on CoNLL-2003 dev mentions (PER/LOC/ORG), bare",
        "mentions": len(mentions),
        "recipe": args.recipe,
        "not_in_table": sum(m not in seen for m in phrases),
        "gold_counts": dict(counts),
        "rows": rows,
        "date": dt.date.today().isoformat(),
        "command": "python experiments/pearl/type_head_dev.py " + " ".join(sys.argv[1:] if argv is None else argv),
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(results, indent=1) + "\n")
    if args.docs:
        from phrasezoo.core.files import write_readme_table

        write_readme_table(args.docs, table(results), block="pearl-type-head-dev")
    print(table(results))


if __name__ == "__main__":
    main()

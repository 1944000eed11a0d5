"""A Turney-style dev task built from WordNet, to see whether the dev suite could stand in for Turney.

The dev suite (:mod:`phrasezoo.evaluation.dev_suite`) has no bigram -> word task, so a change that moves Turney
cannot show on it. This script builds one the way Turney (2012) built his: two-word noun compounds of WordNet paired
with a one-word synonym from the same synset ("double star" -> "binary"). Each item offers the answer and four
distractors: one word close to a component word (a synonym or hypernym of it, like Turney's "dual" for "double
star") and three random WordNet nouns. Every item that shares a string with any test benchmark is dropped
(:mod:`phrasezoo.data.benchmark_filter`, strict mode), so none of Turney's compounds or answers appears.

Scoring is the Turney task's own (:func:`multiple_choice_accuracy`). One JSON line per model:

    .venv/bin/python benchmarks/dev_compound.py baseline:minilm-l6 baseline:mpnet-base outputs/pearl-mini \\
        > results/dev-compound.jsonl
    .venv/bin/python benchmarks/dev_compound.py --render results/dev-compound.jsonl --readme README.md

It is a diagnostic, not part of ``dev_avg``: PEARL's and Phrase-BERT's offline synonym tables read WordNet too, so
a trained model may have seen some of these synonym pairs. Needs Debian's ``wordnet-base``.
"""

from __future__ import annotations

import argparse
import json
import random
import time

MAX_ITEMS = 1000
SEED = 0


def _single(name: str) -> bool:
    return name.isalpha() and name.islower()


def build_items(wordnet, blocklist, max_items: int = MAX_ITEMS, seed: int = SEED) -> list[tuple[str, list[str]]]:
    """``(compound, [answer, near distractor, 3 random nouns])`` items, benchmark strings removed, at most
    ``max_items`` (a seeded sample)."""
    nouns = sorted({n for s in wordnet.all_synsets("n") for n in s.lemma_names() if _single(n)})
    rng = random.Random(seed)
    items = []
    for synset in wordnet.all_synsets("n"):
        names = synset.lemma_names()
        singles = [n for n in names if _single(n)]
        for compound in names:
            words = compound.split("_")
            if len(words) != 2 or not all(_single(w) for w in words) or not singles:
                continue
            answer = singles[0]
            if answer in words:
                continue
            near = set()
            for word in words:
                for s in wordnet.synsets(word, "n")[:2]:
                    near.update(n for n in s.lemma_names() if _single(n))
                    for h in s.hypernyms():
                        near.update(n for n in h.lemma_names() if _single(n))
            near -= {answer, *words, *singles}
            if not near:
                continue
            item = (" ".join(words), [answer, sorted(near)[0]])
            items.append(item)
    items.sort()
    rng.shuffle(items)
    kept = []
    for query, (answer, near) in items:
        if blocklist.item_matches([query, answer, near], mode="strict"):
            continue
        randoms: list[str] = []
        while len(randoms) < 3:
            word = nouns[rng.randrange(len(nouns))]
            if word not in {answer, near, *query.split(), *randoms} and not blocklist.matches(word, mode="strict"):
                randoms.append(word)
        kept.append((query, [answer, near, *randoms]))
        if len(kept) >= max_items:
            break
    return kept


def render(rows: list[dict]) -> str:
    """Markdown: one line per model, accuracy x 100."""
    lines = ["| model | items | dev_compound accuracy |", "|---|:---:|:---:|"]
    lines += [f"| {row['model']} | {row['n']} | {100 * row['dev_compound']:.1f} |" for row in rows]
    lines += [
        "",
        "- WordNet compound -> one-word synonym among 5 candidates (Turney's format), benchmark strings removed; "
        "a diagnostic outside `dev_avg` (`benchmarks/dev_compound.py`).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", help="encoder specs (exported folders, baseline:<name>)")
    parser.add_argument("--max-items", type=int, default=MAX_ITEMS)
    parser.add_argument("--render", help="print (or with --readme, write) the markdown table of this JSONL output")
    parser.add_argument("--readme", help="README whose block --block gets the rendered table")
    parser.add_argument("--block", default="dev-compound", help="README block name (<!-- NAME:start -->)")
    args = parser.parse_args(argv)
    if args.render:
        from pathlib import Path

        from phrasezoo.files import write_readme_table

        table = render([json.loads(line) for line in Path(args.render).read_text().splitlines() if line.strip()])
        if args.readme:
            write_readme_table(args.readme, table, args.block)
        print(table)
        return
    if not args.models:
        parser.error("give encoder specs, or --render a JSONL file.")

    from phrasezoo.data.benchmark_filter import load_blocklist
    from phrasezoo.encoders import load_encoder
    from phrasezoo.evaluation.tasks.similarity import MultipleChoiceData, multiple_choice_accuracy
    from phrasezoo.resources import load_wordnet

    wordnet = load_wordnet()
    if wordnet is None:
        raise SystemExit("WordNet not found: install Debian's wordnet-base (apt-get install wordnet-base).")
    items = build_items(wordnet, load_blocklist(), args.max_items)
    data = MultipleChoiceData([q for q, _ in items], [c for _, c in items])
    for spec in args.models:
        started = time.perf_counter()
        encoder = load_encoder(spec, progress=False)
        score = multiple_choice_accuracy(encoder, data)
        row = {"model": spec, "dev_compound": round(score, 4), "n": len(items)}
        print(json.dumps({**row, "seconds": round(time.perf_counter() - started, 1)}), flush=True)


if __name__ == "__main__":
    main()

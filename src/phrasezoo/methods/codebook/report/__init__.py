"""A README section for FACETS models, generated from their results files (no number typed by hand).

``python -m phrasezoo.methods.codebook.report --sentence S10 S1 --phrase P10 P1 --readme README.md --block B``
reads ``results/codebook/<name>.json`` of a K = 10 and a K = 1 sentence recipe and of a K = 10 and a K = 1 phrase recipe
(results of the ``facets_sentence`` / ``facets_phrase`` task groups) and rewrites the README block between
``<!-- B:start -->`` and ``<!-- B:end -->``; without ``--readme`` it prints the section. ``--training-facts DIR``
first copies each model's ``DIR/<name>/training_facts.json`` (steps, minutes, data) into its results file under
``training``, so the section is generated from results files alone. Each claim gets a line that says whether the
measured numbers support it (and, where a bootstrap interval exists, whether it excludes zero).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from phrasezoo.core.files import write_readme_table
from phrasezoo.core.recipes import load_recipe
from phrasezoo.evaluation.results import get_value, read_results, write_results

#: which results files a section reads: {"sentence": (K = 10 name, K = 1 name), "phrase": (...)}; set by main()
RECIPES: dict[str, tuple[str, str]] = {"sentence": ("", ""), "phrase": ("", "")}
TRAINING_KEYS = ("steps", "planned steps", "stopped by time budget", "training time (min)", "global batch size",
                 "learning rate", "torch threads", "device", "trained on", "last losses", "training examples",
                 "data: corpus", "data: examples (held out)", "data: vocabulary")  # fmt: skip
#: The paper's Table 2 (full STS-B test, GloVe 840B, Pearson x 100, Test All / Test Low), for reference only.
PAPER_STS = {
    ("avg", "none"): (36.6, 30.9), ("avg", "k1"): (44.1, 40.6), ("avg", "k10"): (50.0, 46.5),
    ("prob_avg", "none"): (59.2, 54.8), ("prob_avg", "k1"): (58.1, 55.2), ("prob_avg", "k10"): (61.4, 59.3),
    ("sif", "none"): (63.2, 58.1), ("sif", "k1"): (61.7, 58.5), ("sif", "k10"): (64.6, 62.2),
    ("sc", "k1"): (47.6, 45.4), ("sc", "k10"): (52.6, 47.8),
}  # fmt: skip
#: The paper's Table 4 Turney(5) / Turney(10) accuracy (x 100; its own split, GloVe 42B), for reference only.
PAPER_TURNEY = {"glove_avg": (25.9, 12.9), "emb_k10": (49.4, 31.8), "emb_k1": (50.3, 32.5), "sc_k10": (45.6, 28.8),
                "sc_k1": (45.3, 28.4)}  # fmt: skip
SCORER_NAMES = {"avg": "Avg", "prob_avg": "Prob_avg", "sif": "SIF"}


def load(results_dir: Path, name: str) -> dict[str, Any] | None:
    path = results_dir / f"{name}.json"
    return read_results(path) if path.exists() else None


def entry(doc: dict | None, task: str, metric: str) -> dict | None:
    for item in (doc or {}).get("results", []):
        if item["task"] == task and item["metric"] == metric:
            return item
    return None


def value(doc: dict | None, task: str, metric: str) -> float | None:
    return get_value(doc or {}, task, metric)


def pct(x: float | None, digits: int = 1) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.{digits}f}"


def num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def points(interval: list[float] | None) -> str:
    """A fraction interval as percentage points, ``[4.8, 8.8]``."""
    return "–" if not interval else f"[{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]"


def verdict(ok: bool | None) -> str:
    return "not measured" if ok is None else ("**holds**" if ok else "**fails**")


# ------------------------------------------------------------------------------------------------------ tables
def training_table(docs: dict[str, dict | None]) -> list[str]:
    lines = ["| recipe | K | steps | batch | examples seen | training time (min) | last Er_pos / Er_neg |",
             "|---|:---:|:---:|:---:|:---:|:---:|:---:|"]  # fmt: skip
    for name, doc in docs.items():
        t = (doc or {}).get("training")
        if not t:
            continue
        losses = t.get("last losses", {})
        seen = t.get("steps", 0) * t.get("global batch size", 0)
        lines.append(
            f"| {name} | {t.get('n_facets', '?')} | {t.get('steps')} | {t.get('global batch size')} | {seen:,} | "
            f"{t.get('training time (min)')} | {num(losses.get('loss_pos'))} / {num(losses.get('loss_neg'))} |"
        )
    return lines


def reconstruction_table(docs: dict[str, dict | None]) -> tuple[list[str], list[str]]:
    lines = ["| facets | sentences: Er_pos ↓ | sentences: margin ↑ | phrases: Er_pos ↓ | phrases: margin ↑ |",
             "|---|:---:|:---:|:---:|:---:|"]  # fmt: skip
    claims = []
    task = "facets_reconstruction"
    rows = [
        ("model, K = 10", "model", 0),
        ("model, K = 1", "model", 1),
        ("input words as facets (no learning)", "input_words", 0),
        ("mean input word as one facet (no learning)", "input_mean", 0),
        ("10 most frequent target words (no learning)", "frequent_targets", 0),
        ("1 most frequent target word (no learning)", "frequent_targets", 1),
    ]
    for label, source, which in rows:
        cells = []
        for kind in ("sentence", "phrase"):
            doc = docs[RECIPES[kind][which]]
            cells += [num(value(doc, task, f"er_pos:{source}")), num(value(doc, task, f"margin:{source}"))]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    names = {"input_words": "input words", "input_mean": "mean input word", "frequent_targets": "frequent targets"}
    for kind in ("sentence", "phrase"):
        k10, k1 = docs[RECIPES[kind][0]], docs[RECIPES[kind][1]]
        e10, e1 = value(k10, task, "er_pos:model"), value(k1, task, "er_pos:model")
        parts = [f"below K = 1 {verdict(None if e10 is None or e1 is None else e10 < e1)}"]
        for source, label in names.items():
            control = value(k10, task, f"er_pos:{source}")
            parts.append(f"below {label} {verdict(None if e10 is None or control is None else e10 < control)}")
        claims.append(f"- Held-out reconstruction error Er_pos of K = 10 ({kind}s): " + ", ".join(parts) + ".")
    return lines, claims


def sts_table(docs: dict[str, dict | None]) -> tuple[list[str], list[str]]:
    k10, k1 = docs[RECIPES["sentence"][0]], docs[RECIPES["sentence"][1]]
    task = "facets_stsb_subset"
    lines = ["| scorer | weights | All | Low | paper (full STS-B test) All / Low |", "|---|---|:---:|:---:|:---:|"]
    claims = []
    for scorer in ("avg", "prob_avg", "sif"):
        for label, doc, weighting, paper in (
            ("none (GloVe)", k10, "none", "none"),
            ("centroid control (no learning)", k10, "centroid", None),
            ("Our a, K = 1", k1, "ours", "k1"),
            ("Our a, K = 10", k10, "ours", "k10"),
        ):
            cells = [pct(value(doc, task, f"pearson_{h}:{scorer}:{weighting}")) for h in ("all", "low")]
            ref = PAPER_STS.get((scorer, paper)) if paper else None
            lines.append(f"| {SCORER_NAMES[scorer]} | {label} | {cells[0]} | {cells[1]} | "
                         f"{'–' if ref is None else f'{ref[0]} / {ref[1]}'} |")  # fmt: skip
    for label, doc, paper in (("SC, K = 1", k1, "k1"), ("SC, K = 10", k10, "k10")):
        cells = [pct(value(doc, task, f"pearson_{h}:sc")) for h in ("all", "low")]
        ref = PAPER_STS[("sc", paper)]
        lines.append(f"| SC | {label} | {cells[0]} | {cells[1]} | {ref[0]} / {ref[1]} |")
    for scorer in ("avg", "prob_avg"):
        for half in ("all", "low"):
            item = entry(k10, task, f"pearson_{half}:{scorer}:ours")
            if item is None:
                claims.append(f"- Our a K = 10 raises {SCORER_NAMES[scorer]} ({half}): not measured.")
                continue
            details = item.get("details") or {}
            none_ci, centroid_ci = details.get("minus_none_ci95"), details.get("minus_centroid_ci95")
            beats_none = value(k10, task, f"pearson_{half}:{scorer}:none")
            beats_centroid = value(k10, task, f"pearson_{half}:{scorer}:centroid")
            ok = item["value"] > beats_none and item["value"] > beats_centroid
            sure = bool(none_ci and centroid_ci and none_ci[0] > 0 and centroid_ci[0] > 0)
            claims.append(
                f"- Our a K = 10 raises {SCORER_NAMES[scorer]} ({half.capitalize()}) beyond no weights and the "
                f"centroid control: {verdict(ok)} (95% CI of the gain in r x 100 vs none {points(none_ci)}, vs "
                f"centroid {points(centroid_ci)}: {'both exclude 0' if sure else 'not significant, an interval includes 0'})."
            )
    return lines, claims


def phrase_table(docs: dict[str, dict | None]) -> tuple[list[str], list[str]]:
    k10, k1 = docs[RECIPES["phrase"][0]], docs[RECIPES["phrase"][1]]
    lines = ["| scorer | Turney(5) | Turney(10) | BiRD r | paper Turney(5) / (10) |", "|---|:---:|:---:|:---:|:---:|"]
    rows = (("GloVe Avg", k10, "glove_avg", "glove_avg"), ("Ours Emb, K = 10", k10, "emb", "emb_k10"),
            ("Ours Emb, K = 1", k1, "emb", "emb_k1"), ("Ours SC, K = 10", k10, "sc", "sc_k10"),
            ("Ours SC, K = 1", k1, "sc", "sc_k1"))  # fmt: skip
    for label, doc, scorer, paper in rows:
        t5, t10 = (
            value(doc, "facets_turney", f"turney5:{scorer}"),
            value(doc, "facets_turney", f"turney10:{scorer}"),
        )
        bird = value(doc, "facets_bird", f"pearson:{scorer}")
        ref = PAPER_TURNEY[paper]
        lines.append(f"| {label} | {pct(t5)} | {pct(t10)} | {pct(bird)} | {ref[0]} / {ref[1]} |")
    claims = []
    glove = {m: value(k10, t, m.replace("X", "glove_avg")) for t, m in
             (("facets_turney", "turney5:X"), ("facets_turney", "turney10:X"), ("facets_bird", "pearson:X"))}  # fmt: skip
    for label, doc in (("K = 10", k10), ("K = 1", k1)):
        ours = {m: value(doc, t, m.replace("X", "emb")) for t, m in
                (("facets_turney", "turney5:X"), ("facets_turney", "turney10:X"), ("facets_bird", "pearson:X"))}  # fmt: skip
        parts = []
        for metric, name in (("turney5:X", "Turney(5)"), ("turney10:X", "Turney(10)"), ("pearson:X", "BiRD")):
            a, b = ours[metric], glove[metric]
            parts.append(f"{name} {verdict(None if a is None or b is None else a > b)}")
        claims.append(f"- The phrase model's Emb ({label}) beats the GloVe average: " + ", ".join(parts) + ".")
    return lines, claims


def dev_curve_table(path: Path | None) -> list[str]:
    """The phrase model's Emb on the dev suite by training step, next to the GloVe average, from the JSON lines of
    ``experiments/codebook/dev_curve.py`` (empty without a file)."""
    if path is None or not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    tasks = [k for k in rows[0] if k.startswith("dev_") and k != "dev_avg"]
    lines = [f"**Does training longer help Emb?** Dev suite (disjoint from Turney, BiRD and the held-out documents; "
             f"`{path.name}`): Emb of checkpoints of longer trial runs (recipe overrides in brackets) and of the "
             f"recipe's own run:", "",
             "| encoder | step | dev_avg | " + " | ".join(t[4:] for t in tasks) + " |",
             "|---|:---:|:---:|" + ":---:|" * len(tasks)]  # fmt: skip
    for row in rows:
        label = row["model"] + (f" ({', '.join(row['overrides'])})" if row.get("overrides") else "")
        cells = " | ".join(pct(row.get(t)) for t in tasks)
        lines.append(f"| {label} | {row.get('step', '–')} | {pct(row.get('dev_avg'))} | {cells} |")
    return lines


def summary_table(docs: dict[str, dict | None]) -> tuple[list[str], list[str]]:
    k10, k1 = docs[RECIPES["sentence"][0]], docs[RECIPES["sentence"][1]]
    task = "facets_summarization"
    lines = ["| method | ROUGE-1 F1 | ROUGE-2 F1 | length (words) |", "|---|:---:|:---:|:---:|"]
    rows = (("Random (mean of 10 draws)", k10, "random"), ("Sent Emb (GloVe average, eq. 7)", k10, "sent_emb"),
            ("W Emb (GloVe words, eq. 7)", k10, "w_emb"), ("Our c, K = 1 (eq. 7)", k1, "our_c"),
            ("Our c, K = 10 (eq. 7)", k10, "our_c"), ("Lead-3 of the body (uses order; reference point)", k10,
                                                       "lead3_body"))  # fmt: skip
    for label, doc, method in rows:
        lines.append(f"| {label} | {pct(value(doc, task, f'rouge1:{method}'))} | "
                     f"{pct(value(doc, task, f'rouge2:{method}'))} | {num(value(doc, task, f'length:{method}'), 1)} |")  # fmt: skip
    claims = []
    for metric, name in (("rouge1", "ROUGE-1"), ("rouge2", "ROUGE-2")):
        item = entry(k10, task, f"{metric}:our_c")
        if item is None:
            claims.append(f"- Our c K = 10 beats Sent Emb on {name}: not measured.")
            continue
        details = item.get("details") or {}
        ci = details.get("minus_sent_emb_ci95")
        ok = details.get("minus_sent_emb", 0) > 0
        claims.append(f"- Our c K = 10 beats Sent Emb on {name}: {verdict(ok)} (difference "
                      f"{pct(details.get('minus_sent_emb'), 2)} points, 95% CI {points(ci)})."
                      )  # fmt: skip
    return lines, claims


def facet_words_table(docs: dict[str, dict | None]) -> list[str]:
    lines = []
    for name in (RECIPES["phrase"][0], RECIPES["sentence"][0]):
        item = entry(docs[name], "facets_facet_words", "mean_top1_cosine")
        if item is None:
            continue
        lines += [f"**{name}** (each facet: its 3 nearest vocabulary words, cosine of the first)", "",
                  "| text | facets |", "|---|---|"]  # fmt: skip
        for text, facets in item["details"]["facets"].items():
            shown = "; ".join(f"{'/'.join(w for w, _ in f)} ({f[0][1]:.2f})" for f in facets)
            lines.append(f"| {text} | {shown} |")
        lines.append("")
    return lines


def facets_section(results_dir: str | Path = "results/codebook", dev_curve: str | Path | None = None) -> str:
    """Markdown of all tables and claims from the four recipes' results files (see :data:`RECIPES`), with the dev
    curve of the phrase model's Emb when ``dev_curve`` names its file."""
    results_dir = Path(results_dir)
    docs = {name: load(results_dir, name) for names in RECIPES.values() for name in names}
    recon, recon_claims = reconstruction_table(docs)
    sts, sts_claims = sts_table(docs)
    phrases, phrase_claims = phrase_table(docs)
    summary, summary_claims = summary_table(docs)
    out = ["Training runs (fixed steps, 1 thread each, two at a time on the shared 2-core CPU; times as measured):", ""]
    out += training_table(docs) + ["", "What the issue asked us to show, checked against the numbers below:", ""]
    out += recon_claims + sts_claims + phrase_claims + summary_claims
    out += ["", "**Held-out reconstruction** (NNSC error of the co-occurring words of held-out documents; 1.0 = "
            "nothing reconstructed; margin = Er_neg − Er_pos, a random other example's words as negatives; "
            "\"input words\" uses every content word of the input as a facet, so it has more facets than K for "
            "most sentences):", ""]  # fmt: skip
    out += recon
    out += ["", "**STS-B subset (STS-B-Context pairs)** — 1,024 of the 1,379 STS-B test pairs (query vs the hidden "
            "paraphrase), Pearson r × 100; Low = the pairs below the median gold score. p(w) from wordfreq; SIF's "
            "principal component from 2,000 sentences of the embedded news corpus (not the test sentences). The paper column is the full STS-B "
            "test with GloVe 840B 300-d and week-long training: context, not a like-for-like comparison.", ""]  # fmt: skip
    out += sts
    out += ["", "**Phrase similarity** (Turney: all 2,180 queries, exact ties split; BiRD: 3,345 pairs, Pearson r; "
            "the paper's Turney split and GloVe 42B differ):", ""]  # fmt: skip
    out += phrases
    curve = dev_curve_table(Path(dev_curve) if dev_curve else None)
    out += ["", *curve] if curve else []
    out += ["", "**Extractive summarisation proxy** (83 embedded-Wikipedia articles; reference = the lead section, "
            "3 body sentences chosen; rouge-score F1 with stemming):", ""]  # fmt: skip
    out += summary + ["", "**Facets** (the paper's Table 1 for our models):", ""]
    out += facet_words_table(docs)
    return "\n".join(out).rstrip() + "\n"


def merge_training_facts(results_dir: Path, outputs_dir: Path, names: list[str]) -> None:
    """Copy ``outputs_dir/<name>/training_facts.json`` into ``results_dir/<name>.json`` under ``training``."""
    for name in names:
        facts_file, results_file = outputs_dir / name / "training_facts.json", results_dir / f"{name}.json"
        if facts_file.exists() and results_file.exists():
            facts = json.loads(facts_file.read_text())
            doc = read_results(results_file)
            doc["training"] = {k: facts[k] for k in TRAINING_KEYS if k in facts}
            n_facets = facts.get("n_facets")
            if n_facets is None:  # facts written before the task recorded K: read it from the recipe
                n_facets = load_recipe(name).model.get("n_facets")
            doc["training"]["n_facets"] = n_facets
            write_results(doc, results_file)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentence", nargs=2, metavar=("K10", "K1"), required=True, help="sentence recipe names")
    parser.add_argument("--phrase", nargs=2, metavar=("K10", "K1"), required=True, help="phrase recipe names")
    parser.add_argument("--results-dir", default="results/codebook")
    parser.add_argument("--training-facts", metavar="DIR", help="merge DIR/<name>/training_facts.json first")
    parser.add_argument("--readme", help="README to rewrite the block of")
    parser.add_argument("--block", default="facets", help="README block name (default: facets)")
    parser.add_argument(
        "--dev-curve", metavar="JSONL", help="dev-suite curve of Emb (experiments/codebook/dev_curve.py)"
    )
    args = parser.parse_args(argv)
    RECIPES.update(sentence=tuple(args.sentence), phrase=tuple(args.phrase))
    if args.training_facts:
        names = [*args.sentence, *args.phrase]
        merge_training_facts(Path(args.results_dir), Path(args.training_facts), names)
    section = facets_section(args.results_dir, args.dev_curve)
    if args.readme:
        write_readme_table(args.readme, section.rstrip(), args.block)
    print(section)

"""A codebook recipe trained on CPU against its longer GPU recipe, on the targets of the checkpoint issue.

The targets: the phrase model's Emb at least the GloVe average on Turney and BiRD; summarisation "Our c, K = 10" at
least Sent Emb on ROUGE-1; held-out reconstruction error (Er_pos) at K = 10 below every non-learned control. The
block is generated from the two results files (``docs/gpu-job.md``; registered in ``docs/blocks.yaml``)::

    python -m phrasezoo.methods.codebook.report.gpu --kind phrase --cpu codebook-phrase-mini \
        --gpu codebook-phrase-gpu --readme docs/gpu-job.md --block codebook-phrase-gpu-results
"""

from __future__ import annotations

import argparse
from pathlib import Path

from phrasezoo.core.files import write_readme_table

from . import entry, load, num, pct, points, value, verdict

CONTROLS = (("input words as facets", "input_words"), ("mean input word as one facet", "input_mean"),
            ("10 most frequent target words", "frequent_targets"))  # fmt: skip
PHRASE_ROWS = (("Turney(5) accuracy", "facets_turney", "turney5"), ("Turney(10) accuracy", "facets_turney",
               "turney10"), ("BiRD Pearson r", "facets_bird", "pearson"))  # fmt: skip


def _training(doc: dict | None) -> str:
    facts = (doc or {}).get("training") or {}
    if "trained on" in facts:  # the GPU job's own line: device, minutes, steps
        stopped = facts.get("stopped by time budget")
        planned = f"; the run's time budget stopped it before its {facts.get('planned steps')} planned steps, so it "
        return facts["trained on"] + (planned + "is not the recipe's run" if stopped else "")
    return f"{facts.get('steps', '–')} steps, {facts.get('training time (min)', '–')} min on {facts.get('device', '–')}"


def _reconstruction(cpu: dict | None, gpu: dict | None) -> tuple[list[str], str]:
    task = "facets_reconstruction"
    lines = ["| held-out reconstruction | Er_pos ↓ (CPU recipe) | Er_pos ↓ (GPU recipe) |", "|---|:---:|:---:|"]
    lines.append(f"| model, K = 10 | {num(value(cpu, task, 'er_pos:model'))} | "
                 f"{num(value(gpu, task, 'er_pos:model'))} |")  # fmt: skip
    for label, control in CONTROLS:
        lines.append(f"| {label} (no learning) | {num(value(cpu, task, f'er_pos:{control}'))} | "
                     f"{num(value(gpu, task, f'er_pos:{control}'))} |")  # fmt: skip
    mine = value(gpu, task, "er_pos:model")
    controls = [value(gpu, task, f"er_pos:{c}") for _, c in CONTROLS]
    ok = None if mine is None or None in controls else all(mine < c for c in controls)
    return lines, f"- GPU recipe: held-out Er_pos at K = 10 below every non-learned control: {verdict(ok)}."


def phrase_block(cpu: dict | None, gpu: dict | None, names: tuple[str, str]) -> str:
    lines = [f"| phrase task | GloVe 6B 50-d average | {names[0]} Emb, K = 10 | {names[1]} Emb, K = 10 |",
             "|---|:---:|:---:|:---:|"]  # fmt: skip
    claims = []
    for label, task, prefix in PHRASE_ROWS:
        base, a, b = (value(d, task, f"{prefix}:{m}") for d, m in ((gpu, "glove_avg"), (cpu, "emb"), (gpu, "emb")))
        lines.append(f"| {label} | {pct(base)} | {pct(a)} | {pct(b)} |")
        ok = None if base is None or b is None else b >= base
        claims.append(f"- GPU recipe: Emb at least the GloVe average on {label.split()[0]}: {verdict(ok)}.")
    recon, claim = _reconstruction(cpu, gpu)
    return "\n".join([*lines, "", *recon, "", *claims, claim])


def sentence_block(cpu: dict | None, gpu: dict | None, names: tuple[str, str]) -> str:
    task = "facets_summarization"
    lines = [f"| summarisation proxy | ROUGE-1 F1 ({names[0]}) | ROUGE-1 F1 ({names[1]}) |", "|---|:---:|:---:|"]
    for label, method in (("Sent Emb (GloVe average, eq. 7)", "sent_emb"), ("Our c, K = 10 (eq. 7)", "our_c"),
                          ("Random (mean of 10 draws)", "random")):  # fmt: skip
        lines.append(f"| {label} | {pct(value(cpu, task, f'rouge1:{method}'))} | "
                     f"{pct(value(gpu, task, f'rouge1:{method}'))} |")  # fmt: skip
    sts = "facets_stsb_subset"
    lines += ["", "| STS-B subset, Pearson r (All) | CPU recipe | GPU recipe |", "|---|:---:|:---:|"]
    for label, metric in (("Avg, no weights (GloVe)", "pearson_all:avg:none"), ("Avg, Our a K = 10",
                          "pearson_all:avg:ours"), ("SIF, Our a K = 10", "pearson_all:sif:ours")):  # fmt: skip
        lines.append(f"| {label} | {pct(value(cpu, sts, metric))} | {pct(value(gpu, sts, metric))} |")
    ours, sent = value(gpu, task, "rouge1:our_c"), value(gpu, task, "rouge1:sent_emb")
    ok = None if ours is None or sent is None else ours >= sent
    details = (entry(gpu, task, "rouge1:our_c") or {}).get("details") or {}
    interval = f" (difference {pct(details.get('minus_sent_emb'), 2)} points, 95% CI {points(details.get('minus_sent_emb_ci95'))})"
    recon, claim = _reconstruction(cpu, gpu)
    return "\n".join([*lines, "", *recon, "", f"- GPU recipe: Our c, K = 10 at least Sent Emb on ROUGE-1: "
                      f"{verdict(ok)}{interval if details else ''}.", claim])  # fmt: skip


def comparison(kind: str, cpu_name: str, gpu_name: str, results_dir: str | Path = "results/codebook") -> str:
    """The markdown block comparing ``cpu_name`` and ``gpu_name`` (``kind``: ``phrase`` or ``sentence``)."""
    cpu, gpu = load(Path(results_dir), cpu_name), load(Path(results_dir), gpu_name)
    head = (f"**{cpu_name}**: {_training(cpu)}. **{gpu_name}**: {_training(gpu)}. Values × 100 except Er_pos, on "
            "the test data of the method page's tables.")  # fmt: skip
    body = (phrase_block if kind == "phrase" else sentence_block)(cpu, gpu, (cpu_name, gpu_name))
    return f"{head}\n\n{body}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=("phrase", "sentence"), required=True)
    parser.add_argument("--cpu", required=True, help="the CPU recipe's name (results/codebook/<name>.json)")
    parser.add_argument("--gpu", required=True, help="the GPU recipe's name")
    parser.add_argument("--results-dir", default="results/codebook")
    parser.add_argument("--readme", help="page to rewrite the block of")
    parser.add_argument("--block", help="block name for --readme")
    args = parser.parse_args(argv)
    text = comparison(args.kind, args.cpu, args.gpu, args.results_dir)
    if args.readme:
        write_readme_table(args.readme, text, args.block or f"{args.gpu}-results")
    print(text)


if __name__ == "__main__":
    main()

"""Time of the codebook model's NNSC E-step: batched FISTA (``solver="pgd"``) vs the official RMSprop loop, at equal
objective, in one run.

Problems are real training-shaped batches: each text is a sentence of the news corpus that ships with gensim
(``lee_background.cor``), its targets the unit GloVe 6B 50-d vectors of the non-stop words of the previous and the
next sentence (at most 30, a set, as in the paper), batch 200, K = 10. Facets come from ``--model`` (a trained codebook
model's raw facets of the sentences) or, by default, from the non-learned control of the spec: the GloVe vectors of
the sentence's own content words (repeated to K), scaled by a random factor in [0.5, 1.5].

Protocol: the official loop (RMSprop lr 0.05 from N(0, 1), clamp, 60 steps as in training and 1,000 as at test) runs
first and its per-problem objective values are recorded; then the smallest FISTA iteration count whose objective is at
or below RMSprop's on *every* problem of the batch is found, and that FISTA run is timed; so is the default FISTA
setting of ``CodebookConfig`` (stops at a projected-gradient tolerance, ends far closer to the optimum). Both
solvers run the same batches in the same process with the same torch thread count, alternating; medians of
``--repeats`` timings are reported.

    .venv/bin/python benchmarks/speed_codebook_nnsc.py                                  # ~1-2 minutes on 1 thread
    .venv/bin/python benchmarks/speed_codebook_nnsc.py --model outputs/codebook-sentence-mini --output results/speed/speed-codebook-nnsc.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import re
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch

from phrasezoo.models.codebook.configuration_codebook import CodebookConfig
from phrasezoo.models.codebook.nnsc import nnsc_objective, solve_pgd, solve_rmsprop

CONFIG = CodebookConfig()  # the solver settings models use by default

_WORD = re.compile(r"\w+|[^\w\s]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")


def corpus_problems(n_batches: int, batch: int, max_targets: int, seed: int):
    """(sentence, target words) pairs from gensim's Lee news corpus: targets = non-stop GloVe words of the neighbours."""
    from spacy.lang.en.stop_words import STOP_WORDS

    from phrasezoo.resources import _gensim_test_data, load_word_vectors

    glove = load_word_vectors("glove-6b-50d")
    stops = {w.lower() for w in STOP_WORDS}
    rng = random.Random(seed)
    pairs = []
    for line in (_gensim_test_data() / "lee_background.cor").read_text(encoding="utf8").splitlines():
        sentences = [s for s in _SENTENCE.split(line.strip()) if s]
        for i, sentence in enumerate(sentences):
            around = " ".join(sentences[max(i - 1, 0) : i] + sentences[i + 1 : i + 2]).lower()
            targets = sorted({w for w in _WORD.findall(around) if w in glove and w not in stops and w.isalpha()})
            own = [w for w in _WORD.findall(sentence.lower()) if w in glove and w not in stops and w.isalpha()]
            if targets and own:
                pairs.append((sentence, rng.sample(targets, min(len(targets), max_targets)), own))
    rng.shuffle(pairs)
    needed = n_batches * batch
    if len(pairs) < needed:
        raise ValueError(f"The corpus gives {len(pairs)} problems; {needed} are needed (lower --batches).")
    return [pairs[b * batch : (b + 1) * batch] for b in range(n_batches)], glove


def tensors(problems, glove, k: int, model, seed: int):
    """Facets (B, K, 50), unit targets (B, N, 50) and the target mask for one batch."""
    g = torch.Generator().manual_seed(seed)
    width = max(len(t) for _, t, _ in problems)
    targets = torch.zeros(len(problems), width, 50)
    mask = torch.zeros(len(problems), width, dtype=torch.bool)
    for b, (_, words, _) in enumerate(problems):
        vectors = torch.as_tensor(np.stack([glove[w] for w in words]))
        targets[b, : len(words)] = torch.nn.functional.normalize(vectors, dim=-1)
        mask[b, : len(words)] = True
    if model is not None:
        facets = model.facets([s for s, _, _ in problems], normalize=False, convert_to_numpy=False)
    else:
        facets = torch.zeros(len(problems), k, 50)
        for b, (_, _, own) in enumerate(problems):
            words = (own * k)[:k]
            vectors = torch.nn.functional.normalize(torch.as_tensor(np.stack([glove[w] for w in words])), dim=-1)
            facets[b] = vectors * (0.5 + torch.rand(k, 1, generator=g))
    return facets, targets, mask


def run_rmsprop(problem, steps: int, seed: int) -> torch.Tensor:
    """The official loop with a fresh seeded start (the same start in every timed run)."""
    return solve_rmsprop(*problem, steps, 0.05, torch.Generator().manual_seed(seed))


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def matched_iterations(facets, targets, mask, reference: torch.Tensor, lam: float, cap: int) -> int | None:
    """Smallest FISTA iteration count (no early stop) at or below ``reference`` on every problem."""
    low, high = 1, cap
    if (nnsc_objective(facets, targets, solve_pgd(facets, targets, mask, lam, cap, 0.0), mask, lam) > reference).any():
        return None
    while low < high:
        mid = (low + high) // 2
        value = nnsc_objective(facets, targets, solve_pgd(facets, targets, mask, lam, mid, 0.0, 1), mask, lam)
        if (value <= reference * (1 + 1e-6)).all():
            high = mid
        else:
            low = mid + 1
    return low


def _gap(row: dict, solver: str) -> float:
    return (row["objective"][solver] - row["objective"]["optimum"]) / row["objective"]["optimum"]


def measure(facets, targets, mask, args, source: str, index: int) -> list[dict]:
    """Time RMSprop (each step setting), FISTA at RMSprop's objective and default FISTA on one batch."""
    optimum = nnsc_objective(facets, targets, solve_pgd(facets, targets, mask, args.lam, 5000, 1e-7), mask, args.lam)
    problem = (facets, targets, mask, args.lam)
    default_pgd = partial(solve_pgd, *problem, CONFIG.nnsc_max_iter, CONFIG.nnsc_tol)
    rows = []
    for steps in args.steps:
        rms = partial(run_rmsprop, problem, steps, args.seed)
        reference = nnsc_objective(facets, targets, rms(), mask, args.lam)
        iters = matched_iterations(facets, targets, mask, reference, args.lam, 2000)
        if iters is None:
            raise RuntimeError("FISTA did not reach RMSprop's objective in 2,000 iterations on some problem.")
        matched = partial(solve_pgd, *problem, iters, 0.0, iters)
        times = {"rmsprop": [], "pgd_matched": [], "pgd_default": []}
        for _ in range(args.repeats):  # alternate so that machine load hits every solver alike
            times["rmsprop"].append(timed(rms)[0])
            times["pgd_matched"].append(timed(matched)[0])
            times["pgd_default"].append(timed(default_pgd)[0])
        med = {name: statistics.median(values) for name, values in times.items()}
        rows.append({
            "facets": source,
            "k": int(facets.shape[1]),
            "batch": index,
            "rmsprop_steps": steps,
            "n_problems": int(facets.shape[0]),
            "n_targets": int(mask.sum()),
            "objective": {
                "optimum": float(optimum.sum()),
                "rmsprop": float(reference.sum()),
                "pgd_matched": float(nnsc_objective(facets, targets, matched(), mask, args.lam).sum()),
                "pgd_default": float(nnsc_objective(facets, targets, default_pgd(), mask, args.lam).sum()),
            },
            "pgd_matched_iterations": iters,
            "seconds": {name: round(value, 5) for name, value in med.items()},
            "speedup_matched": round(med["rmsprop"] / med["pgd_matched"], 1),
            "speedup_default": round(med["rmsprop"] / med["pgd_default"], 1),
        })  # fmt: skip
        print(
            f"{source} batch {index} RMSprop x{steps}: {med['rmsprop']:.3f}s; FISTA {iters} it {med['pgd_matched']:.4f}s"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="trained codebook folder: also measure on its facets (same problems)")
    parser.add_argument("--batches", type=int, default=4, help="batches of problems (default 4)")
    parser.add_argument("--batch-size", type=int, default=200, help="texts per batch (default 200, the paper's)")
    parser.add_argument("--facets", type=int, default=10, help="K of the content-word facets (default 10)")
    parser.add_argument("--max-targets", type=int, default=30, help="targets per text (default 30, the paper's)")
    parser.add_argument("--lam", type=float, default=0.4, help="lambda of eq. 1 (default 0.4 = official 0.2 x 2)")
    parser.add_argument("--steps", type=int, nargs="+", default=[60, 1000], help="RMSprop steps (train 60, test 1000)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per solver and batch (median)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for both solvers (default 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--output", default="results/speed/speed-codebook-nnsc.json", help="JSON results file ('' to skip)"
    )
    args = parser.parse_args()
    if args.batches < 1 or args.batch_size < 2 or args.repeats < 1 or args.threads < 1:
        parser.error("--batches, --repeats and --threads must be >= 1 and --batch-size >= 2")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    model = None
    if args.model:
        from transformers import AutoModel

        model = AutoModel.from_pretrained(args.model, trust_remote_code=True).eval()
    batches, glove = corpus_problems(args.batches, args.batch_size, args.max_targets, args.seed)
    sources = {"content words": None} | ({f"model {args.model}": model} if model is not None else {})
    rows = []
    for source, facet_model in sources.items():
        for index, problems in enumerate(batches):
            facets, targets, mask = tensors(problems, glove, args.facets, facet_model, args.seed + index)
            rows.extend(measure(facets, targets, mask, args, source, index))

    summary = {}
    for source in sources:
        for steps in args.steps:
            subset = [r for r in rows if r["rmsprop_steps"] == steps and r["facets"] == source]
            summary[f"{source} | {steps}"] = {
                "facets": source,
                "k": subset[0]["k"],
                "rmsprop_steps": steps,
                "rmsprop_seconds_per_batch": statistics.median(r["seconds"]["rmsprop"] for r in subset),
                "pgd_matched_seconds_per_batch": statistics.median(r["seconds"]["pgd_matched"] for r in subset),
                "pgd_default_seconds_per_batch": statistics.median(r["seconds"]["pgd_default"] for r in subset),
                "speedup_matched_median": statistics.median(r["speedup_matched"] for r in subset),
                "speedup_matched_min": min(r["speedup_matched"] for r in subset),
                "speedup_default_median": statistics.median(r["speedup_default"] for r in subset),
                "rmsprop_gap_to_optimum": statistics.median(_gap(r, "rmsprop") for r in subset),
                "pgd_default_gap_to_optimum": statistics.median(_gap(r, "pgd_default") for r in subset),
            }
    report = {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "benchmark": "NNSC E-step of the codebook model: batched FISTA vs the official RMSprop loop at equal objective",
        "alternative": "official RMSprop loop (torch.optim.RMSprop lr 0.05, N(0,1) start, clamp to [0,1] each step)",
        "problems": "gensim lee_background.cor sentences; targets = unit GloVe 6B 50-d vectors of the non-stop words "
        "of the previous + next sentence (<= max_targets)",
        "facets": "content words = the non-learned control (the sentence's own content words' GloVe vectors, scaled "
        "by U[0.5, 1.5]); model = the raw facets of --model for the same sentences",
        "batch_size": args.batch_size,
        "max_targets": args.max_targets,
        "lambda": args.lam,
        "repeats": args.repeats,
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "machine": f"{platform.machine()} {os.cpu_count()} cores (shared with other jobs)",
        "summary": summary,
        "batches": rows,
    }
    print()
    print(speed_table(report))
    if args.output:
        path = Path(args.output)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            json.dump(report, handle, indent=1)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        print(f"\nwrote {path}")


def speed_table(report: dict) -> str:
    """Markdown table of the summary (one row per facet source and RMSprop setting)."""
    lines = [
        "| facets | K | RMSprop steps | RMSprop s/batch | FISTA at equal objective: s/batch | speed-up (median, min) | "
        "FISTA default s/batch | speed-up | RMSprop gap to optimum | FISTA default gap |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in report["summary"].values():
        lines.append(
            f"| {s['facets']} | {s['k']} | {s['rmsprop_steps']} | {s['rmsprop_seconds_per_batch']:.3f} | "
            f"{s['pgd_matched_seconds_per_batch']:.4f} | "
            f"{s['speedup_matched_median']:.0f}x, {s['speedup_matched_min']:.0f}x | "
            f"{s['pgd_default_seconds_per_batch']:.4f} | {s['speedup_default_median']:.0f}x | "
            f"{100 * s['rmsprop_gap_to_optimum']:.2f}% | {100 * s['pgd_default_gap_to_optimum']:.1e}% |"
        )
    n_batches = len({(r["facets"], r["batch"]) for r in report["batches"]}) // len(
        {r["facets"] for r in report["batches"]}
    )
    lines.append(
        f"\nBatch {report['batch_size']}, <= {report['max_targets']} real GloVe targets per text, lambda "
        f"{report['lambda']}; {report['torch_threads']} torch thread(s), median of {report['repeats']} alternating "
        f"runs per batch, {n_batches} batches; {report['machine']}; {report['created'][:10]}. "
        "`.venv/bin/python benchmarks/speed_codebook_nnsc.py`"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()

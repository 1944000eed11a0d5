"""SLICE speed, ratios in one run: (1) single-pass span scoring vs one forward pass per span; (2) SpanIndex search vs
a naive matrix with one vector per span.

(1) Best-span scoring of real STS-B-Context passages (``../shared/benchmarks/stsb_context``, a fixed sample: seed,
    size recorded) against their origin sentence, every span of 1..``--max-words`` whitespace words (the paper's
    Table 1 setups C and B over the same span set):
    * single pass: ``model.build_index(passages)`` (one forward pass per passage window + span norms) and
      ``index.passage_scores(queries)``;
    * per span: every span text encoded on its own with ``model.encode`` (length-sorted batches), cosine with the
      query, max per passage.
    Queries are encoded once, outside both timings. Reported: spans scored per second of wall time and the ratio,
    and the ratio of tokens the encoder processes (per span / single pass), the compute ratio the timing approaches:
    about K^2/2 for spans of up to K words, so ~100-200x at K = 20 on these ~40-word passages.
(2) A 100k-passage collection at the model's dimension. Its word vectors are **synthesised** from real ones: the
    sampled STS-B-Context passages are encoded once by the model, and passage ``i`` of the collection reuses the
    word vectors of real passage ``i mod n`` plus Gaussian noise (10% of the per-dimension spread), so the collection
    has real lengths and a realistic geometry without encoding 100k texts on a 2-core CPU. Queries are real origin
    sentences. Reported: bytes and queries per second of the exact SpanIndex (float16 word vectors + float32 span
    norms, and what float32 word vectors would cost), of its FAISS passage first stage (top-1 agreement with exact),
    and of the naive matrix (one float32 vector per span, ``spans x d``). The naive matrix of the full collection does
    not fit in this machine's memory, so its bytes are computed and its speed is measured on the first
    ``--naive-passages`` passages, where the index is timed too and both must return the same top hits.

    .venv/bin/python benchmarks/speed_slice.py                       # ~3-5 minutes on 2 shared cores
    .venv/bin/python benchmarks/speed_slice.py --passages 20 --collection 20000 --output ''   # quick look
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BENCHMARKS = Path(os.environ.get("PHRASEZOO_BENCHMARKS", REPO.parent / "shared" / "benchmarks"))


def load_model(path: str | None):
    from transformers import AutoModel

    from phrasezoo.models.slice.modeling_slice import SliceModel
    from phrasezoo.resources import resolve_backbone

    if path:
        return AutoModel.from_pretrained(path, trust_remote_code=True).eval(), path
    return SliceModel.from_backbone(
        resolve_backbone("minilm-l6")
    ).eval(), "minilm-l6 (raw, via SliceModel.from_backbone)"


def sample_stsb(benchmarks: Path, n: int, seed: int) -> tuple[list[str], list[str], list[int]]:
    from phrasezoo.evaluation.tasks.stsb_context import read_stsb_context

    data = read_stsb_context(benchmarks / "stsb_context" / "sts-test-sentences-clean.tsv")
    rows = sorted(random.Random(seed).sample(range(len(data.passages)), n))
    return [data.lines[i] for i in rows], [data.passages[i] for i in rows], rows


def timed(fn, repeats: int = 1):
    seconds, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), out


# ------------------------------------------------------------------------------------------------ part 1
def single_vs_per_span(model, lines, passages, max_words: int, batch_size: int, repeats: int) -> dict:
    from phrasezoo.evaluation.tasks.stsb_context import span_texts

    queries = model.encode(lines)

    def single_pass():
        index = model.build_index(passages, max_words=max_words, batch_size=batch_size)
        return index, np.diag(index.passage_scores(queries, 1, max_words))

    def per_span():
        spans = [span_texts(p, max_words) for p in passages]
        vectors = model.encode([t for s in spans for t in s], batch_size=batch_size)
        bounds = np.cumsum([0] + [len(s) for s in spans])
        return np.asarray([(vectors[a:b] @ queries[i]).max() for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))])

    single_seconds, (index, single_best) = timed(single_pass, repeats)
    per_span_seconds, per_span_best = timed(per_span, 1)
    all_spans = [t for p in passages for t in span_texts(p, max_words)]
    n_spans = len(all_spans)
    if index.n_spans(1, max_words) != n_spans:
        raise RuntimeError(f"Span sets differ: index {index.n_spans(1, max_words)} vs per-span {n_spans}.")
    # tokens through the encoder (special tokens included): the compute ratio the timing ratio approaches
    tokens_single = int(model.passage_batch(passages, span_words=max_words).attention_mask.sum())
    tokens_per_span = int(sum(len(ids) for ids in model.tokenizer(all_spans)["input_ids"]))
    return {
        "passages": len(passages),
        "spans": n_spans,
        "forward_passes_single": int(len(index.row_passage)),
        "forward_passes_per_span": n_spans,
        "encoder_tokens_single": tokens_single,
        "encoder_tokens_per_span": tokens_per_span,
        "token_ratio": round(tokens_per_span / tokens_single, 1),
        "single_pass_seconds": round(single_seconds, 4),
        "per_span_seconds": round(per_span_seconds, 3),
        "single_pass_spans_per_second": round(n_spans / single_seconds, 1),
        "per_span_spans_per_second": round(n_spans / per_span_seconds, 1),
        "speedup": round(per_span_seconds / single_seconds, 1),
        "pearson_between_setups": round(float(np.corrcoef(single_best, per_span_best)[0, 1]), 4),
    }


# ------------------------------------------------------------------------------------------------ part 2
def synthetic_index(model, passages: list[str], size: int, max_words: int, batch_size: int, seed: int):
    """A SpanIndex of ``size`` passages whose word vectors are noisy copies of real ones (see module docstring)."""
    from phrasezoo.models.slice.span_index import SpanIndex

    base = model.build_index(passages, max_words=max_words, batch_size=batch_size)
    starts = base.row_slot_start
    if len(base.row_passage) != len(passages):
        keep = np.flatnonzero(np.bincount(base.row_passage, minlength=len(passages)) == 1)
        raise RuntimeError(f"Windowed passages are not supported here; use passages {keep[:5]}...")
    words = [np.asarray(base.word_vectors[starts[p] : starts[p + 1]], dtype=np.float32) for p in range(len(passages))]
    spread = float(np.concatenate(words).std(axis=0).mean())
    rng = np.random.default_rng(seed)
    lengths = np.asarray([len(words[i % len(words)]) for i in range(size)], dtype=np.int64)
    slot_start = np.concatenate([[0], np.cumsum(lengths)])
    dim = base.dim
    word_vectors = np.empty((slot_start[-1], dim), dtype=np.float16)
    span_norms = np.zeros((slot_start[-1], max_words), dtype=np.float32)
    sums = np.zeros((size, dim), dtype=np.float64)
    for i in range(size):
        vectors = words[i % len(words)] + rng.normal(0, 0.1 * spread, words[i % len(words)].shape).astype(np.float32)
        vectors = vectors.astype(np.float16).astype(np.float32)  # the stored precision
        word_vectors[slot_start[i] : slot_start[i + 1]] = vectors
        sums[i] = vectors.sum(0)
        prefix = np.vstack([np.zeros((1, dim), np.float64), np.cumsum(vectors, axis=0, dtype=np.float64)])
        n = len(vectors)
        for k in range(1, min(max_words, n) + 1):
            span_norms[slot_start[i] : slot_start[i] + n - k + 1, k - 1] = np.linalg.norm(
                prefix[k:] - prefix[:-k], axis=1
            )
    chars = [base.word_chars[base.passage_word_start[p] : base.passage_word_start[p + 1]] for p in range(len(passages))]
    word_chars = np.concatenate([chars[i % len(chars)] for i in range(size)])
    arrays = {
        "word_vectors": word_vectors,
        "word_counts": np.ones(len(word_vectors), dtype=np.int32),
        "span_norms": span_norms,
        "row_passage": np.arange(size, dtype=np.int64),
        "row_slot_start": slot_start.astype(np.int64),
        "row_first_word": np.zeros(size, dtype=np.int64),
        "word_chars": word_chars.astype(np.int64),
        "passage_word_start": slot_start.astype(np.int64),
        "passage_vectors": (sums / np.linalg.norm(sums, axis=1, keepdims=True)).astype(np.float32),
    }
    texts = [passages[i % len(passages)] for i in range(size)]
    return SpanIndex(texts, arrays, max_words, {"synthetic": True}, encoder=model.encode)


def naive_matrix(index, n_passages: int) -> tuple[np.ndarray, np.ndarray]:
    """One float32 unit vector per span of the first ``n_passages`` passages, and (passage, start, end) per row."""
    rows, keys = [], []
    for p in range(n_passages):
        a, b = index.row_slot_start[p], index.row_slot_start[p + 1]
        vectors = np.asarray(index.word_vectors[a:b], dtype=np.float64)
        prefix = np.vstack([np.zeros((1, index.dim)), np.cumsum(vectors, axis=0)])
        for k in range(1, index.max_words + 1):
            for start in range(0, b - a - k + 1):
                rows.append(prefix[start + k] - prefix[start])
                keys.append((p, start, start + k))
    matrix = np.asarray(rows, dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix, np.asarray(keys)


def naive_search(matrix, keys, queries, top_k: int):
    scores = queries @ matrix.T
    top = np.argpartition(-scores, top_k, axis=1)[:, :top_k]
    order = np.take_along_axis(scores, top, 1).argsort(axis=1)[:, ::-1]
    top = np.take_along_axis(top, order, 1)
    return [[tuple(keys[j]) for j in row] for row in top]


def index_throughput(
    index, model, lines, naive_passages: int, top_k: int, candidates: int, repeats: int, sources: int
) -> dict:
    """Part 2; ``sources``: number of real passages the collection copies (passage i copies i mod sources)."""
    queries = model.encode(lines)
    n_spans = index.n_spans()
    naive_bytes_full = index.naive_nbytes(n_spans, index.dim)
    float32_words = index.word_vectors.size * 4
    exact_seconds, exact = timed(lambda: index.search(queries, top_k=top_k, nms=False), 1)
    staged_seconds, staged = timed(
        lambda: index.search(queries, top_k=top_k, nms=False, first_stage="passage", candidates=candidates), repeats
    )
    agree = np.mean([a[0].passage_index == b[0].passage_index and a[0].word_start == b[0].word_start
                     and a[0].word_end == b[0].word_end for a, b in zip(exact, staged)])  # fmt: skip
    # the collection holds ~collection/sources noisy copies of each real passage: the same span of the same source
    # passage is the same answer up to the noise
    same_source = np.mean([(a[0].passage_index % sources, a[0].word_start, a[0].word_end)
                           == (b[0].passage_index % sources, b[0].word_start, b[0].word_end)
                           for a, b in zip(exact, staged)])  # fmt: skip
    gap = np.mean([a[0].cosine - b[0].cosine for a, b in zip(exact, staged)])

    # the same comparison on a subset small enough for the naive matrix
    from phrasezoo.models.slice.span_index import SpanIndex

    sub_slots = index.row_slot_start[naive_passages]
    sub_arrays = {
        "word_vectors": index.word_vectors[:sub_slots],
        "word_counts": index.word_counts[:sub_slots],
        "span_norms": index.span_norms[:sub_slots],
        "row_passage": index.row_passage[:naive_passages],
        "row_slot_start": index.row_slot_start[: naive_passages + 1],
        "row_first_word": index.row_first_word[:naive_passages],
        "word_chars": index.word_chars[:sub_slots],
        "passage_word_start": index.passage_word_start[: naive_passages + 1],
        "passage_vectors": index.passage_vectors[:naive_passages],
    }
    subset = SpanIndex(index.passages[:naive_passages], sub_arrays, index.max_words)
    matrix, keys = naive_matrix(index, naive_passages)
    naive_seconds, naive_hits = timed(lambda: naive_search(matrix, keys, queries, top_k), repeats)
    sub_seconds, sub_hits = timed(lambda: subset.search(queries, top_k=top_k, nms=False), repeats)
    same = np.mean([[(m.passage_index, m.word_start, m.word_end) for m in hits] == naive
                    for hits, naive in zip(sub_hits, naive_hits)])  # fmt: skip
    n_q = len(queries)
    return {
        "collection_passages": len(index),
        "collection_words": index.n_slots,
        "collection_spans": n_spans,
        "queries": n_q,
        "top_k": top_k,
        "index_bytes": index.nbytes(),
        "index_bytes_if_float32_words": index.nbytes() - index.word_vectors.nbytes + float32_words,
        "naive_bytes": naive_bytes_full,
        "memory_ratio_naive_over_index": round(naive_bytes_full / index.nbytes(), 1),
        "exact_queries_per_second": round(n_q / exact_seconds, 2),
        "faiss_passage_stage_queries_per_second": round(n_q / staged_seconds, 2),
        "faiss_candidates": candidates,
        "faiss_top1_agreement_with_exact": round(float(agree), 3),
        "faiss_top1_same_source_span": round(float(same_source), 3),
        "faiss_top1_cosine_gap_mean": round(float(gap), 5),
        "subset_passages": naive_passages,
        "subset_spans": int(len(keys)),
        "subset_naive_bytes": int(matrix.nbytes),
        "subset_index_bytes": subset.nbytes(),
        "subset_naive_queries_per_second": round(n_q / naive_seconds, 2),
        "subset_index_queries_per_second": round(n_q / sub_seconds, 2),
        "subset_same_top_hits": round(float(same), 3),
    }


def write_json(report: dict, path: Path) -> None:
    from phrasezoo.core.files import readable_replace

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(report, handle, indent=1)
        readable_replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def markdown(report: dict) -> str:
    one, two = report["single_vs_per_span"], report["span_index"]
    gb = 1024**3
    return "\n".join(
        [
            f"| STS-B-Context sample: {one['passages']} passages, {one['spans']:,} spans of 1..{report['max_words']}"
            " words | spans/s | forward passes |",
            "|---|---|---|",
            f"| per span (one forward per span, setup B) | {one['per_span_spans_per_second']:,} |"
            f" {one['forward_passes_per_span']:,} |",
            f"| single pass (SLICE, setup C) | {one['single_pass_spans_per_second']:,} |"
            f" {one['forward_passes_single']:,} |",
            f"| **speed-up** | **{one['speedup']}x** | encoder tokens: {one['token_ratio']}x |",
            "",
            f"| {two['collection_passages']:,} passages (synthetic vectors), {two['collection_spans']:,} spans |"
            " memory | queries/s |",
            "|---|---|---|",
            f"| naive matrix, one float32 vector per span | {two['naive_bytes'] / gb:.1f} GB (computed) |"
            f" {two['subset_naive_queries_per_second']} on {two['subset_passages']} passages |",
            f"| SpanIndex exact (fp16 words + span norms) | {two['index_bytes'] / gb:.2f} GB |"
            f" {two['exact_queries_per_second']} (full); {two['subset_index_queries_per_second']} on the subset |",
            f"| SpanIndex + FAISS passage stage ({two['faiss_candidates']} candidates) | + passage vectors |"
            f" {two['faiss_passage_stage_queries_per_second']} (top-1 = exact for"
            f" {two['faiss_top1_agreement_with_exact']:.0%}; same source span"
            f" {two['faiss_top1_same_source_span']:.0%}) |",
            f"| memory ratio naive / index | {two['memory_ratio_naive_over_index']}x | same top-{two['top_k']} on"
            f" subset: {two['subset_same_top_hits']:.0%} |",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="exported SLICE folder (default: raw MiniLM-L6 through SliceModel)")
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS, help="folder holding stsb_context/")
    parser.add_argument("--passages", type=int, default=12, help="STS-B-Context passages for part 1 (default 12)")
    parser.add_argument("--pool", type=int, default=256, help="real passages whose vectors seed part 2 (default 256)")
    parser.add_argument("--collection", type=int, default=100_000, help="passages of the part 2 collection")
    parser.add_argument("--naive-passages", type=int, default=400, help="subset for the naive matrix (default 400)")
    parser.add_argument("--queries", type=int, default=32, help="queries for part 2 (default 32)")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--candidates", type=int, default=100, help="passages kept by the FAISS first stage")
    parser.add_argument("--max-words", type=int, default=20, help="longest span (default 20, the paper's eval)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of the fast paths (median)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: steadier on a shared CPU)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default="results/speed/speed-slice.json", help="JSON results file ('' to skip)")
    args = parser.parse_args()
    if min(args.passages, args.pool, args.collection, args.naive_passages, args.queries, args.threads) < 1:
        parser.error("sizes and --threads must be >= 1")
    if args.naive_passages > args.collection:
        parser.error("--naive-passages must not exceed --collection")
    torch.set_num_threads(args.threads)
    os.environ.setdefault("PHRASEZOO_NO_PROGRESS", "1")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    model, model_name = load_model(args.model)
    load_start = round(os.getloadavg()[0], 2)

    lines, passages, rows = sample_stsb(args.benchmarks, args.passages, args.seed)
    part1 = single_vs_per_span(model, lines, passages, args.max_words, args.batch_size, args.repeats)
    print(f"part 1 done: {part1['speedup']}x", flush=True)

    pool_lines, pool, _ = sample_stsb(args.benchmarks, args.pool, args.seed + 1)
    short = [i for i, p in enumerate(pool) if len(model.tokenizer(p)["input_ids"]) <= model.config.max_seq_length]
    pool_lines, pool = [pool_lines[i] for i in short], [pool[i] for i in short]
    index = synthetic_index(model, pool, args.collection, args.max_words, args.batch_size, args.seed)
    print(f"collection built: {index.n_slots:,} words", flush=True)
    part2 = index_throughput(
        index,
        model,
        pool_lines[: args.queries],
        args.naive_passages,
        args.top_k,
        args.candidates,
        args.repeats,
        len(pool),
    )
    report = {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "benchmark": "SLICE: single-pass span scoring vs one forward per span; SpanIndex vs naive all-spans matrix",
        "model": model_name,
        "max_words": args.max_words,
        "part1_sample": {"source": "stsb_context/sts-test-sentences-clean.tsv", "seed": args.seed, "rows": rows},
        "part2_vectors": (
            f"synthetic: {len(pool)} real STS-B-Context passages (seed {args.seed + 1}, <= max_seq_length tokens) "
            "encoded by the model; collection passage i = real passage i mod n, word vectors + N(0, (0.1 x "
            "per-dim spread)^2), stored as float16; queries = their origin sentences"
        ),
        "single_vs_per_span": part1,
        "span_index": part2,
        "torch_threads": args.threads,
        "torch": torch.__version__,
        "machine": f"{platform.machine()} {os.cpu_count()} cores (shared with other jobs)",
        "load_average_start": load_start,
        "command": "python benchmarks/speed_slice.py "
        + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v not in (None, "")),
    }
    if args.output:
        write_json(report, REPO / args.output if not os.path.isabs(args.output) else Path(args.output))
    print(markdown(report))


if __name__ == "__main__":
    main()

"""Fuzzy join at scale: a 1,000,000-row right table against a 1,000,000-row left table on this machine.

The tables (``benchmarks/match_scale_data.py``): real names on the left, seeded corruptions of them on the right
(typos, abbreviations, reordering, dropped words), so the true left row of every right row is known. Accuracy is
top-1: the best left row is the one the right row was made from.

Methods, each run as its own child process so each has its own peak RSS (the tree's, Java included for Spark):

* ``embed``: all-MiniLM-L6-v2 (or ``--model``) vectors streamed to disk in chunks (resumable: finished chunks are
  kept), a faiss IVF index with fp16 scalar-quantised storage over the left vectors, every right row searched.
  The fp16 check compares exact top-1 search with fp32 and fp16 vectors on a seeded sample of queries, and the
  IVF check compares IVF with exact search on the same sample.
* ``tfidf``: char n-gram TF-IDF (``char_wb`` 2-4, sublinear tf; what PolyFuzz and skrub users get) fitted on both
  tables, sparse top-1 by chunked sparse products; the search runs on a sample of queries against the full left
  table and its time is extrapolated to all rows (said so in the results).
* ``rapidfuzz``: ``process.cdist`` (``token_sort_ratio``, workers = cores) of a sample of queries against the
  full left table; extrapolated the same way (10^12 pairs would take days).
* ``matcher``: the default matcher fitted on the full left table (its encoder embeds it), a seeded sample of
  right rows searched (``--matcher-sample``): faiss and sparse character top-k candidates, the learned reranker;
  its fit is timed in full, its search extrapolated from the sample.
* ``spark``: the splink integration on local Spark over a 100k subset (100k right rows and their left rows):
  neighbour blocking and splink's cosine comparison; shows the path works at that size.
* ``spark-matcher``: the default matcher on local Spark over the same subset (fitted once, loaded per executor),
  then splink with the matcher's score as its comparison, m and u fixed from the matcher's calibration
  (:mod:`phrasezoo.integrations.splink_matcher`): precision and recall at match probability 0.5, 0.8, 0.9, 0.95.

    .venv/bin/python benchmarks/match_scale.py --subset 20000       # a dev run on a 20k x 20k subset of the tables
    nohup .venv/bin/python benchmarks/match_scale.py --size 1000000 --threads 2 \\
        --output results/matching/scale-1m.json --docs docs/matching-scale.md > scale.log 2>&1 &
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHUNK = 16_384
STEPS = ("tables", "encode", "embed", "tfidf", "rapidfuzz", "matcher", "spark", "spark-matcher")


# ------------------------------------------------------------------------------------------------- utilities
class PeakRSS:
    """Peak resident memory of this process and its children (sampled every 0.2 s, plus ru_maxrss)."""

    def __init__(self) -> None:
        import psutil

        self.process = psutil.Process()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        total = 0
        for proc in [self.process, *self.process.children(recursive=True)]:
            try:
                total += proc.memory_info().rss
            except Exception:  # noqa: BLE001 - a child may exit between listing and reading
                continue
        self.peak = max(self.peak, total)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self._sample()

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def gib(self) -> float:
        import resource

        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        return round(max(self.peak, own) / 2**30, 3)


def workdir(root: Path, size: int, seed: int) -> Path:
    folder = root / f"size-{size}-seed-{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def load_tables(folder: Path, n: int | None = None):
    """``(left, right, truth)`` of the ``n x n`` subset (all rows when ``n`` is None): the first ``n`` right rows
    (a seeded random order) and the left rows they were made from, in the left table's own order;
    ``right[j]`` was made from ``left[truth[j]]``."""
    import pyarrow.parquet as pq

    left_all = pq.read_table(folder / "left.parquet").column("name").to_pylist()
    right_table = pq.read_table(folder / "right.parquet")
    right_all = right_table.column("name").to_pylist()
    truth_all = np.asarray(right_table.column("truth").to_numpy())
    n = len(right_all) if n is None else min(n, len(right_all))
    ids = np.sort(truth_all[:n])
    position = np.full(len(left_all), -1, dtype=np.int64)
    position[ids] = np.arange(n)
    return [left_all[i] for i in ids], right_all[:n], position[truth_all[:n]]


def subset_size(args) -> int | None:
    return args.subset if getattr(args, "subset", None) else None


def step_file(step: str, args) -> str:
    """``step-<name>.json`` for the whole table, ``step-<name>-<n>.json`` for an ``n x n`` subset."""
    if step in ("spark", "spark-matcher"):
        return f"step-{step}-{args.spark_rows}.json"
    n = subset_size(args)
    return f"step-{step}.json" if not n or step == "tables" else f"step-{step}-{n}.json"


def save_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)


def sample_rows(n: int, size: int, seed: int) -> np.ndarray:
    return np.sort(np.random.default_rng(seed).choice(n, size=min(size, n), replace=False))


# ------------------------------------------------------------------------------------------------------ steps
def step_tables(args, folder: Path) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from match_scale_data import build_tables

    start = time.perf_counter()
    left, right, truth, facts = build_tables(args.size, Path(args.benchmarks), seed=args.seed)
    pq.write_table(pa.table({"name": left}), folder / "left.parquet")
    pq.write_table(pa.table({"name": right, "truth": np.asarray(truth, dtype=np.int64)}), folder / "right.parquet")
    facts["seconds"] = round(time.perf_counter() - start, 1)
    return facts


def step_encode(args, folder: Path) -> dict:
    """Encode chunk pairs: ``right-NNNN.npy`` holds right rows ``[N*CHUNK, (N+1)*CHUNK)`` and ``left-NNNN.npy`` the
    left rows they were made from, in the same order (float32). So any prefix of chunks holds a complete ``n x n``
    subset, and a dev run on a subset leaves chunks the full run reuses. Finished chunks are skipped (resumable);
    the encoding seconds of every chunk are kept beside it, so a resumed run still adds them up."""
    import pyarrow.parquet as pq

    from phrasezoo.integrations.splink_tables import encode_texts, resolve_encoder

    left_all = pq.read_table(folder / "left.parquet").column("name").to_pylist()
    right_table = pq.read_table(folder / "right.parquet")
    right_all = right_table.column("name").to_pylist()
    truth_all = np.asarray(right_table.column("truth").to_numpy())
    n = min(subset_size(args) or len(right_all), len(right_all))
    encoder = resolve_encoder(args.model, batch_size=256, progress=False)
    seconds, encoded = {"left": 0.0, "right": 0.0}, 0
    shard, shards = (int(x) for x in (getattr(args, "shard", None) or "0/1").split("/"))
    for number in range((n + CHUNK - 1) // CHUNK):
        if number % shards != shard:  # another encoding process of this run takes it
            continue
        rows = np.arange(number * CHUNK, min((number + 1) * CHUNK, len(right_all)))
        texts = {"right": [right_all[j] for j in rows], "left": [left_all[i] for i in truth_all[rows]]}
        for side in ("left", "right"):
            path = folder / f"{side}-{number:04d}.npy"
            record = path.with_suffix(".json")
            if path.exists() and record.exists():
                seconds[side] += json.loads(record.read_text())["seconds"]
                continue
            start = time.perf_counter()
            vectors, _ = encode_texts(encoder, texts[side], chunk_size=CHUNK, progress=False)
            took = time.perf_counter() - start
            tmp = path.with_suffix(".tmp.npy")
            np.save(tmp, vectors.astype(np.float32))
            tmp.replace(path)
            save_json(record, {"seconds": took, "rows": len(vectors)})
            seconds[side] += took
            encoded += len(vectors)
            print(f"[encode] chunk {number} {side}: rows to {rows[-1] + 1}/{n}, {len(vectors) / took:.0f} rows/s",
                  flush=True)  # fmt: skip
    chunks = (n + CHUNK - 1) // CHUNK
    rows_in_chunks = min(chunks * CHUNK, len(right_all))
    return {
        "model": args.model if isinstance(args.model, str) else getattr(encoder, "name", type(encoder).__name__),
        "rows": n,
        # per-row encoding time of the chunks, scaled to the subset's n rows per side
        "left_seconds": round(seconds["left"] * n / rows_in_chunks, 1),
        "right_seconds": round(seconds["right"] * n / rows_in_chunks, 1),
        "rows_encoded_this_run": encoded,
        "rows_per_second": round(2 * rows_in_chunks / max(1e-9, seconds["left"] + seconds["right"]), 1),
    }


def subset_vectors(
    folder: Path, truth_order: np.ndarray, n: int, right_dtype=np.float32
) -> tuple[np.ndarray, np.ndarray]:
    """``(left vectors in the subset's left order (float32), right vectors (right_dtype))`` of the ``n x n`` subset,
    filled chunk by chunk from the chunk pairs (``left-NNNN.npy`` row j belongs at subset position truth[j])."""
    dim = np.load(folder / "left-0000.npy", mmap_mode="r").shape[1]
    left = np.empty((n, dim), dtype=np.float32)
    right = np.empty((n, dim), dtype=right_dtype)
    for begin in range(0, n, CHUNK):
        number, end = begin // CHUNK, min(begin + CHUNK, n)
        left[truth_order[begin:end]] = np.load(folder / f"left-{number:04d}.npy", mmap_mode="r")[: end - begin]
        right[begin:end] = np.load(folder / f"right-{number:04d}.npy", mmap_mode="r")[: end - begin]
    return left, right


def right_sample(folder: Path, rows: np.ndarray) -> np.ndarray:
    """float32 vectors of the given right rows, read from their chunks (each chunk file read once)."""
    out = None
    for number in np.unique(rows // CHUNK):
        chosen = np.flatnonzero(rows // CHUNK == number)
        chunk = np.load(folder / f"right-{number:04d}.npy")
        out = np.empty((len(rows), chunk.shape[1]), dtype=np.float32) if out is None else out
        out[chosen] = chunk[rows[chosen] % CHUNK]
    return out


def _exact_top1(base: np.ndarray, queries: np.ndarray) -> np.ndarray:
    import faiss

    index = faiss.IndexFlatIP(base.shape[1])
    index.add(np.ascontiguousarray(base, dtype=np.float32))
    return index.search(np.ascontiguousarray(queries, dtype=np.float32), 1)[1][:, 0]


def step_embed(args, folder: Path) -> dict:
    """faiss IVF (fp16 storage) over the left vectors, all right rows searched; fp16 and IVF checks on a sample."""
    import faiss

    left, right, truth = load_tables(folder, subset_size(args))
    encode = json.loads((folder / step_file("encode", args)).read_text())
    dim = np.load(folder / "left-0000.npy", mmap_mode="r").shape[1]
    sample = sample_rows(len(right), args.check_sample, args.seed + 3)

    # fp16 check: exact search with fp32 and with fp16-rounded vectors, on the sample of queries
    left32, right16 = subset_vectors(folder, truth, len(right), right_dtype=np.float16)
    queries32 = right_sample(folder, sample)
    exact32 = _exact_top1(left32, queries32)
    left16 = left32.astype(np.float16)
    del left32
    exact16 = _exact_top1(left16.astype(np.float32), queries32.astype(np.float16).astype(np.float32))
    fp16_check = {
        "sample": len(sample),
        "accuracy_fp32": float(np.mean(exact32 == truth[sample])),
        "accuracy_fp16": float(np.mean(exact16 == truth[sample])),
        "top1_agreement": float(np.mean(exact32 == exact16)),
    }

    # the IVF index: trained on a seeded sample of left vectors, fp16 storage, left added chunk by chunk
    start = time.perf_counter()
    nlist = int(max(1, min(4 * np.sqrt(len(left)), len(left) // 39, 4096)))
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFScalarQuantizer(quantizer, dim, nlist, faiss.ScalarQuantizer.QT_fp16,
                                          faiss.METRIC_INNER_PRODUCT)  # fmt: skip
    train = sample_rows(len(left), max(nlist * 39, min(len(left), 50 * nlist)), args.seed + 4)
    index.train(left16[train].astype(np.float32))
    for begin in range(0, len(left), CHUNK):
        index.add(left16[begin : begin + CHUNK].astype(np.float32))
    del left16
    index.nprobe = min(args.nprobe, nlist)
    build_seconds = time.perf_counter() - start

    start = time.perf_counter()
    found = np.empty(len(right), dtype=np.int64)
    for begin in range(0, len(right), CHUNK):
        found[begin : begin + CHUNK] = index.search(right16[begin : begin + CHUNK].astype(np.float32), 1)[1][:, 0]
    search_seconds = time.perf_counter() - start
    total = encode["left_seconds"] + encode["right_seconds"] + build_seconds + search_seconds
    return {
        "method": f"{encode['model']} + faiss IVF{nlist},SQfp16 (nprobe {index.nprobe})",
        "accuracy": float(np.mean(found == truth)),
        "accuracy_on_check_sample": float(np.mean(found[sample] == truth[sample])),
        "ivf_agreement_with_exact_fp32": float(np.mean(found[sample] == exact32)),
        "fp16_check": fp16_check,
        "seconds": {"encode_left": encode["left_seconds"], "encode_right": encode["right_seconds"],
                    "index": round(build_seconds, 1), "search": round(search_seconds, 1), "total": round(total, 1)},
        "rows_per_second": round(len(right) / total, 1),
        "extrapolated": False,
        "vector_bytes_per_row": dim * 2,
    }  # fmt: skip


def step_tfidf(args, folder: Path) -> dict:
    """char_wb 2-4 TF-IDF fitted on both tables; sparse top-1 of a query sample against the full left table."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    left, right, truth = load_tables(folder, subset_size(args))
    sample = sample_rows(len(right), args.query_sample, args.seed + 5)
    start = time.perf_counter()
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, dtype=np.float32)
    vectorizer.fit(left + right)
    left_matrix = vectorizer.transform(left).T.tocsr()  # (features, left rows): queries @ this
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    queries = vectorizer.transform([right[i] for i in sample])
    found = np.empty(len(sample), dtype=np.int64)
    for begin in range(0, len(sample), 256):
        product = (queries[begin : begin + 256] @ left_matrix).tocsr()
        for row in range(product.shape[0]):
            lo, hi = product.indptr[row], product.indptr[row + 1]
            found[begin + row] = product.indices[lo + np.argmax(product.data[lo:hi])] if hi > lo else -1
    search_seconds = time.perf_counter() - start
    per_query = search_seconds / len(sample)
    total = fit_seconds + per_query * len(right)
    return {
        "method": "char TF-IDF (char_wb 2-4, sublinear) sparse top-1",
        "accuracy": float(np.mean(found == truth[sample])),
        "accuracy_sample": len(sample),
        "seconds": {"fit_and_transform_left": round(fit_seconds, 1), "search_sample": round(search_seconds, 1),
                    "total_extrapolated": round(total, 1)},
        "rows_per_second": round(len(right) / total, 1),
        "extrapolated": len(sample) < len(right),
    }  # fmt: skip


def step_rapidfuzz(args, folder: Path) -> dict:
    """rapidfuzz process.cdist (token_sort_ratio, workers = cores) of a query sample against the full left table."""
    from rapidfuzz import fuzz, process, utils

    left, right, truth = load_tables(folder, subset_size(args))
    sample = sample_rows(len(right), args.rapidfuzz_sample, args.seed + 6)
    workers = os.cpu_count() or 1
    start = time.perf_counter()
    keys = [utils.default_process(t) for t in left]
    prepare = time.perf_counter() - start
    start = time.perf_counter()
    found = np.empty(len(sample), dtype=np.int64)
    step = max(1, 50_000_000 // len(left))  # at most 50M uint8 scores at a time
    for begin in range(0, len(sample), step):
        queries = [utils.default_process(right[i]) for i in sample[begin : begin + step]]
        scores = process.cdist(queries, keys, scorer=fuzz.token_sort_ratio, workers=workers, dtype=np.uint8)
        found[begin : begin + len(queries)] = scores.argmax(axis=1)
    search_seconds = time.perf_counter() - start
    total = prepare + search_seconds / len(sample) * len(right)
    return {
        "method": f"rapidfuzz cdist token_sort_ratio (workers={workers})",
        "accuracy": float(np.mean(found == truth[sample])),
        "accuracy_sample": len(sample),
        "seconds": {"search_sample": round(search_seconds, 1), "total_extrapolated": round(total, 1)},
        "rows_per_second": round(len(right) / total, 2),
        "extrapolated": len(sample) < len(right),
    }


def precision_recall_at(pairs, truth: np.ndarray, cut: float) -> dict[str, float]:
    """Precision and recall of the linked pairs (one per right row: ``unique_id_l``, ``unique_id_r``,
    ``match_probability``) at match probability >= ``cut`` (a probability equal to the cut up to float rounding
    counts); ``right[j]`` was made from ``left[truth[j]]``."""
    confident = pairs[pairs["match_probability"] >= cut - 1e-9]
    found = zip(confident["unique_id_r"], confident["unique_id_l"])
    correct = sum(int(truth[int(right_id)]) == int(left_id) for right_id, left_id in found)
    return {
        f"precision_at_{cut}": float(correct / max(1, len(confident))),
        f"recall_at_{cut}": float(correct / len(truth)),
    }


def step_spark(args, folder: Path) -> dict:
    """The splink integration on local Spark over a subset: the first ``--spark-rows`` right rows (a seeded random
    order) and their left rows; vectors from the encode step; neighbour blocking, cosine + Jaro-Winkler."""
    import pandas as pd
    import splink.comparison_library as cl
    from splink import Linker, SettingsCreator, SparkAPI, block_on

    from phrasezoo.integrations.splink import add_neighbour_blocks, cosine_comparison, local_spark
    from phrasezoo.integrations.splink import neighbour_blocking_rule as knn_rule
    from phrasezoo.integrations.splink_tables import vectors_to_arrow

    left, right, truth = load_tables(folder, args.spark_rows)
    n = len(right)
    left_vectors, right_vectors = subset_vectors(folder, truth, n)

    def frame(names, vectors, ids):
        data = pd.DataFrame({"unique_id": ids, "name": names})
        data["name_embedding"] = pd.Series(pd.arrays.ArrowExtensionArray(vectors_to_arrow(vectors)))
        return data

    start = time.perf_counter()
    spark = local_spark(cores=args.threads, shuffle_partitions=max(2, args.threads), driver_memory="6g")
    started = time.perf_counter() - start
    start = time.perf_counter()
    left_df = spark.createDataFrame(frame(left, left_vectors, np.arange(n)))
    right_df = spark.createDataFrame(frame(right, right_vectors, np.arange(n)))
    # EM trains on each right row paired with its nearest left row (``nearest``): a plain key that explodes nothing.
    # Blocking EM on a shared first word instead pairs ~10^9 rows at 100k ("the", "list", years) and never ends.
    left_df, right_df = add_neighbour_blocks([left_df, right_df], "name_embedding", k=args.k, nearest_column="nearest")
    settings = SettingsCreator(
        link_type="link_only",
        comparisons=[cosine_comparison("name_embedding"), cl.JaroWinklerAtThresholds("name", [0.95, 0.88, 0.7])],
        blocking_rules_to_generate_predictions=[knn_rule()],
        probability_two_random_records_match=1.0 / n,
        retain_matching_columns=False,  # the predictions would carry both sides' 384-d vectors: gigabytes at 100k
        retain_intermediate_calculation_columns=False,
    )
    api = SparkAPI(spark_session=spark, break_lineage_method="persist", num_partitions_on_repartition=args.threads)
    linker = Linker([left_df, right_df], settings, db_api=api)
    linker.training.estimate_u_using_random_sampling(max_pairs=1e5, seed=args.seed)
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("nearest"))
    columns = ["unique_id_l", "unique_id_r", "match_weight", "match_probability"]
    predictions = linker.inference.predict().as_spark_dataframe().select(*columns).toPandas()
    seconds = time.perf_counter() - start
    by_weight = ["match_weight", "unique_id_l"]  # ties go to the lower left id, so reruns agree
    best = predictions.sort_values(by_weight, ascending=[False, True], kind="stable")
    best = best.drop_duplicates("unique_id_r")
    chosen = dict(zip(best["unique_id_r"].astype(int), best["unique_id_l"].astype(int)))
    top1 = np.mean([chosen.get(j) == int(truth[j]) for j in range(n)])
    spark.stop()
    return {
        "method": f"splink on local Spark: neighbour blocking (k={args.k}) + cosine + Jaro-Winkler",
        "rows": n,
        "compared_pairs": int(len(predictions)),
        "top1_accuracy": float(top1),
        **precision_recall_at(best, truth, 0.5),
        "seconds": {"spark_start": round(started, 1), "link": round(seconds, 1)},
        "rows_per_second": round(n / seconds, 1),
        "vectors": "reused from the encode step (Spark's own encoding, add_embedding_column on executors, is "
        "tested in tests/integrations/test_splink_spark.py)",
    }


def step_spark_matcher(args, folder: Path) -> dict:
    """The default matcher on local Spark over the same subset as ``spark``, then splink with the matcher's score
    as its comparison (m and u fixed from the matcher's calibration, ``lambda = 1 / rows``): the matcher is fitted
    once on the driver, saved, and loaded by each executor, which searches its partitions of the right rows."""
    import pandas as pd
    from splink import Linker, SettingsCreator, SparkAPI, block_on

    from phrasezoo.integrations.splink import local_spark
    from phrasezoo.integrations.splink_matcher import BEST_COLUMN, add_matcher_scores, matcher_comparison

    left, right, truth = load_tables(folder, args.spark_rows)
    n = len(right)
    start = time.perf_counter()
    spark = local_spark(cores=args.threads, shuffle_partitions=max(2, args.threads), driver_memory="6g")
    started = time.perf_counter() - start
    start = time.perf_counter()
    left_df = spark.createDataFrame(pd.DataFrame({"unique_id": np.arange(n), "name": left}))
    right_df = spark.createDataFrame(pd.DataFrame({"unique_id": np.arange(n), "name": right}))
    right_df = right_df.repartition(max(2, args.threads) * 8)  # small partitions: steady progress, bounded memory
    (left_df, right_df), matcher = add_matcher_scores([left_df, right_df], "name", args.matcher)
    right_df = right_df.persist()
    picks = right_df.select("unique_id", BEST_COLUMN).toPandas()
    matched = time.perf_counter() - start
    settings = SettingsCreator(
        link_type="link_only",
        comparisons=[matcher_comparison(matcher, left_rows=n)],
        blocking_rules_to_generate_predictions=[block_on(BEST_COLUMN)],
        probability_two_random_records_match=1.0 / n,
        retain_matching_columns=False,
        retain_intermediate_calculation_columns=False,
    )
    api = SparkAPI(spark_session=spark, break_lineage_method="persist", num_partitions_on_repartition=args.threads)
    linker = Linker([left_df, right_df], settings, db_api=api)
    columns = ["unique_id_l", "unique_id_r", "match_weight", "match_probability"]
    predictions = linker.inference.predict().as_spark_dataframe().select(*columns).toPandas()
    seconds = time.perf_counter() - start
    chosen = dict(zip(picks["unique_id"].astype(int), picks[BEST_COLUMN]))
    top1 = np.mean([chosen.get(j) is not None and int(chosen[j]) == int(truth[j]) for j in range(n)])
    out = {}
    for cut in (0.5, 0.8, 0.9, 0.95):
        out.update(precision_recall_at(predictions, truth, cut))
    spark.stop()
    return {
        "method": "splink on local Spark: the default matcher's pick and score (m, u from its calibration)",
        "matcher": matcher.name,
        "rows": n,
        "compared_pairs": int(len(predictions)),
        "top1_accuracy": float(top1),
        **out,
        "seconds": {"spark_start": round(started, 1), "match": round(matched, 1), "link": round(seconds - matched, 1)},
        "rows_per_second": round(n / seconds, 1),
    }


def step_matcher(args, folder: Path) -> dict:
    """The default matcher (``--matcher``) fitted on the full left table (the encoder embeds it, the character
    channel is fitted on it), then a seeded sample of right rows searched top-1: candidates from each channel's own
    index (faiss for the vectors, a sparse top-k for character TF-IDF), reranked by the learned combination. Its
    accuracy is measured on the sample; its time is the fit plus the sample's time extrapolated to all rows (said so
    in the table).

    The extrapolation separates the one-off work per reference row: the hybrid matcher computes a row's
    neighbourhood statistics (a search of the whole table) the first time the row is a candidate, so a sample pays
    them for all its candidates while a full run pays them at most once per reference row. The sample is searched
    twice: the second pass (encoder caches cleared, every statistic known) gives the per-query time, the difference
    gives the time per statistic, counted once for every reference row (an upper bound). ``fit`` includes the vector
    channels' faiss indexes (``Matcher.fit`` builds them: ``fit_includes_indexes``), so no one-off index build is
    left in the first pass for the difference to spread over every reference row (steps before 2026-12-05 built them
    lazily and timed them apart, as ``indexes``)."""
    from phrasezoo.match import Matcher

    left, right, truth = load_tables(folder, subset_size(args))
    sample = sample_rows(len(right), args.matcher_sample, args.seed + 6)
    queries = [right[i] for i in sample]
    matcher = Matcher(args.matcher, progress=False)
    level_seconds = time_table_level(matcher.scorer)
    start = time.perf_counter()
    matcher.fit(left)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    scores, ids = matcher.search(queries, top_k=1)
    search_seconds = time.perf_counter() - start
    hub = getattr(matcher.scorer, "hub", None) or {}
    known_rows = int(np.sum(~np.isnan(hub["char_hub"]))) if "char_hub" in hub else 0
    matcher.scorer.clear_cache()
    start = time.perf_counter()
    matcher.search(queries, top_k=1)
    repeat_seconds = time.perf_counter() - start
    per_row = max(search_seconds - repeat_seconds, 0.0) / known_rows if known_rows else 0.0
    decision = decision_at_scale(matcher, queries, scores, ids, truth[sample], level_seconds, fit_seconds)
    setup = fit_seconds
    total = setup + repeat_seconds / len(sample) * len(right) + per_row * len(left)
    linear = setup + search_seconds / len(sample) * len(right)
    return {
        "method": (f"the default matcher ({matcher.name}): faiss + sparse char top-k candidates, learned reranker"
                   if matcher.name.startswith("hybrid") else f"matcher {matcher.name}"),  # fmt: skip
        "accuracy": float(np.mean(ids[:, 0] == truth[sample])),
        "accuracy_sample": len(sample),
        "seconds": {"fit": round(fit_seconds, 1), "search_sample": round(search_seconds, 1),
                    "search_sample_again": round(repeat_seconds, 1), "total_extrapolated": round(total, 1),
                    "total_linear": round(linear, 1)},
        "neighbourhood_rows": {"computed_for_sample": known_rows, "seconds_each": round(per_row, 4)},
        "fit_includes_indexes": True,
        "rows_per_second": round(len(right) / total, 1),
        "query_rows_per_second": round(len(sample) / search_seconds, 2),
        "extrapolated": len(sample) < len(right),
        **({"decision": decision} if decision else {}),
    }  # fmt: skip


def time_table_level(scorer) -> list[float]:
    """Wrap the scorer's decision table level (a self-join of a fixed sample of reference rows, run inside ``fit``)
    so that its seconds are recorded in the returned list."""
    seconds: list[float] = []
    if not hasattr(scorer, "self_join_level"):
        return seconds
    inner = scorer.self_join_level

    def timed() -> float:
        start = time.perf_counter()
        level = inner()
        seconds.append(time.perf_counter() - start)
        return level

    scorer.self_join_level = timed
    return seconds


def decision_at_scale(matcher, queries: list[str], scores: np.ndarray, ids: np.ndarray, truth: np.ndarray,
                      level_seconds: list[float], fit_seconds: float) -> dict:  # fmt: skip
    """What the open-world decision (issue 64) costs and keeps at this size: the seconds of the fit spent on its table
    level (timed inside this fit) and how much the fit grows by it, and precision / recall of
    ``threshold="auto"`` at targets 0.8 / 0.9 / 0.95 on the sample, beside the same ranking without its decision
    (the matcher before issue 64: the combination's own calibrated score and threshold table). Every right row has
    its left row here (a closed world). Empty for a matcher without a decision."""
    scorer = matcher.scorer
    if getattr(scorer, "decision", None) is None:
        return {}
    level = sum(level_seconds)
    right = ids[:, 0] == truth

    def kept(values: np.ndarray) -> dict:
        out = {}
        for target in (0.8, 0.9, 0.95):
            keep = values[:, 0] >= matcher.threshold_for(target)
            out[str(target)] = {"precision": round(float(right[keep].mean()) if keep.any() else 1.0, 4),
                                "recall": round(float((right & keep).mean()), 4)}  # fmt: skip
        return out

    with_decision = kept(scores)
    saved, scorer.decision = scorer.decision, None
    try:
        before, before_ids = matcher.search(queries, top_k=1)
        without = kept(before)
    finally:
        scorer.decision = saved
    return {"table_level_seconds": round(level, 2), "fit_growth": round(level / max(fit_seconds - level, 1e-9), 4),
            "auto": with_decision, "auto_before_decision": without,
            "same_top1": bool(np.array_equal(before_ids[:, 0], ids[:, 0]))}  # fmt: skip


STEP_FUNCTIONS = {"tables": step_tables, "encode": step_encode, "embed": step_embed, "tfidf": step_tfidf,
                  "rapidfuzz": step_rapidfuzz, "matcher": step_matcher, "spark": step_spark,
                  "spark-matcher": step_spark_matcher}  # fmt: skip


# ----------------------------------------------------------------------------------------------------- driver
def run_step(args, folder: Path) -> None:
    """Run one step in this process; write ``step-<name>.json`` with its peak RSS."""
    import torch

    torch.set_num_threads(args.threads)
    with PeakRSS() as rss:
        result = STEP_FUNCTIONS[args.step](args, folder)
    result["peak_rss_gib"] = rss.gib()
    save_json(folder / step_file(args.step, args), result)
    print(f"[{args.step}] {json.dumps(result)}", flush=True)


def child_command(args, step: str) -> list[str]:
    command = [sys.executable, str(Path(__file__).resolve()), "--step", step]
    for name in ("size", "subset", "seed", "threads", "model", "benchmarks", "workdir", "nprobe", "k", "check_sample",
                 "query_sample", "rapidfuzz_sample", "matcher_sample", "spark_rows", "matcher"):  # fmt: skip
        command += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    return command


def encode_in_shards(args, env: dict) -> None:
    """``--encode-processes`` N: N encoding processes (``--threads`` each) take every N-th chunk pair; then one more
    pass, which finds every chunk done, writes the step's record. A chunk's seconds are its own process's, so the
    recorded rows per second are per process (the machine's rate is about N times that when N processes fit)."""
    children = [subprocess.Popen([*child_command(args, "encode"), "--shard", f"{i}/{args.encode_processes}"], env=env)
                for i in range(args.encode_processes)]  # fmt: skip
    codes = [child.wait() for child in children]
    if any(codes):
        raise SystemExit(f"an encoding process failed (exit codes {codes}); rerun to resume from the finished chunks")


def table_rows(results: dict) -> str:
    """The markdown table of a results file (the docs block)."""
    size = results["size"]
    whole = results.get("table_rows", size)
    scope = f"{size:,} x {size:,}" + (f" subset of the {whole:,}-row tables" if whole != size else "")
    lines = [
        f"| method ({scope}) | top-1 accuracy | rows per second | peak RSS (GiB) | measured on |",
        "|---|---|---|---|---|",
    ]
    for key in ("embed", "tfidf", "rapidfuzz", "matcher"):
        step = results["steps"].get(key)
        if not step:
            continue
        where = (f"{step['accuracy_sample']:,} sampled queries, time extrapolated"
                 if step.get("extrapolated") else "all rows")  # fmt: skip
        lines.append(f"| {step['method']} | {100 * step['accuracy']:.1f} | {step['rows_per_second']:,} | "
                     f"{step['peak_rss_gib']:.2f} | {where} |")  # fmt: skip
    for key in ("spark", "spark-matcher"):
        spark = results["steps"].get(key)
        if spark:
            lines.append(f"| {spark['method']} | {100 * spark['top1_accuracy']:.1f} | {spark['rows_per_second']:,} | "
                         f"{spark['peak_rss_gib']:.2f} | a {spark['rows']:,}-row subset |")  # fmt: skip
    linked = [results["steps"][key] for key in ("spark", "spark-matcher") if key in results["steps"]]
    if linked:
        lines.append("")
        for step in linked:
            cuts = [c for c in ("0.5", "0.8", "0.9", "0.95") if f"precision_at_{c}" in step]
            pr = "; ".join(f">= {c}: {100 * step[f'precision_at_{c}']:.1f} / {100 * step[f'recall_at_{c}']:.1f}"
                           for c in cuts)  # fmt: skip
            lines.append(f"- {step['method']}: precision / recall at match probability {pr}.")
    embed = results["steps"].get("embed")
    if embed:
        check = embed["fp16_check"]
        lines.append("")
        lines.append(f"fp16 check ({check['sample']:,} sampled queries, exact search): accuracy "
                     f"{100 * check['accuracy_fp32']:.2f} with fp32 vectors, {100 * check['accuracy_fp16']:.2f} with "
                     f"fp16, top-1 agreement {100 * check['top1_agreement']:.2f}%; IVF agrees with exact fp32 search "
                     f"on {100 * embed['ivf_agreement_with_exact_fp32']:.2f}% of them.")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1_000_000, help="rows of each table (default 1,000,000)")
    parser.add_argument(
        "--subset",
        type=int,
        default=0,
        help="measure on the first n right rows and their left "
        "rows only (a dev run that leaves encoded chunks for the full run); 0: all",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch/faiss/rapidfuzz threads (default 1)")
    parser.add_argument("--model", default="baseline:minilm-l6", help="encoder spec for the embed method")
    parser.add_argument("--benchmarks", default=str(HERE.parent.parent / "shared" / "benchmarks"))
    parser.add_argument("--workdir", default=None, help="chunks and step results (default: the phrasezoo cache)")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated, from {', '.join(STEPS)}")
    parser.add_argument("--step", choices=STEPS, help=argparse.SUPPRESS)
    parser.add_argument("--nprobe", type=int, default=32, help="IVF cells searched per query")
    parser.add_argument("--k", type=int, default=5, help="neighbours per row for the Spark subset's blocking")
    parser.add_argument("--check-sample", type=int, default=5000, help="queries for the fp16 and IVF checks")
    parser.add_argument("--query-sample", type=int, default=5000, help="queries for the TF-IDF search")
    parser.add_argument("--rapidfuzz-sample", type=int, default=500, help="queries for rapidfuzz")
    parser.add_argument("--matcher-sample", type=int, default=1000, help="queries for the default matcher")
    parser.add_argument("--spark-rows", type=int, default=100_000, help="rows of the Spark subset")
    parser.add_argument("--matcher", default="hybrid", help="matcher spec of the matcher and spark-matcher steps "
                        "(default: the default matcher)")  # fmt: skip
    parser.add_argument("--rerun", action="store_true", help="rerun steps whose results exist")
    parser.add_argument("--encode-processes", type=int, default=1,
                        help="encoding processes, each taking every N-th chunk pair (default 1)")  # fmt: skip
    parser.add_argument("--shard", help=argparse.SUPPRESS)  # i/N: the chunks of one encoding process
    parser.add_argument("--output", help="results JSON (e.g. results/matching/scale-1m.json)")
    parser.add_argument("--docs", help="markdown page whose --block gets the table")
    parser.add_argument("--block", default="match-scale", help="generated block of --docs (default match-scale)")
    args = parser.parse_args(argv)
    if args.workdir is None:
        from phrasezoo.resources import cache_dir

        args.workdir = str(cache_dir() / "match-scale")
    folder = workdir(Path(args.workdir), args.size, args.seed)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    if args.step:
        run_step(args, folder)
        return
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        parser.error(f"unknown steps {unknown}; choose from {', '.join(STEPS)}")
    for step in [s for s in STEPS if s in steps]:
        if (folder / step_file(step, args)).exists() and not args.rerun and step != "encode":
            print(f"[{step}] done before; --rerun to repeat", flush=True)
            continue
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        if step == "encode" and args.encode_processes > 1:
            encode_in_shards(args, env)
        subprocess.run(child_command(args, step), check=True, env=env)
    results = {
        "benchmark": "match_scale",
        "size": subset_size(args) or args.size,
        "table_rows": args.size,
        "seed": args.seed,
        "threads": args.threads,
        "encode_processes": args.encode_processes,
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, shared with other developers",
        "command": "python benchmarks/match_scale.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "steps": {s: json.loads((folder / step_file(s, args)).read_text()) for s in STEPS
                  if (folder / step_file(s, args)).exists()},
    }  # fmt: skip
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        save_json(Path(args.output), results)
    if args.docs:
        from phrasezoo.core.files import write_readme_table

        write_readme_table(args.docs, table_rows(results), block=args.block)
    print(table_rows(results))


if __name__ == "__main__":
    main()

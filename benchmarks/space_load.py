"""Bounded load test of every Space on loopback: requests/s, latency percentiles, failures and server memory over time.

For each Space it starts ``spaces/<space>/app.py`` as its own process on 127.0.0.1 (the script users run, with its
environment variables pointing at local model folders), sends a fixed number of requests from ``--clients``
concurrent gradio_client clients (stopping early at ``--max-seconds``; requests not sent are counted), samples the
server's resident memory (RSS, with its children) every 0.25 s, then stops the server. Every answer is checked (row
counts, finite scores): a wrong answer counts as a failure. Requests rotate over the Space's endpoints and are made
of real text: AutoFJ titles for the matching Spaces, the 300 news documents of gensim's ``lee_background.cor`` for
the others (fixed seed). Nothing leaves the machine.

torch (and spaCy, scikit-learn) on CPU allocate arrays of new shapes for every request, and the heap fragments unless
freed pages go back to the OS. The Spaces therefore trim glibc's heap (``malloc_trim``) after every request
(``releasing_memory`` in each app). ``--allocators all`` adds a run with ``MALLOC_MMAP_THRESHOLD_`` /
``MALLOC_TRIM_THRESHOLD_`` lowered (the alternative for apps that do not trim; a Space variable away).

Models: a Space's trained export under ``outputs/`` when there is one, else the same architecture built from the
recipe on the embedded pretrained weights (all-MiniLM-L6-v2; GloVe 6B 50-d for the codebook model), whose untrained
heads cost the same compute as trained ones; the results file says which. ``--label`` names the code state of a run
(e.g. before/after a fix); results are merged into ``--output`` by (space, label, allocator).

    .venv/bin/python benchmarks/space_load.py --output results/spaces/space-load.json --readme README.md
    .venv/bin/python benchmarks/space_load.py --from-results results/spaces/space-load.json --readme README.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import os
import platform
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BLOCK = "space-load"


# ---------------------------------------------------------------------------------------------------- requests
@dataclass
class Request:
    """One call of a Space endpoint and the check of its answer (raises on a wrong one)."""

    api_name: str
    args: tuple
    check: Callable[[Any], None]


def _rows(output) -> list:
    """The rows of a Dataframe output as gradio_client returns it."""
    return output["data"] if isinstance(output, dict) else list(output)


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


@functools.cache
def autofj_titles(limit: int = 200) -> list[str]:
    from phrasezoo.evaluation.tasks.autofj import read_autofj

    return [t for table in read_autofj() for t in table.left[:limit]]


@functools.cache
def news_documents() -> list[str]:
    from phrasezoo.resources import iter_corpus

    return list(iter_corpus("embedded-news"))


def sentences_of(documents: list[str]) -> list[str]:
    return [s for d in documents for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", d) if 20 <= len(s) <= 400]


def pearl_requests(n: int, rng: random.Random) -> list[Request]:
    titles = autofj_titles()

    def rank(query: str, candidates: str) -> Request:
        count = len(candidates.splitlines())
        return Request(
            "/rank", (query, candidates), lambda out: _expect(len(_rows(out)) == count, "rows != candidates")
        )

    return [rank(rng.choice(titles), "\n".join(rng.sample(titles, 10))) for _ in range(n)]


def compare_requests(n: int, rng: random.Random) -> list[Request]:
    titles = autofj_titles()

    def compare(phrases: list[str]) -> Request:
        count = len(dict.fromkeys(phrases))

        def check(out) -> None:
            _, nearest, _ = out
            _expect(len(_rows(nearest)) == count, f"{len(_rows(nearest))} nearest rows for {count} phrases")

        return Request("/compare", ("\n".join(phrases),), check)

    return [compare(rng.sample(titles, rng.randint(2, 12))) for _ in range(n)]


def pntm_requests(n: int, rng: random.Random) -> list[Request]:
    sentences = sentences_of(news_documents())
    words = sorted({w.lower() for s in sentences for w in re.findall(r"[A-Za-z]{4,}", s)})

    def explain(text: str) -> Request:
        return Request("/explain", (text, 8), lambda out: _expect(len(_rows(out)) == 3, "not 3 topics"))

    def neighbours(phrase: str) -> Request:
        return Request("/neighbours", (phrase, 10), lambda out: _expect(len(_rows(out)) == 10, "not 10 terms"))

    def topics() -> Request:
        return Request("/topics", ("words and phrases", 8), lambda out: _expect(len(_rows(out)) > 1, "no topics"))

    makers = [lambda: explain(rng.choice(sentences)), lambda: neighbours(" ".join(rng.sample(words, 2))), topics]
    return [makers[i % 3]() for i in range(n)]


def slice_requests(n: int, rng: random.Random) -> list[Request]:
    documents = news_documents()

    def search(passages: list[str]) -> Request:
        words = rng.choice(passages).split()
        start = rng.randrange(max(1, len(words) - 6))
        query = " ".join(words[start : start + rng.randint(2, 6)])

        def check(out) -> None:
            _, _, _, scores, _, status = out
            _expect(len(_rows(scores)) == 2 * len(passages), "not one score per passage and model")
            _expect("spans of" in status, "no status")

        return Request("/search", (query, "\n\n".join(passages), 1, 12, 3, 0.0, True), check)

    return [search([d[:1500] for d in rng.sample(documents, rng.randint(1, 4))]) for _ in range(n)]


def uctopic_requests(n: int, rng: random.Random) -> list[Request]:
    documents = news_documents()

    def mine(text: str, k: int) -> Request:
        def check(out) -> None:
            topics, mentions, _, _ = out
            _expect(k == 0 or len(_rows(topics)) == k, f"{len(_rows(topics))} topics for k={k}")
            _expect(sum(row[1] for row in _rows(topics)) == len(_rows(mentions)), "mentions lost")

        return Request("/mine", (text, k, 1), check)

    return [mine("\n\n".join(d[:1200] for d in rng.sample(documents, 2)), rng.choice([0, 3, 5])) for _ in range(n)]


def codebook_requests(n: int, rng: random.Random) -> list[Request]:
    documents = news_documents()
    sentences = sentences_of(documents)

    def facets(text: str) -> Request:
        return Request("/facets", (text, 5), lambda out: _expect(len(_rows(out[0])) >= 1, "no facets"))

    def compare(a: str, b: str) -> Request:
        return Request("/compare", (a, b), lambda out: _expect(np.isfinite(out[0]) and np.isfinite(out[1]), "nan"))

    def summarize(document: str) -> Request:
        return Request("/summarize", (document, 3), lambda out: _expect(len(_rows(out[1])) == 3, "not 3 sentences"))

    long_documents = [d for d in documents if len(sentences_of([d])) > 4]
    makers = [
        lambda: facets(rng.choice(sentences)),
        lambda: compare(rng.choice(sentences), rng.choice(sentences)),
        lambda: summarize(rng.choice(long_documents)[:5000]),
    ]
    return [makers[i % 3]() for i in range(n)]


# ------------------------------------------------------------------------------------------------------ models
def recipe_model(recipe: str, workdir: Path) -> tuple[str, str]:
    """``outputs/<recipe>`` when exported, else the recipe's architecture on its pretrained backbone, saved."""
    exported = ROOT / "outputs" / recipe
    if (exported / "config.json").exists():
        return str(exported), f"outputs/{recipe} (trained, exported)"
    from phrasezoo.zoo.registry import create_model

    folder = workdir / recipe
    if not (folder / "config.json").exists():
        model = create_model(recipe)
        model.save_pretrained(folder)
        model.tokenizer.save_pretrained(folder)
    return str(folder), f"{recipe} untrained on the embedded all-MiniLM-L6-v2 weights"


def codebook_model(recipe: str, workdir: Path, n_words: int = 50_000) -> tuple[str, str]:
    """``outputs/<recipe>`` when exported, else the recipe's architecture over the ``n_words`` most frequent GloVe
    6B 50-d words (a trained model's vocabulary comes from its corpus; building that needs a spaCy parse)."""
    exported = ROOT / "outputs" / recipe
    if (exported / "config.json").exists():
        return str(exported), f"outputs/{recipe} (trained, exported)"
    from phrasezoo.core.recipes import load_recipe
    from phrasezoo.models.codebook.modeling_codebook import CodebookSeq2Embeddings
    from phrasezoo.resources import load_word_vectors

    folder = workdir / recipe
    if not (folder / "config.json").exists():
        glove = load_word_vectors("glove-6b-50d", max_words=n_words)
        model = CodebookSeq2Embeddings.from_word_vectors(
            glove.words[:n_words], glove.vectors[:n_words], seed=0, **load_recipe(recipe).model
        )
        model.save_pretrained(folder)
        model.tokenizer.save_pretrained(folder)
    return str(folder), f"{recipe} untrained over {n_words:,} GloVe 6B 50-d words"


def pntm_folder(encoder_folder: str, workdir: Path, n_topics: int = 20) -> str:
    """A PNTM fitted with the encoder on the news documents; vocabulary: their frequent words and word pairs."""
    folder = workdir / "pntm"
    if (folder / "pntm.json").exists():
        return str(folder)
    from transformers import AutoModel

    from phrasezoo.methods.phrase_bert.pntm import PNTM

    documents = news_documents()
    tokens = [re.findall(r"[a-z]{3,}", d.lower()) for d in documents]
    words = [w for w, c in Counter(w for t in tokens for w in t).most_common(3000) if c >= 5]
    pairs = [" ".join(p) for p, c in Counter(p for t in tokens for p in zip(t, t[1:])).most_common(1000) if c >= 5]
    encoder = AutoModel.from_pretrained(encoder_folder, trust_remote_code=True).eval()
    PNTM(encoder=encoder, n_topics=n_topics, epochs=10, progress=False).fit(documents, words + pairs).save(folder)
    return str(folder)


def pearl_setup(workdir: Path, model: str | None) -> tuple[dict[str, str], str]:
    folder, note = (model, model) if model else recipe_model("pearl-mini", workdir)
    return {"PHRASEZOO_MODEL": folder}, note


def compare_setup(workdir: Path, model: str | None) -> tuple[dict[str, str], str]:
    exported = [p.parent for p in sorted((ROOT / "outputs").glob("*/config.json"))]
    if exported:
        return {"PHRASEZOO_MODELS_DIR": str(ROOT / "outputs")}, f"{len(exported)} exported models under outputs/"
    recipes = ["pearl-mini", "phrase-bert-mini", "slice-mini", "uctopic-mini"]
    (workdir / "zoo").mkdir(exist_ok=True)
    for recipe in recipes:
        folder, _ = recipe_model(recipe, workdir)
        link = workdir / "zoo" / recipe
        if not link.exists():
            link.symlink_to(folder)
    return {"PHRASEZOO_MODELS_DIR": str(workdir / "zoo")}, (
        f"{', '.join(recipes)} untrained on the embedded all-MiniLM-L6-v2 weights, plus raw MiniLM"
    )


def pntm_setup(workdir: Path, model: str | None) -> tuple[dict[str, str], str]:
    folder, note = (model, model) if model else recipe_model("phrase-bert-mini", workdir)
    return {"PHRASEZOO_MODEL": folder, "PNTM_DIR": pntm_folder(folder, workdir)}, (
        f"{note}; PNTM (K = 20, 10 epochs) fitted on the 300 news documents"
    )


def slice_setup(workdir: Path, model: str | None) -> tuple[dict[str, str], str]:
    folder, note = (model, model) if model else recipe_model("slice-mini", workdir)
    return {"PHRASEZOO_MODEL": folder}, f"{note}; compared with raw MiniLM in every request"


def uctopic_setup(workdir: Path, model: str | None) -> tuple[dict[str, str], str]:
    folder, note = (model, model) if model else recipe_model("uctopic-mini", workdir)
    return {"PHRASEZOO_MODEL": folder}, note


def codebook_setup(workdir: Path, model: str | None) -> tuple[dict[str, str], str]:
    folder, note = (model, model) if model else codebook_model("codebook-sentence-mini", workdir)
    folder_k1, _ = codebook_model("codebook-sentence-mini-k1", workdir)
    return {"PHRASEZOO_MODEL": folder, "PHRASEZOO_MODEL_K1": folder_k1}, f"{note} (+ its K = 1 variant)"


@dataclass
class SpaceLoad:
    """How one Space is load-tested: what each request does, the models it serves, the requests it gets."""

    endpoints: str
    setup: Callable[[Path, str | None], tuple[dict[str, str], str]]
    requests: Callable[[int, random.Random], list[Request]]


SPACES = {
    "codebook-facets": SpaceLoad(
        "/facets, /compare, /summarize in turn (news sentences; 3-sentence summaries of news documents)",
        codebook_setup,
        codebook_requests,
    ),
    "compare-models": SpaceLoad("/compare: 2-12 AutoFJ titles through every model", compare_setup, compare_requests),
    "pearl-demo": SpaceLoad("/rank: 1 AutoFJ title + 10 candidates", pearl_setup, pearl_requests),
    "pntm-explorer": SpaceLoad("/explain (news sentence), /neighbours, /topics in turn", pntm_setup, pntm_requests),
    "slice-span-search": SpaceLoad(
        "/search: a 2-6 word query in 1-4 news passages, 1-12 word spans, SLICE and base model",
        slice_setup,
        slice_requests,
    ),
    "uctopic-topics": SpaceLoad(
        "/mine: two news documents (~2,400 characters), K = auto, 3 or 5", uctopic_setup, uctopic_requests
    ),
}


# ---------------------------------------------------------------------------------------------------- the run
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(url: str, server: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the Space exited with code {server.returncode} before it answered")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(1)
    raise TimeoutError(f"the Space did not answer at {url} within {timeout:.0f} s")


class MemorySampler(threading.Thread):
    """RSS of a process and its children every ``interval`` seconds (MB), with timestamps."""

    def __init__(self, pid: int, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        import psutil

        self.process = psutil.Process(pid)
        self.interval = interval
        self.samples: list[tuple[float, float]] = []
        self.stop = threading.Event()
        self.start_time = time.monotonic()

    def rss_mb(self) -> float:
        procs = [self.process, *self.process.children(recursive=True)]
        total = 0
        for proc in procs:
            try:
                total += proc.memory_info().rss
            except Exception:  # noqa: BLE001 - a child that just exited
                continue
        return total / 2**20

    def run(self) -> None:
        while not self.stop.is_set():
            self.samples.append((time.monotonic() - self.start_time, self.rss_mb()))
            self.stop.wait(self.interval)


def run_load(url: str, requests: list[Request], clients: int, max_seconds: float) -> dict:
    """Send every request once from ``clients`` threads; stop early after ``max_seconds``."""
    from gradio_client import Client

    queue = list(reversed(requests))
    lock = threading.Lock()
    latencies: list[float] = []
    failures: list[str] = []
    deadline = time.monotonic() + max_seconds

    def worker() -> None:
        client = Client(url, verbose=False)
        while time.monotonic() < deadline:
            with lock:
                if not queue:
                    return
                request = queue.pop()
            start = time.perf_counter()
            try:
                request.check(client.predict(*request.args, api_name=request.api_name))
                with lock:
                    latencies.append(time.perf_counter() - start)
            except Exception as err:  # noqa: BLE001 - every failure is counted and reported
                with lock:
                    failures.append(f"{request.api_name}: {type(err).__name__}: {str(err)[:200]}")

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    return {"latencies": latencies, "failures": failures, "seconds": seconds, "not_sent": len(queue)}


def memory_summary(samples: list[tuple[float, float]], load_start: float, load_end: float) -> dict:
    during = [(t, m) for t, m in samples if load_start <= t <= load_end]
    times, mbs = np.array([t for t, _ in during]), np.array([m for _, m in during])
    half = len(during) // 2
    # growth rate in the second half of the load (steady state: the first requests fill allocator pools and caches)
    slope = float(np.polyfit(times[half:], mbs[half:], 1)[0] * 60) if len(during) - half > 2 else 0.0
    return {
        "rss_mb_at_load_start": round(float(mbs[0]), 1),
        "rss_mb_at_load_end": round(float(mbs[-1]), 1),
        "rss_mb_max": round(float(mbs.max()), 1),
        "rss_mb_first_half_mean": round(float(mbs[:half].mean()), 1) if half else None,
        "rss_mb_second_half_mean": round(float(mbs[half:].mean()), 1) if half else None,
        "rss_slope_mb_per_minute_second_half": round(slope, 2),
        "samples": len(during),
    }


ALLOCATORS = {
    "glibc default": {},
    # large blocks straight from mmap and returned on free: varying tensor shapes no longer fragment the heap
    "glibc, MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072": {
        "MALLOC_MMAP_THRESHOLD_": "131072",
        "MALLOC_TRIM_THRESHOLD_": "131072",
    },
}


def run_space(args, space: str, env_vars: dict[str, str], workdir: Path, extra_env: dict[str, str]) -> dict:
    """Start the Space, warm it up, run the load while sampling its memory, stop it; the measurements."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = dict(os.environ, GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port), GRADIO_ANALYTICS_ENABLED="False",
               HF_HUB_OFFLINE="1", PHRASEZOO_NO_PROGRESS="1", **env_vars, **extra_env)  # fmt: skip
    log = open(workdir / f"server-{space}-{port}.log", "w")  # noqa: SIM115 - closed after the server stops
    server = subprocess.Popen([sys.executable, str(ROOT / "spaces" / space / "app.py")], env=env, stdout=log,
                              stderr=subprocess.STDOUT, cwd=workdir)  # fmt: skip
    started = time.perf_counter()
    try:
        wait_until_up(url, server)
        sampler = MemorySampler(server.pid)
        sampler.start()
        requests = SPACES[space].requests(args.requests + args.warmup, random.Random(args.seed))
        warm = run_load(url, requests[: args.warmup], clients=1, max_seconds=300)
        if warm["failures"]:
            raise RuntimeError(f"warm-up requests failed: {warm['failures'][:3]}")
        load_start = time.monotonic() - sampler.start_time
        result = run_load(url, requests[args.warmup :], clients=args.clients, max_seconds=args.max_seconds)
        load_end = time.monotonic() - sampler.start_time
        time.sleep(0.5)
        sampler.stop.set()
        sampler.join()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
    latencies = np.array(result["latencies"]) if result["latencies"] else np.zeros(1)
    return {
        "requests_completed": len(result["latencies"]),
        "requests_failed": len(result["failures"]),
        "requests_not_sent": result["not_sent"],
        "failures": result["failures"][:10],
        "seconds": round(result["seconds"], 2),
        "server_seconds": round(time.perf_counter() - started, 1),
        "requests_per_second": round(len(result["latencies"]) / result["seconds"], 2),
        "latency_s": {
            q: round(float(np.percentile(latencies, p)), 3)
            for q, p in (("p50", 50), ("p95", 95), ("p99", 99), ("max", 100))
        },  # fmt: skip
        "memory": memory_summary(sampler.samples, load_start, load_end),
        "memory_timeline_mb": [
            [round(t, 1), round(m, 1)] for t, m in sampler.samples[:: max(1, len(sampler.samples) // 200)]
        ],  # fmt: skip
    }


# ------------------------------------------------------------------------------------------------- the table
def trend_interval(run: dict) -> float:
    """Two standard errors (MB/min) of the second-half RSS slope, from the run's stored memory timeline: how much of
    the trend is noise (RSS swings by tens of MB as requests of different sizes come and go)."""
    timeline = np.asarray(run["memory_timeline_mb"], dtype=float)
    end = timeline[-1, 0] - 0.5  # the sampler stops 0.5 s after the load
    during = timeline[(timeline[:, 0] >= end - 0.25 * run["memory"]["samples"]) & (timeline[:, 0] <= end)]
    half = during[len(during) // 2 :]
    if len(half) < 4:
        return float("nan")
    _, cov = np.polyfit(half[:, 0], half[:, 1], 1, cov=True)
    return float(2 * np.sqrt(cov[0, 0]) * 60)


def load_table(report: dict) -> str:
    """The README block, generated from a results file: one row per (Space, code state, allocator)."""
    runs = report["runs"]
    first = runs[0] if runs else {}
    machine = first.get("machine", "?").split(", load average")[0]
    lines = [
        f"Each run: {first.get('clients', '?')} concurrent gradio_client clients, after "
        f"{first.get('warmup_requests', '?')} warm-up requests, send the planned requests until all are answered or "
        f"{first.get('max_seconds', 0):.0f} s have passed; every answer is checked (a wrong one counts as failed). "
        f"Machine: {machine}, with the load average at the start of each run in the last column. Generated from "
        "`results/spaces/space-load.json` by `.venv/bin/python benchmarks/space_load.py`.",
        "",
        "| Space | code | server allocator | answered / planned | failed | requests/s | p50 / p95 latency | "
        "RSS at start / end of load | RSS trend, 2nd half (± 2 s.e.) | run time | load avg |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        m, lat = run["memory"], run["latency_s"]
        lines.append(
            f"| `{run['space']}` | {run['label']} | {run['allocator']} | {run['requests_completed']} / "
            f"{run['requests_planned']} | {run['requests_failed']} | {run['requests_per_second']:.1f} | "
            f"{lat['p50']:.2f} / {lat['p95']:.2f} s | "
            f"{m['rss_mb_at_load_start']:.0f} / {m['rss_mb_at_load_end']:.0f} MB | "
            f"{m['rss_slope_mb_per_minute_second_half']:+.1f} ± {trend_interval(run):.1f} MB/min | "
            f"{run['wall_seconds'] / 60:.1f} min | {run['machine'].split('load average ')[-1]} |"
        )
    lines += ["", "Requests and models per Space:", ""]
    seen = set()
    for run in runs:
        if (run["space"], run["model"]) not in seen:
            seen.add((run["space"], run["model"]))
            lines.append(f"- `{run['space']}`: {run['endpoint']}; model: {run['model']}.")
    lines += ["", "Run time: model build, server start, warm-up and load."]
    return "\n".join(lines)


def merge_runs(path: Path, new_runs: list[dict]) -> dict:
    """The results document at ``path`` with ``new_runs`` replacing runs of the same (space, label, allocator)."""
    key = lambda run: (run["space"], run["label"], run["allocator"])  # noqa: E731
    old = json.loads(path.read_text()).get("runs", []) if path.exists() else []
    replaced = {key(run) for run in new_runs}
    runs = [run for run in old if "label" in run and key(run) not in replaced] + new_runs
    order = list(SPACES)
    runs.sort(key=lambda run: (order.index(run["space"]) if run["space"] in order else len(order), run["created"]))
    return {
        "benchmark": "bounded loopback load test of the Spaces: fixed request count and duration, concurrent clients",
        "runs": runs,
    }


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "spaces"], cwd=ROOT, capture_output=True, text=True)
        return out.stdout.strip() + ("+dirty spaces/" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spaces", default="all", help=f"'all' or comma-separated Space folders: {', '.join(SPACES)}")
    parser.add_argument("--model", help="model folder for PHRASEZOO_MODEL (one Space only; default: see above)")
    parser.add_argument("--requests", type=int, default=600, help="requests to send per Space (default 600)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients (default 4)")
    parser.add_argument("--max-seconds", type=float, default=300, help="stop sending after this long (default 300)")
    parser.add_argument("--warmup", type=int, default=30, help="requests before the measurement (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the request mix (default 0)")
    parser.add_argument("--allocators", default="default", help="'default' (glibc as is) or 'all' (also with the "
                        "MALLOC_* thresholds lowered, one after the other)")  # fmt: skip
    parser.add_argument("--label", default="as committed", help="the code state, a column of the table")
    parser.add_argument("--workdir", help="folder for the built models and server logs (default: a new temp folder)")
    parser.add_argument("--output", help="results JSON to merge the runs into (e.g. results/spaces/space-load.json)")
    parser.add_argument("--readme", help="rewrite the <!-- space-load:start --> block of this README")
    parser.add_argument("--from-results", help="only regenerate the README block from this results file")
    args = parser.parse_args()
    from phrasezoo.core.files import write_readme_table

    if args.from_results:
        table = load_table(json.loads(Path(args.from_results).read_text()))
        print(table)
        if args.readme:
            write_readme_table(Path(args.readme), table, block=BLOCK)
        return
    spaces = list(SPACES) if args.spaces == "all" else args.spaces.split(",")
    unknown = [s for s in spaces if s not in SPACES]
    if unknown or (args.model and len(spaces) != 1):
        parser.error(f"unknown Space(s) {unknown}" if unknown else "--model needs exactly one Space (--spaces)")
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="space-load-"))
    workdir.mkdir(parents=True, exist_ok=True)
    allocators = ALLOCATORS if args.allocators == "all" else {"glibc default": {}}
    runs = []
    for space in spaces:
        for name, extra_env in allocators.items():
            started = time.perf_counter()
            env_vars, model_note = SPACES[space].setup(workdir, args.model)
            run = {
                "space": space,
                "label": args.label,
                "allocator": name,
                "commit": git_commit(),
                "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "endpoint": SPACES[space].endpoints,
                "model": model_note,
                "machine": f"{platform.machine()} {os.cpu_count()} cores (shared), load average "
                f"{os.getloadavg()[0]:.2f}",
                "clients": args.clients,
                "requests_planned": args.requests,
                "warmup_requests": args.warmup,
                "max_seconds": args.max_seconds,
                **run_space(args, space, env_vars, workdir, extra_env),
            }
            run["wall_seconds"] = round(time.perf_counter() - started, 1)
            runs.append(run)
            print(f"{space} ({name}): {run['requests_completed']} ok, {run['requests_failed']} failed, "
                  f"{run['requests_not_sent']} not sent, {run['requests_per_second']} req/s, memory {run['memory']}, "
                  f"{run['wall_seconds'] / 60:.1f} min", flush=True)  # fmt: skip
            if args.output:
                report = merge_runs(Path(args.output), runs)
                Path(args.output).parent.mkdir(parents=True, exist_ok=True)
                Path(args.output).write_text(json.dumps(report, indent=1))
    report = merge_runs(Path(args.output), runs) if args.output else {"runs": runs}
    print(load_table(report))
    if args.readme:
        write_readme_table(Path(args.readme), load_table(report), block=BLOCK)
    if any(run["requests_failed"] for run in runs):
        sys.exit(1)


if __name__ == "__main__":
    main()

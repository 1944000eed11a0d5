"""Bounded load test of a Space on loopback: requests/s, latency percentiles, failures and server memory over time.

Starts ``spaces/<space>/app.py`` as its own process on 127.0.0.1 (the script users run, with ``PHRASEZOO_MODEL``),
sends a fixed number of requests from ``--clients`` concurrent gradio_client clients (stopping early at
``--max-seconds``), samples the server's resident memory (RSS, with its children) every 0.25 s, then stops the
server. This runs twice, with glibc's default allocator settings and with ``MALLOC_MMAP_THRESHOLD_`` /
``MALLOC_TRIM_THRESHOLD_`` lowered: torch on CPU allocates tensors of a new shape for every request, and the heap
fragments unless freed pages go back to the OS. The pearl-demo app trims the heap (glibc ``malloc_trim``) after
every request; the environment variables are the alternative for apps that do not (a Space variable away). Nothing leaves the machine. Requests are entity-matching calls (``/rank``) of the pearl-demo Space: one
AutoFJ title against 10 other titles (fixed seed), so every request embeds 11 real phrases.

The model is ``--model`` (default ``outputs/pearl-mini`` when exported, else a PEARL model built on the embedded
all-MiniLM-L6-v2 weights, whose untrained character encoder and type head cost the same compute as trained ones;
the results file says which).

    .venv/bin/python benchmarks/space_load.py --output results/space-load.json --readme README.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def default_model(workdir: Path) -> tuple[str, str]:
    exported = ROOT / "outputs" / "pearl-mini"
    if (exported / "config.json").exists():
        return str(exported), "outputs/pearl-mini (trained, exported)"
    from phrasezoo.models.pearl.modeling_pearl import PearlModel
    from phrasezoo.resources import resolve_backbone

    folder = workdir / "pearl-minilm"
    model = PearlModel.from_backbone(resolve_backbone("minilm-l6"), char_weight=0.25)
    model.save_pretrained(folder)
    model.tokenizer.save_pretrained(folder)
    return str(folder), "PEARL on the embedded all-MiniLM-L6-v2 weights (character encoder and type head untrained)"


def request_payloads(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` (query, candidates) pairs from AutoFJ left titles: the query plus 10 candidates, one per line."""
    from phrasezoo.evaluation.tasks.autofj import read_autofj

    titles = [t for table in read_autofj() for t in table.left[:200]]
    rng = random.Random(seed)
    return [(rng.choice(titles), "\n".join(rng.sample(titles, 10))) for _ in range(n)]


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


def run_load(url: str, payloads: list[tuple[str, str]], clients: int, max_seconds: float) -> dict:
    """Send every payload once from ``clients`` threads; stop early after ``max_seconds``."""
    from gradio_client import Client

    queue = list(enumerate(payloads))
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
                _, (query, candidates) = queue.pop()
            start = time.perf_counter()
            try:
                result = client.predict(query, candidates, api_name="/rank")
                if len(result["data"]) != len(candidates.splitlines()):
                    raise ValueError(f"{len(result['data'])} rows for {len(candidates.splitlines())} candidates")
                with lock:
                    latencies.append(time.perf_counter() - start)
            except Exception as err:  # noqa: BLE001 - every failure is counted and reported
                with lock:
                    failures.append(f"{type(err).__name__}: {str(err)[:200]}")

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


def load_line(report: dict) -> str:
    """The README lines, generated from a results file (one per allocator setting)."""
    lines = [
        f"`{report['space']}` {report['endpoint']}, {report['requests_planned']} requests from {report['clients']} "
        f"concurrent gradio_client clients after {report.get('warmup_requests', 0)} warm-up requests; model: "
        f"{report['model']}; {report['machine']}; measured {report['created'][:10]} with "
        "`.venv/bin/python benchmarks/space_load.py`.",
        "",
        "| server allocator | requests/s | p50 latency | p95 latency | failed | RSS at start / end of load | RSS trend, 2nd half |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for run in report["runs"]:
        m, lat = run["memory"], run["latency_s"]
        lines.append(
            f"| {run['allocator']} | {run['requests_per_second']:.1f} | {lat['p50']:.2f} s | {lat['p95']:.2f} s | "
            f"{run['requests_failed']} of {run['requests_completed'] + run['requests_failed']} | "
            f"{m['rss_mb_at_load_start']:.0f} / {m['rss_mb_at_load_end']:.0f} MB | "
            f"{m['rss_slope_mb_per_minute_second_half']:+.1f} MB/min |"
        )
    return "\n".join(lines)


def write_block(readme: Path, text: str, block: str) -> None:
    start, end = f"<!-- {block}:start -->", f"<!-- {block}:end -->"
    content = readme.read_text()
    if start not in content or end not in content:
        raise ValueError(f"{readme} has no {start} ... {end} block to fill.")
    head, rest = content.split(start, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{start}\n{text}\n{end}{tail}")


ALLOCATORS = {
    "glibc default (the app trims the heap after each request)": {},
    # large blocks straight from mmap and returned on free: varying tensor shapes no longer fragment the heap
    "glibc, MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072": {
        "MALLOC_MMAP_THRESHOLD_": "131072",
        "MALLOC_TRIM_THRESHOLD_": "131072",
    },
}


def run_space(args, model: str, workdir: Path, extra_env: dict[str, str]) -> dict:
    """Start the Space, warm it up, run the load while sampling its memory, stop it; the measurements."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = dict(os.environ, PHRASEZOO_MODEL=model, GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port),
               GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", PHRASEZOO_NO_PROGRESS="1", **extra_env)  # fmt: skip
    log = open(workdir / f"server-{port}.log", "w")  # noqa: SIM115 - closed after the server stops
    server = subprocess.Popen([sys.executable, str(ROOT / "spaces" / args.space / "app.py")], env=env, stdout=log,
                              stderr=subprocess.STDOUT, cwd=workdir)  # fmt: skip
    try:
        wait_until_up(url, server)
        sampler = MemorySampler(server.pid)
        sampler.start()
        payloads = request_payloads(args.requests + args.warmup)
        warm = run_load(url, payloads[: args.warmup], clients=1, max_seconds=120)
        if warm["failures"]:
            raise RuntimeError(f"warm-up requests failed: {warm['failures'][:3]}")
        load_start = time.monotonic() - sampler.start_time
        result = run_load(url, payloads[args.warmup :], clients=args.clients, max_seconds=args.max_seconds)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--space", default="pearl-demo", help="Space folder under spaces/ (needs a /rank endpoint)")
    parser.add_argument("--model", help="model folder for PHRASEZOO_MODEL (default: see above)")
    parser.add_argument("--requests", type=int, default=600, help="requests to send (default 600)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients (default 4)")
    parser.add_argument("--max-seconds", type=float, default=300, help="stop sending after this long (default 300)")
    parser.add_argument("--warmup", type=int, default=30, help="requests before the measurement (default 30)")
    parser.add_argument("--allocators", default="all", help="'all' (both glibc settings, one after the other) "
                        "or 'default'")  # fmt: skip
    parser.add_argument("--output", help="results JSON (e.g. results/space-load.json)")
    parser.add_argument("--readme", help="rewrite the <!-- space-load:start --> block of this README")
    parser.add_argument("--from-results", help="only regenerate the README block from this results file")
    args = parser.parse_args()
    if args.from_results:
        write_block(Path(args.readme), load_line(json.loads(Path(args.from_results).read_text())), "space-load")
        return

    workdir = Path(tempfile.mkdtemp(prefix="space-load-"))
    model, model_note = (args.model, args.model) if args.model else default_model(workdir)
    allocators = ALLOCATORS if args.allocators == "all" else {next(iter(ALLOCATORS)): {}}
    runs = []
    for name, extra_env in allocators.items():
        run = {"allocator": name, **run_space(args, model, workdir, extra_env)}
        runs.append(run)
        print(f"{name}: {run['requests_completed']} ok, {run['requests_failed']} failed, "
              f"{run['requests_per_second']} req/s, memory {run['memory']}", flush=True)  # fmt: skip
    report = {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "benchmark": "bounded loopback load test of a Space: fixed request count and duration, concurrent clients",
        "space": args.space,
        "endpoint": "/rank (1 query + 10 candidates, AutoFJ titles)",
        "model": model_note,
        "machine": f"{platform.machine()} {os.cpu_count()} cores (shared), load average {os.getloadavg()[0]:.2f}",
        "clients": args.clients,
        "requests_planned": args.requests,
        "warmup_requests": args.warmup,
        "runs": runs,
    }
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(report, indent=1))
    print(load_line(report))
    if args.readme:
        write_block(Path(args.readme), load_line(report), "space-load")
    if any(run["requests_failed"] for run in runs):
        sys.exit(1)


if __name__ == "__main__":
    main()

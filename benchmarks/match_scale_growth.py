"""How the default matcher's time and memory grow with the table: measured runs at 125k to 1M rows, a power law
fitted to them, and what it says at 2M, 4M and 10M rows.

Each measured point is a ``matcher`` step of ``benchmarks/match_scale.py`` on a subset of the same 1M x 1M tables
(``--subset n``: the first n right rows and the left rows they were made from), or the full 1M run. Per point:

* ``fit``: seconds to fit the matcher on the n left rows (encoding, char TF-IDF) and build its faiss indexes;
* ``per query``: seconds per right row once every neighbourhood statistic is known (the sample's second search);
* ``per statistic``: seconds per left row's neighbourhood statistics (a search of the whole table, paid once);
* ``peak RSS``: of the step's process.

A full n x n join costs ``fit + n * (per query + per statistic)``. Each quantity is fitted as ``a * n ** b`` by least
squares on log-log axes (memory as ``a + b * n``) over the sizes where the matcher's vector index is HNSW (above
200,000 rows; below, an exact flat index grows another way), and evaluated at the larger sizes. Those rows are extrapolations,
marked as such: no table larger than the pool of unique real names the offline sources hold (counted here) can be
built from them, and the memory says what machine a larger run needs.

    .venv/bin/python benchmarks/match_scale_growth.py \\
        --runs results/matching/experiments/scale-growth/scale-matcher-subset-*.json results/matching/scale-1m.json \\
        --output results/matching/scale-growth.json --docs docs/matching-scale.md \\
        --plot docs/assets/matching-scale-growth.png
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

TARGETS = (2_000_000, 4_000_000, 10_000_000)
TIMES = ("fit_seconds", "query_seconds", "statistic_seconds")


def measured_point(results: dict) -> dict:
    """One size's numbers from a ``match_scale.py`` results file with a ``matcher`` step."""
    step = results["steps"]["matcher"]
    seconds = step["seconds"]
    if "indexes" not in seconds and not step.get("fit_includes_indexes"):
        raise ValueError(f"the matcher step of {results['command']!r} predates the index timing (2026-11-29): its "
                         "lazy index build is counted per reference row; rerun the step")  # fmt: skip
    return {
        "rows": results["size"],
        "accuracy": step["accuracy"],
        "accuracy_sample": step["accuracy_sample"],
        "fit_seconds": seconds["fit"] + seconds.get("indexes", 0.0),  # faiss indexes: in fit since 2026-12-05
        "query_seconds": seconds["search_sample_again"] / step["accuracy_sample"],
        "statistic_seconds": step["neighbourhood_rows"]["seconds_each"],
        "peak_rss_gib": step["peak_rss_gib"],
        "date": results["date"],
        "command": results["command"],
    }


def join_hours(fit: float, query: float, statistic: float, rows: int) -> float:
    """Hours of a full ``rows x rows`` join: the fit, every query, every left row's statistics once."""
    return (fit + rows * (query + statistic)) / 3600


def fit_growth(points: list[dict]) -> dict:
    """``{quantity: {"a", "b"}}``: power laws ``a * n ** b`` for the times, a line ``a + b * n`` for memory."""
    rows = np.array([p["rows"] for p in points], dtype=float)
    laws = {}
    for name in TIMES:
        b, log_a = np.polyfit(np.log(rows), np.log([p[name] for p in points]), 1)
        laws[name] = {"a": float(np.exp(log_a)), "b": float(b), "form": "a * n ** b"}
    b, a = np.polyfit(rows, [p["peak_rss_gib"] for p in points], 1)
    laws["peak_rss_gib"] = {"a": float(a), "b": float(b), "form": "a + b * n"}
    return laws


def predict(laws: dict, rows: int) -> dict:
    """A size's extrapolated numbers from the fitted laws."""
    out = {name: laws[name]["a"] * rows ** laws[name]["b"] for name in TIMES}
    out["peak_rss_gib"] = laws["peak_rss_gib"]["a"] + laws["peak_rss_gib"]["b"] * rows
    return {"rows": rows, **out}


def count_pool(benchmarks: Path) -> dict:
    """Unique real names the scale tables' offline sources hold, per source (the tables' deduplication)."""
    from match_scale_data import fresh_by_source

    per_source = {source: len(fresh) for source, fresh in fresh_by_source(benchmarks)}
    return {"total": sum(per_source.values()), "per_source": per_source}


def with_join_hours(points: list[dict]) -> list[dict]:
    points = sorted(points, key=lambda p: p["rows"])
    for p in points:
        p["join_hours"] = join_hours(p["fit_seconds"], p["query_seconds"], p["statistic_seconds"], p["rows"])
    return points


def growth(points: list[dict], pool: dict | None, machine_gib: float, fit_above: int = 0) -> dict:
    """Laws fitted on the measured sizes above ``fit_above`` rows, evaluated at :data:`TARGETS`."""
    points = with_join_hours(points)
    fitted = [p for p in points if p["rows"] > fit_above]
    if len(fitted) < 3:
        raise ValueError(f"{len(fitted)} measured sizes above {fit_above:,} rows: a law needs at least three")
    laws = fit_growth(fitted)
    targets = []
    for rows in TARGETS:
        p = predict(laws, rows)
        p["join_hours"] = join_hours(p["fit_seconds"], p["query_seconds"], p["statistic_seconds"], rows)
        p["fits_memory"] = p["peak_rss_gib"] < machine_gib
        targets.append(p)
    return {"benchmark": "match_scale_growth", "date": dt.date.today().isoformat(), "measured": points,
            "fitted_sizes": [p["rows"] for p in fitted], "laws": laws, "extrapolated": targets, "pool_of_unique_names": pool,
            "machine_memory_gib": machine_gib}  # fmt: skip


def _row(p: dict, how: str) -> str:
    accuracy = f"{100 * p['accuracy']:.1f}" if "accuracy" in p else "–"
    rate = p["rows"] / (p["join_hours"] * 3600)
    return (f"| {p['rows']:,} | {how} | {accuracy} | {p['fit_seconds'] / 60:.1f} | {1000 * p['query_seconds']:.1f} | "
            f"{1000 * p['statistic_seconds']:.1f} | {p['join_hours']:,.1f} | {rate:.1f} | {p['peak_rss_gib']:.1f} |")  # fmt: skip


def render(results: dict) -> str:
    """The docs block: measured rows, then extrapolated ones, then the fitted exponents."""
    lines = ["| rows (n x n) | how | top-1 | fit + indexes (min) | per query (ms) | per statistic (ms) | full join (hours) | "
             "rows per second | peak RSS (GiB) |", "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for p in results["measured"]:
        flat = "" if p["rows"] in results["fitted_sizes"] else "; exact flat index, not fitted"
        lines.append(_row(p, f"measured ({p['accuracy_sample']:,} sampled queries{flat})"))
    for p in results["extrapolated"]:
        lines.append(_row(p, "extrapolated" + ("" if p["fits_memory"] else ", **does not fit this machine's memory**")))
    laws = results["laws"]
    exponents = ", ".join(f"{name.replace('_seconds', '')} time ~ n^{laws[name]['b']:.2f}" for name in TIMES)
    sizes = ", ".join(f"{rows:,}" for rows in results["fitted_sizes"])
    lines += ["", f"Fitted on the measured sizes ({sizes}): {exponents}; peak RSS ~ "
              f"{laws['peak_rss_gib']['a']:.2f} + {laws['peak_rss_gib']['b'] * 1e6:.2f} GiB per million rows. "
              f"This machine has {results['machine_memory_gib']:.1f} GiB."]  # fmt: skip
    pool = results.get("pool_of_unique_names")
    if pool:
        lines.append(f"The offline sources hold {pool['total']:,} unique names after the tables' deduplication, so "
                     "no larger table of real names can be built from them.")  # fmt: skip
    return "\n".join(lines)


def plot(results: dict, path: Path) -> None:
    """Full-join hours and peak RSS against rows, log-log, measured points and extrapolated ones."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    measured, extra = results["measured"], results["extrapolated"]
    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, label in ((axes[0], "join_hours", "full join, hours (2 cores)"),
                           (axes[1], "peak_rss_gib", "peak RSS, GiB")):  # fmt: skip
        ax.loglog([p["rows"] for p in measured], [p[key] for p in measured], "o-", label="measured")
        ax.loglog([measured[-1]["rows"]] + [p["rows"] for p in extra],
                  [measured[-1][key]] + [p[key] for p in extra], "s--", label="extrapolated")  # fmt: skip
        plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain)
        ax.set_xlabel("rows of each table")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # decades span two orders: majors suffice
    axes[1].axhline(results["machine_memory_gib"], color="grey", linestyle=":", label="this machine's memory")
    for ax in axes:
        ax.legend()
    figure.suptitle("The default matcher, n x n fuzzy join")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", nargs="+", required=True, help="match_scale.py results files with a matcher step")
    parser.add_argument("--benchmarks", default=str(HERE.parent.parent / "shared" / "benchmarks"))
    parser.add_argument("--fit-above", type=int, default=None,
                        help="fit the laws on sizes above this many rows (default: where the matcher's faiss index is "
                        "HNSW, above phrasezoo.match.scoring.index.AUTO_EXACT_LIMIT; exact flat search below it grows another "
                        "way)")  # fmt: skip
    parser.add_argument("--no-pool", action="store_true", help="skip counting the offline sources' unique names")
    parser.add_argument("--output", help="results JSON (e.g. results/matching/scale-growth.json)")
    parser.add_argument("--docs", help="markdown page whose match-scale-growth block gets the table")
    parser.add_argument("--plot", help="PNG of time and memory against rows")
    args = parser.parse_args(argv)
    if args.fit_above is None:
        from phrasezoo.match.scoring.index import AUTO_EXACT_LIMIT

        args.fit_above = AUTO_EXACT_LIMIT
    points = [measured_point(json.loads(Path(f).read_text())) for f in args.runs]
    if len({p["rows"] for p in points if p["rows"] > args.fit_above}) < 3:
        parser.error(f"give runs of at least three sizes above --fit-above {args.fit_above:,}: a power law fitted to "
                     "fewer says nothing")  # fmt: skip
    import psutil

    pool = None if args.no_pool else count_pool(Path(args.benchmarks))
    results = growth(points, pool, psutil.virtual_memory().total / 2**30, args.fit_above)
    results["command"] = "python benchmarks/match_scale_growth.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.output:
        from match_scale import save_json

        save_json(Path(args.output), results)
    if args.docs:
        from phrasezoo.core.files import write_readme_table

        write_readme_table(args.docs, render(results), block="match-scale-growth")
    if args.plot:
        plot(results, Path(args.plot))
    print(render(results))


if __name__ == "__main__":
    main()

"""benchmarks/match_scale_growth.py: power laws fitted to measured sizes, the full-join arithmetic, the pool count,
and the run from results files to the docs block and the plot; benchmarks/speed_char_topk.py's former path."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import match_scale_data  # noqa: E402
import match_scale_growth as growth  # noqa: E402
import speed_char_topk  # noqa: E402


def run_file(path: Path, rows: int) -> Path:
    """A match_scale.py results file whose matcher step follows exact laws: fit ~ n, query ~ n^0.5,
    statistic ~ n^1.5, memory 1 GiB + 5 GiB per million rows."""
    sample = 1000
    step = {"accuracy": 0.9 - rows / 1e7, "accuracy_sample": sample, "peak_rss_gib": 1.0 + 5.0 * rows / 1e6,
            "seconds": {"fit": 0.5e-3 * rows, "indexes": 0.5e-3 * rows, "search_sample_again": sample * 1e-5 * rows**0.5},
            "neighbourhood_rows": {"seconds_each": 1e-9 * rows**1.5}}  # fmt: skip
    path.write_text(json.dumps({"size": rows, "date": "2026-11-29", "command": "x", "steps": {"matcher": step}}))
    return path


def test_laws_recover_the_exponents_and_extrapolate(tmp_path):
    points = [growth.measured_point(json.loads(run_file(tmp_path / f"{n}.json", n).read_text()))
              for n in (125_000, 250_000, 500_000, 1_000_000)]  # fmt: skip
    results = growth.growth(points, None, machine_gib=23.0)
    assert results["fitted_sizes"] == [125_000, 250_000, 500_000, 1_000_000]
    laws = results["laws"]
    assert laws["fit_seconds"]["b"] == pytest.approx(1.0, abs=1e-6)
    assert laws["query_seconds"]["b"] == pytest.approx(0.5, abs=1e-6)
    assert laws["statistic_seconds"]["b"] == pytest.approx(1.5, abs=1e-6)
    assert laws["peak_rss_gib"]["a"] == pytest.approx(1.0) and laws["peak_rss_gib"]["b"] * 1e6 == pytest.approx(5.0)
    ten = results["extrapolated"][-1]
    assert ten["rows"] == 10_000_000 and ten["peak_rss_gib"] == pytest.approx(51.0)
    assert not ten["fits_memory"] and results["extrapolated"][0]["fits_memory"]  # 2M: 11 GiB
    expected = (1e-3 * 1e7 + 1e7 * (1e-5 * 1e7**0.5 + 1e-9 * 1e7**1.5)) / 3600
    assert ten["join_hours"] == pytest.approx(expected, rel=1e-6)
    table = growth.render(results)
    assert "| 10,000,000 | extrapolated, **does not fit this machine's memory** |" in table
    assert "| 1,000,000 | measured (1,000 sampled queries) | 80.0 |" in table
    assert "statistic time ~ n^1.50" in table


def test_pool_counts_unique_keys_per_source(monkeypatch):
    sources = {"autofj": ["New York", "new  york", "ab"], "wordnet": ["New York", "Paris", "Rome"]}
    monkeypatch.setattr(match_scale_data, "source_iterators", lambda benchmarks: dict(sources))
    assert growth.count_pool(Path(".")) == {"total": 3, "per_source": {"autofj": 1, "wordnet": 2}}


def test_a_run_without_the_index_timing_is_refused(tmp_path):
    results = json.loads(run_file(tmp_path / "old.json", 1000).read_text())
    del results["steps"]["matcher"]["seconds"]["indexes"]
    with pytest.raises(ValueError, match="predates the index timing"):
        growth.measured_point(results)


def test_a_run_whose_fit_holds_the_indexes_counts_its_fit_alone(tmp_path):
    results = json.loads(run_file(tmp_path / "new.json", 1000).read_text())
    step = results["steps"]["matcher"]
    del step["seconds"]["indexes"]
    step["fit_includes_indexes"] = True
    assert growth.measured_point(results)["fit_seconds"] == step["seconds"]["fit"]


def test_main_writes_results_block_and_plot(tmp_path):
    runs = [str(run_file(tmp_path / f"{n}.json", n)) for n in (100_000, 300_000, 400_000, 800_000)]
    page = tmp_path / "page.md"
    page.write_text("# x\n<!-- match-scale-growth:start -->\n<!-- match-scale-growth:end -->\n")
    output, plot = tmp_path / "growth.json", tmp_path / "growth.png"
    growth.main(["--runs", *runs, "--no-pool", "--output", str(output), "--docs", str(page),
                 "--plot", str(plot)])  # fmt: skip
    saved = json.loads(output.read_text())
    assert [p["rows"] for p in saved["measured"]] == [100_000, 300_000, 400_000, 800_000]
    assert saved["fitted_sizes"] == [300_000, 400_000, 800_000]  # the flat-index size is shown, not fitted
    assert "| 100,000 | measured (1,000 sampled queries; exact flat index, not fitted) |" in page.read_text()
    assert plot.stat().st_size > 10_000
    with pytest.raises(SystemExit):
        growth.main(["--runs", *runs[:3], "--no-pool"])  # two sizes above the flat-index limit are too few


def test_the_former_char_top_k_path_gives_the_shipped_answers():
    from phrasezoo.match.features.lexical import TfidfChannel, sparse_top_k

    names = [f"{a} {b}" for a in ("New", "Old", "Great", "Little") for b in ("York", "Post", "Times", "pie", "Inc")]
    channel = TfidfChannel("char").fit(names)
    reference = channel.transform(names)
    queries = channel.transform(["new yrok", "", "great time", "zzz", "little pie inc"])
    former = speed_char_topk.scipy_top_k(queries, reference.T.tocsr(), 6, chunk=2)
    shipped = sparse_top_k(queries, reference, 6)
    np.testing.assert_array_equal(shipped[0], former[0])
    # "great time": "New Times" (row 2) and "Old Times" (row 7) tie at the 6th place; the partial sort kept row 7,
    # the shipped path keeps the lower id, as its docstring says
    assert shipped[1][2, 5] == 2 and former[1][2, 5] == 7 and shipped[0][2, 5] == former[0][2, 5]
    agree = speed_char_topk.agreement(shipped, former)
    assert agree["same_scores"] and agree["queries_with_other_ids"] >= 1 and agree["other_ids_not_at_a_tie"] == 0
    timing = speed_char_topk.measure(names, ["new yrok", "old post"], 3, threads=[1, 2], repeats=1)
    assert all(row["same_scores"] and not row["other_ids_not_at_a_tie"] for row in timing["paths"].values())
    assert set(timing["paths"]) == {"scipy full product (before)", "sparse_dot_topn, 1 thread",
                                    "sparse_dot_topn, 2 threads"}  # fmt: skip

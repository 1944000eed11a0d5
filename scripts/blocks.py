"""Every generated block of README.md and docs/**/*.md, with the command that renders it from committed results files.

A block is the text between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``; the one block writer
(:func:`phrasezoo.files.write_readme_table`) fills it. This registry names, for each block, the page it lives on and
the existing report command (the same argv a person would type, with ``--readme`` pointing at the page) that renders
it from ``results/``. So a table cannot drift from its file: ``tests/test_blocks.py`` regenerates every block into a
copy of the pages and fails on any difference.

    .venv/bin/python scripts/blocks.py --check          # exit 1 and a diff when a block differs from its results
    .venv/bin/python scripts/blocks.py --write          # rewrite every block in place from the results files
    .venv/bin/python scripts/blocks.py --write pearl-mini-seeds   # one block

Results paths are declared here only, through :func:`res`: when ``results/`` is reorganised, ``RESULTS_MOVED`` maps
each old name to its new place and every block follows.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import re
import runpy
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = "results"
#: old results file name (as committed under results/) -> its new path relative to the repository root; the results/
#: reorganisation fills this, and nothing else in this file needs to change.
RESULTS_MOVED: dict[str, str] = {}


def res(name: str) -> str:
    """The repository-relative path of the results file committed as ``results/<name>``."""
    return RESULTS_MOVED.get(name, f"{RESULTS_DIR}/{name}")


def resolve_results(argv: list[str]) -> list[str]:
    """``res()`` applied to every ``results/...`` token of an argv (tokens written as ``@name``)."""
    return [res(a[1:]) if a.startswith("@") else a for a in argv]


@dataclass(frozen=True)
class Block:
    """One generated block: its page, and how it is rendered.

    ``kind`` is ``phrasezoo`` (the CLI), ``module`` (``python -m target``) or ``script`` (``python target``); ``argv``
    is that command's arguments, where ``@name`` is the results file ``res(name)`` and ``{doc}`` the page to write.
    """

    name: str
    doc: str
    kind: str
    target: str
    argv: tuple[str, ...]

    def command(self, doc: str | Path) -> list[str]:
        return [a.replace("{doc}", str(doc)) for a in resolve_results(list(self.argv))]


README = "README.md"
#: pages of the experiment logs (the history moved out of the README); one per method plus the shared one
LOG = {m: f"docs/experiments/{m}.md" for m in ("pearl", "phrase-bert", "uctopic", "slice", "codebook", "common")}
#: the method pages (usage, the paper, our recipe, the current results)
PAGE = {m: f"docs/methods/{m}.md" for m in ("pearl", "phrase-bert", "uctopic", "slice", "codebook")}


def _report(name: str, doc: str, *files: str, tasks: str | None = None, reference: bool = True) -> Block:
    argv = ["report", *(f"@{f}" for f in files), *(["--tasks", tasks] if tasks else [])]
    argv += [*([] if reference else ["--no-reference"]), "--readme", "{doc}"]
    return Block(name, doc, "phrasezoo", "", (*argv, "--block", name))


def _seeds(
    name: str,
    doc: str,
    model: str,
    files: list[str],
    labels: list[str],
    selections: list[str] | None,
    unit: str = "seeds",
    effects: tuple[str, ...] = (),
    baseline: str = "baseline-minilm-l6.json",
) -> Block:
    argv = ["--baseline", f"@{baseline}", "--model", model, "--unit", unit, *(f"@{f}" for f in files)]
    argv += ["--labels", *labels]
    for effect in effects:
        argv += ["--effect", effect]
    if selections:
        argv += ["--selections", *(f"@{s}" for s in selections), "--baseline-dev", "@dev-baseline-minilm-l6.json"]
    return Block(
        name, doc, "module", "phrasezoo.evaluation.seeds_report", (*argv, "--readme", "{doc}", "--block", name)
    )


def _dev_compare(name: str, doc: str, jsonl: str | None = None) -> Block:
    argv = ("--render", f"@{jsonl or name + '.jsonl'}", "--readme", "{doc}", "--block", name)
    return Block(name, doc, "script", "experiments/common/dev_compare.py", argv)


CCL_EFFECTS = ("conll2003_context_ccl=conll2003_context", "bc5cdr_context_ccl=bc5cdr_context")


def _ccl_dev(name: str, doc: str, jsonl: str, *options: str) -> Block:
    argv = (f"@{jsonl}", *options, "--readme", "{doc}", "--block", name)
    return Block(name, doc, "script", "experiments/uctopic/ccl_dev_seeds.py", argv)


#: the Williams' tests of the SLICE table: trained vs its start, vs raw MiniLM, span loss vs its whole-passage control
SLICE_START = "all-MiniLM-L6-v2 + SLICE pooling (untrained start)"
SLICE_PAIRS = [
    f"slice-mini vs {SLICE_START}",
    "slice-mini vs all-MiniLM-L6-v2 (raw, harness mean pooling)",
    "slice-mini vs slice-mini-control",
    f"slice-mini-control vs {SLICE_START}",
    f"slice-mini (training seed 7) vs {SLICE_START}",
    "slice-mini (training seed 7) vs slice-mini-control (training seed 7)",
]


def _soups(stem: str) -> list[str]:
    return [f"{stem}.json", f"{stem}-soup2.json", f"{stem}-soup3.json"]


def _singles(stem: str) -> list[str]:
    return [f"{stem}.json", f"{stem}-seed7.json", f"{stem}-seed1.json"]


def _dev(files: list[str]) -> list[str]:
    return [f.replace(".json", "-dev-selection.json") for f in files]


#: the MiniLM run of 2026-11-24, the baseline of the records tested that day or before (its PPDB-f probe: 70.2)
OLD_BASELINE = "baseline-minilm-l6-2026-11-24.json"
SOUP_LABELS = ["soup of seeds 42, 7, 1", "soup of seeds 2, 3, 4", "soup of seeds 5, 6, 8"]
SEED_LABELS = ["seed 42", "seed 7", "seed 1"]


def _released_soup(name: str) -> list[str]:
    return [f"{SOUP_LABELS[0]} (outputs/{name})", *SOUP_LABELS[1:]]


BLOCKS: list[Block] = [
    Block("zoo", README, "render", "zoo", ("(results of every released checkpoint: zoo_rows())",)),
    Block("zoo", "docs/index.md", "render", "zoo", ("(results of every released checkpoint: zoo_rows())",)),
    # --- PEARL
    _report(
        "pearl-mini", PAGE["pearl"], "pearl-mini.json", "baseline-minilm-l6.json", "baseline-mpnet-base.json", tasks="pearl"
    ),
    _seeds(
        "pearl-mini-seeds",
        PAGE["pearl"],
        "pearl-mini",
        _soups("pearl-mini"),
        _released_soup("pearl-mini"),
        _dev(_soups("pearl-mini")),
        unit="soups",
    ),
    _report(
        "pearl-mini-wnnf",
        LOG["pearl"],
        "pearl-mini-wnnf.json",
        "baseline-minilm-l6.json",
        tasks="pearl",
        reference=False,
    ),
    _seeds(
        "pearl-mini-nonames-seeds",
        LOG["pearl"],
        "pearl-mini, before the name aliases",
        _soups("pearl-mini-nonames"),
        SOUP_LABELS,
        _dev(_soups("pearl-mini-nonames")),
        unit="soups",
        baseline=OLD_BASELINE,
    ),
    _seeds(
        "pearl-mini-unfiltered-seeds",
        LOG["pearl"],
        "pearl-mini, unfiltered table",
        _soups("pearl-mini-unfiltered"),
        SOUP_LABELS,
        _dev(_soups("pearl-mini-unfiltered")),
        unit="soups",
        baseline=OLD_BASELINE,
    ),
    _seeds(
        "pearl-mini-single-seeds",
        LOG["pearl"],
        "pearl-mini, single runs",
        _singles("pearl-mini-single"),
        SEED_LABELS,
        _dev(_singles("pearl-mini-single")),
        baseline=OLD_BASELINE,
    ),
    _seeds(
        "pearl-mini-nowordnet-seeds",
        LOG["pearl"],
        "pearl-mini, links and leads aliases only",
        _singles("pearl-mini-nowordnet"),
        SEED_LABELS,
        _dev(_singles("pearl-mini-nowordnet")),
        baseline=OLD_BASELINE,
    ),
    _seeds(
        "pearl-mini-char10-seeds",
        LOG["pearl"],
        "pearl-mini, 10% char augmentation",
        _singles("pearl-mini-char10"),
        SEED_LABELS,
        _dev(_singles("pearl-mini-char10")),
        baseline=OLD_BASELINE,
    ),
    *(
        _dev_compare(n, LOG["pearl"])
        for n in (
            "pearl-mini-variants-dev",
            "pearl-mini-char0-dev",
            "teacher-blend-dev",
            "pearl-mini-teacher-blend-dev",
            "pearl-mini-ablation-dev",
            "pearl-mini-wordnet-names-dev",
            "pearl-mini-filtered-screens-dev",
            "pearl-mini-lexicon-dev",
            "pearl-mini-pivot-dev",
            "pearl-mini-hn4-dev",
            "pearl-mini-wordnet-dev",
            "pearl-mini-alias-negatives-dev",
            "pearl-mini-type-weight-dev",
            "pearl-mini-batch64-dev",
            "pearl-mini-typed-alias-dev",
            "pearl-mini-soup-dev",
        )
    ),
    # --- Phrase-BERT
    _report(
        "phrase-bert-mini",
        PAGE["phrase-bert"],
        "phrase-bert-mini.json",
        "baseline-minilm-l6.json",
        tasks="turney,bird,ppdb_filtered",
    ),
    *(
        _dev_compare(n, LOG["phrase-bert"])
        for n in (
            "phrase-bert-mini-teacher-dev",
            "phrase-bert-mini-teacher-seeds-dev",
            "phrase-bert-mini-soup-dev",
            "phrase-bert-mini-lexicon-dev",
            "phrase-bert-mini-paraphraser-dev",
        )
    ),
    _seeds(
        "phrase-bert-mini-seeds",
        PAGE["phrase-bert"],
        "phrase-bert-mini",
        _soups("phrase-bert-mini"),
        _released_soup("phrase-bert-mini"),
        _dev(_soups("phrase-bert-mini")),
        unit="soups",
    ),
    _seeds(
        "phrase-bert-mini-nolex-seeds",
        LOG["phrase-bert"],
        "phrase-bert-mini, before the lexicon term",
        _soups("phrase-bert-mini-nolex"),
        SOUP_LABELS,
        _dev(_soups("phrase-bert-mini-nolex")),
        unit="soups",
        baseline=OLD_BASELINE,
    ),
    _seeds(
        "phrase-bert-mini-single-seeds",
        LOG["phrase-bert"],
        "phrase-bert-mini, single runs",
        _singles("phrase-bert-mini-single"),
        SEED_LABELS,
        _dev(_singles("phrase-bert-mini-single")),
        baseline=OLD_BASELINE,
    ),
    _seeds(
        "phrase-bert-mini-unfiltered-seeds",
        LOG["phrase-bert"],
        "phrase-bert-mini, unfiltered triples",
        _singles("phrase-bert-mini-unfiltered"),
        SEED_LABELS,
        _dev(_singles("phrase-bert-mini-unfiltered")),
        baseline=OLD_BASELINE,
    ),
    _seeds(
        "phrase-bert-mini-noteacher-seeds",
        LOG["phrase-bert"],
        "phrase-bert-mini, no teacher",
        _singles("phrase-bert-mini-noteacher"),
        SEED_LABELS,
        _dev(_singles("phrase-bert-mini-noteacher")),
        baseline=OLD_BASELINE,
    ),
    _seeds(
        "phrase-bert-mini-meanrule-seeds",
        LOG["phrase-bert"],
        "phrase-bert-mini, blend by dev average",
        _singles("phrase-bert-mini-meanrule"),
        SEED_LABELS,
        _dev(_singles("phrase-bert-mini-meanrule")),
        baseline=OLD_BASELINE,
    ),
    _seeds(
        "phrase-bert-mini-pivot-seeds",
        LOG["phrase-bert"],
        "phrase-bert-mini-pivot",
        _singles("phrase-bert-mini-pivot"),
        ["seed 42 (outputs/phrase-bert-mini-pivot)", *SEED_LABELS[1:]],
        None,
        baseline="baseline-minilm-l6-2026-11-23.json",
    ),
    Block("pntm", PAGE["phrase-bert"], "render", "pntm", ("@pntm-embedded-k20.json",)),
    # --- UCTopic
    _ccl_dev("uctopic-ccl-dev-seeds", LOG["uctopic"], "uctopic-ccl-dev-seeds.jsonl"),
    _dev_compare("uctopic-mini-soup-dev", LOG["uctopic"]),
    _dev_compare("uctopic-mini-lexicon-dev", LOG["uctopic"]),
    _report("uctopic-mini", PAGE["uctopic"], "uctopic-mini.json", "baseline-minilm-l6.json", tasks="uctopic"),
    _seeds(
        "uctopic-mini-seeds",
        PAGE["uctopic"],
        "uctopic-mini",
        _soups("uctopic-mini"),
        _released_soup("uctopic-mini"),
        _dev(_soups("uctopic-mini")),
        unit="soups",
        effects=CCL_EFFECTS,
    ),
    _ccl_dev("uctopic-ccl-dev-lexicon", LOG["uctopic"], "uctopic-ccl-dev-lexicon.jsonl", "--choose"),
    _ccl_dev("uctopic-ccl-dev-cclseeds", LOG["uctopic"], "uctopic-ccl-dev-lexicon-cclseeds.jsonl"),
    _ccl_dev("uctopic-ccl-dev-lexicon-soup", LOG["uctopic"], "uctopic-ccl-dev-lexicon-soup.jsonl"),
    _ccl_dev(
        "uctopic-ccl-dev-lexicon-seeds", LOG["uctopic"], "uctopic-ccl-dev-lexicon-seeds.jsonl", "--choose-across-seeds"
    ),
    Block(
        "uctopic-ccl-test-seeds",
        LOG["uctopic"],
        "script",
        "experiments/uctopic/ccl_test_seeds.py",
        ("--from-jsonl", "@uctopic-ccl-test-seeds.jsonl", "--readme", "{doc}", "--block", "uctopic-ccl-test-seeds"),
    ),
    _seeds(
        "uctopic-mini-nolex-seeds",
        LOG["uctopic"],
        "uctopic-mini",
        _soups("uctopic-mini-nolex"),
        SOUP_LABELS,
        _dev(_soups("uctopic-mini-nolex")),
        unit="soups",
        effects=CCL_EFFECTS,
    ),
    _seeds(
        "uctopic-mini-single-seeds",
        LOG["uctopic"],
        "uctopic-mini, single runs",
        _singles("uctopic-mini-single"),
        SEED_LABELS,
        _dev(_singles("uctopic-mini-single")),
        effects=CCL_EFFECTS,
    ),
    _seeds(
        "uctopic-mini-unfiltered-seeds",
        LOG["uctopic"],
        "uctopic-mini, unfiltered instances",
        _singles("uctopic-mini-unfiltered"),
        SEED_LABELS,
        _dev(_singles("uctopic-mini-unfiltered")),
        effects=CCL_EFFECTS,
    ),
    # --- codebook, SLICE
    Block(
        "codebook",
        PAGE["codebook"],
        "module",
        "phrasezoo.methods.codebook.report",
        (
            "--results-dir",
            RESULTS_DIR,
            "--readme",
            "{doc}",
            "--block",
            "codebook",
            "--sentence",
            "codebook-sentence-mini",
            "codebook-sentence-mini-k1",
            "--phrase",
            "codebook-phrase-mini",
            "codebook-phrase-mini-k1",
            "--dev-curve",
            "@codebook-phrase-dev-curve.jsonl",
        ),
    ),
    Block(
        "slice",
        PAGE["slice"],
        "module",
        "phrasezoo.methods.slice.report",
        (
            "table",
            "@slice-baseline-minilm-l6.json",
            "@slice-untrained-minilm-l6.json",
            "@slice-mini-control.json",
            "@slice-mini.json",
            "@slice-mini-control-seed7.json",
            "@slice-mini-seed7.json",
            *(x for pair in SLICE_PAIRS for x in ("--pair", pair)),
            "--readme",
            "{doc}",
            "--block",
            "slice",
        ),
    ),
    # --- speed, evaluation, applications
    Block("speed", PAGE["pearl"], "render", "speed", ("@speed-encode.json",)),
    Block(
        "speed-train",
        "docs/training.md",
        "script",
        "benchmarks/speed_train.py",
        (
            "render",
            "@speed-train-uctopic-mini.json",
            "@speed-train-uctopic-mini-cpu1.json",
            "@speed-train-uctopic-mini-nolex.json",
            "--readme",
            "{doc}",
        ),
    ),
    Block(
        "dev-suite",
        "docs/evaluation.md",
        "phrasezoo",
        "",
        (
            "dev-eval",
            "--table",
            "@dev-baseline-minilm-l6.json",
            "@dev-baseline-mpnet-base.json",
            "--readme",
            "{doc}",
            "--block",
            "dev-suite",
        ),
    ),
    Block(
        "fuzzy-join",
        "docs/fuzzy-joins.md",
        "script",
        "benchmarks/fuzzy_join.py",
        ("--from-results", "@fuzzy-join.json", "--readme", "{doc}", "--block", "fuzzy-join"),
    ),
    Block(
        "fuzzy-join-zoo",
        "docs/fuzzy-joins.md",
        "script",
        "benchmarks/fuzzy_join.py",
        ("--from-results", "@fuzzy-join-zoo.json", "--readme", "{doc}", "--block", "fuzzy-join-zoo"),
    ),
    Block(
        "space-load",
        "docs/spaces.md",
        "script",
        "benchmarks/space_load.py",
        ("--from-results", "@space-load.json", "--readme", "{doc}"),
    ),
    Block("pearl-mini-dev-validity", LOG["common"], "render", "dev-validity", ("@pearl-mini-dev-validity.json",)),
    Block("match-scale", "docs/matching-scale.md", "render", "match-scale", ("@matching/scale-1m.json",)),
    Block(
        "match-scale-subset", "docs/matching-scale.md", "render", "match-scale", ("@matching/scale-subset-32768.json",)
    ),
    Block("splink-dev", "docs/integrations/splink.md", "render", "splink-dev", ("@matching/splink-dev.json",)),
]


def _script(path: str) -> dict:
    """The globals of a script under the repository (benchmarks/, experiments/), loaded without running its main."""
    return runpy.run_path(str(ROOT / path), run_name="phrasezoo_block_renderer")


def _json(path: str) -> dict:
    return json.loads((ROOT / path).read_text())


def _render_pntm(path: str) -> str:
    from phrasezoo.methods.phrase_bert.pntm.commands import format_table

    return f"Generated from `{path}`.\n\n{format_table(_json(path))}"


def _render_match_scale(path: str) -> str:
    if not (ROOT / path).is_file():  # the full run has not finished: the script's own placeholder until it does
        return "(generated by benchmarks/match_scale.py; not run to the end yet, see below)"
    return _script("benchmarks/match_scale.py")["table_rows"](_json(path))


def _render_dev_validity(path: str) -> str:
    doc = _json(path)
    return _script("experiments/common/dev_validity.py")["render"](doc["pairs"], doc["runs"])


# ---------------------------------------------------------------------------------------------------- the zoo table
@dataclass(frozen=True)
class ZooTask:
    """One headline number of a checkpoint: ``task``/``metric`` in each run's results file (``avg:t1,t2,...``: the
    mean of those tasks' first metrics); the backbone's from ``baseline_metric`` (default: the same metric) of the
    backbone's file; the paper's from ``paper`` (a fraction) with a note."""

    label: str
    task: str
    metric: str | None = None
    baseline_metric: str | None = None
    paper: float | None = None
    paper_note: str = ""


@dataclass(frozen=True)
class ZooRow:
    checkpoint: str
    runs: tuple[str, ...]  # results files of the released runs (soups or seeds); their spread is the noise
    backbone: str  # results file of the backbone measured in the same run ("" = the runs' own files)
    backbone_label: str
    tasks: tuple[ZooTask, ...]
    paper_label: str


PEARL_7 = "avg:turney,bird,ppdb,ppdb_filtered,conll2003,bc5cdr,autofj"


def _paper(method: str, row: str, key: str) -> float | None:
    from phrasezoo.registry import get_method

    values = get_method(method).paper_rows[row]
    if key.startswith("avg:"):
        found = [values.get(t) for t in key[4:].split(",")]
        return None if None in found else sum(found) / len(found)
    return values.get(key)


def zoo_rows() -> list[ZooRow]:
    """The released checkpoints and their headline tasks (the tasks their papers lead with, and any the checkpoint
    loses on: a loss is never left out)."""
    from phrasezoo.methods.codebook.report import PAPER_STS, PAPER_TURNEY

    pearl = "PEARL-small, 40M (paper)"
    pbert = "Phrase-BERT (paper)"
    uct = "UCTopic CCL (paper)†"
    minilm = "all-MiniLM-L6-v2 (mean pooling)"
    return [
        ZooRow("pearl-mini", tuple(_soups("pearl-mini")), "baseline-minilm-l6.json", minilm, (
            ZooTask("avg w/o KB (7)", PEARL_7, paper=_paper("pearl", pearl, PEARL_7)),
            ZooTask("Turney", "turney", paper=_paper("pearl", pearl, "turney")),
            ZooTask("BC5CDR NMI", "bc5cdr", paper=_paper("pearl", pearl, "bc5cdr")),
            ZooTask("AutoFJ", "autofj", paper=_paper("pearl", pearl, "autofj")),
        ), "PEARL-small"),
        ZooRow("phrase-bert-mini", tuple(_soups("phrase-bert-mini")), "baseline-minilm-l6.json", minilm, (
            ZooTask("Turney", "turney", paper=_paper("phrase_bert", pbert, "turney")),
            ZooTask("BiRD", "bird", paper=_paper("phrase_bert", pbert, "bird")),
            ZooTask("PPDB-f", "ppdb_filtered", paper=_paper("phrase_bert", pbert, "ppdb_filtered")),
        ), "Phrase-BERT"),
        ZooRow("uctopic-mini", tuple(_soups("uctopic-mini")), "baseline-minilm-l6.json", minilm, (
            ZooTask("CoNLL ctx NMI", "conll2003_context", "nmi",
                    paper=_paper("uctopic", uct, "conll2003_context_ccl:nmi"), paper_note="†"),
            ZooTask("BC5CDR ctx NMI", "bc5cdr_context", "nmi",
                    paper=_paper("uctopic", uct, "bc5cdr_context_ccl:nmi"), paper_note="†"),
        ), "UCTopic"),
        ZooRow("slice-mini", ("slice-mini.json", "slice-mini-seed7.json"), "slice-untrained-minilm-l6.json",
               "all-MiniLM-L6-v2, SLICE pooling", (
            ZooTask("STS-B-Context (C) r", "stsb_context", "pearson_spans_single_pass",
                    paper=_paper("slice", "SLICE (paper)", "stsb_context:pearson_spans_single_pass")),
            ZooTask("STS-B-Context (A) r", "stsb_context", "pearson_passage",
                    paper=_paper("slice", "SLICE (paper)", "stsb_context:pearson_passage")),
        ), "SLICE, BERT-base"),
        ZooRow("codebook-phrase-mini", ("codebook-phrase-mini.json",), "", "GloVe 6B 50-d average", (
            ZooTask("Turney(5)", "facets_turney", "turney5:emb", "turney5:glove_avg",
                    paper=PAPER_TURNEY["emb_k10"][0] / 100, paper_note="§"),
            ZooTask("BiRD r", "facets_bird", "pearson:emb", "pearson:glove_avg"),
        ), "Chang et al., K = 10"),
        ZooRow("codebook-sentence-mini", ("codebook-sentence-mini.json",), "", "GloVe 6B 50-d average", (
            ZooTask("STS-B subset r, Avg + facet weights", "facets_stsb_subset", "pearson_all:avg:ours",
                    "pearson_all:avg:none", paper=PAPER_STS[("avg", "k10")][0] / 100, paper_note="§"),
        ), "Chang et al., K = 10"),
    ]  # fmt: skip


def _zoo_value(doc: dict, task: str, metric: str | None) -> float | None:
    from phrasezoo.evaluation.results import get_value

    if task.startswith("avg:"):
        found = [get_value(doc, t) for t in task[4:].split(",")]
        return None if None in found else sum(found) / len(found)
    return get_value(doc, task, metric)


def _render_zoo(_: str) -> str:
    """Markdown: one row per released checkpoint, its headline tasks against its backbone and the paper."""
    from phrasezoo.evaluation.results import read_results

    lines = [
        "| checkpoint | headline task | ours | backbone, same run | paper | beats the backbone by more than the "
        "seed spread |",
        "|---|---|:---:|:---:|:---:|:---:|",
    ]
    for row in zoo_rows():
        docs = [read_results(ROOT / res(f)) for f in row.runs]
        base = read_results(ROOT / res(row.backbone)) if row.backbone else None
        cells: dict[str, list[str]] = {"task": [], "ours": [], "base": [], "paper": [], "verdict": []}
        for task in row.tasks:
            values = [_zoo_value(d, task.task, task.metric) for d in docs]
            base_doc = base if base is not None else docs[0]
            backbone = _zoo_value(base_doc, task.task, task.baseline_metric or task.metric)
            if None in values or backbone is None:
                raise ValueError(f"{row.checkpoint}: {task.label} is missing from its results files")
            mean = sum(values) / len(values)
            spread = max(values) - min(values)
            margin = mean - backbone
            if len(values) == 1:
                verdict = f"**no** ({100 * margin:+.1f})" if margin <= 0 else f"{100 * margin:+.1f}, one run: no spread"
            else:
                word = "yes" if margin > spread else "**no**"
                verdict = f"{word} ({100 * margin:+.1f} vs {100 * spread:.1f})"
            cells["task"].append(task.label)
            cells["ours"].append(f"{100 * mean:.1f}")
            cells["base"].append(f"{100 * backbone:.1f}")
            cells["paper"].append("–" if task.paper is None else f"{100 * task.paper:.1f}{task.paper_note}")
            cells["verdict"].append(verdict)
        runs = f"{len(docs)} {'soups' if 'soup2' in ''.join(row.runs) else 'runs'}" if len(docs) > 1 else "1 run"
        first = f"**{row.checkpoint}** ({runs}; backbone: {row.backbone_label}; paper: {row.paper_label})"
        lines.append(f"| {first} | " + " | ".join("<br>".join(cells[k]) for k in cells) + " |")
    lines += [
        "",
        "- Percentages (accuracy, Pearson r, NMI x 100) from the benchmark suite on `../shared/benchmarks`. Ours: the "
        "mean over the released soups or training seeds (the released checkpoint is the first of them); the last "
        "column compares the margin over the backbone with their spread (max - min), as `margin vs spread`.",
        "- Paper: the published number of the paper's own model (BERT-base size unless named), trained at paper scale; "
        "for reference, not re-run here. † UCTopic's paper reports only after CCL (all splits pooled, best score "
        "selected on gold labels). § The codebook paper's own split and GloVe 42B/840B 300-d vectors (our subset "
        "and GloVe 6B 50-d differ).",
        "- Per-task tables, seeds and the dev-suite choices are on each method's docs page.",
    ]
    return "\n".join(lines)


#: renderers of blocks whose script has no "from results" mode: a function of the block's results file
RENDERERS: dict[str, Callable[[str], str]] = {
    "pntm": _render_pntm,
    "speed": lambda path: _script("benchmarks/speed_encode.py")["speed_table"](_json(path)),
    "match-scale": _render_match_scale,
    "splink-dev": lambda path: _script("benchmarks/splink_autofj_dev.py")["table"](_json(path)),
    "dev-validity": _render_dev_validity,
    "zoo": _render_zoo,
}


def run_block(block: Block, doc: str | Path) -> str:
    """Run the block's command against ``doc`` (a page path) from the repository root; returns what it printed."""
    argv = block.command(doc)
    out = io.StringIO()
    saved = sys.argv[:]
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out):
        try:
            if block.kind == "render":
                from phrasezoo.files import write_readme_table

                write_readme_table(doc, RENDERERS[block.target](argv[0]), block=block.name)
                code = 0
            elif block.kind == "phrasezoo":
                from phrasezoo.cli import main as cli

                code = cli(argv)
            elif block.kind == "module":
                sys.argv = [block.target, *argv]
                code = _run(lambda: runpy.run_module(block.target, run_name="__main__", alter_sys=False))
            elif block.kind == "script":
                sys.argv = [block.target, *argv]
                code = _run(lambda: runpy.run_path(str(ROOT / block.target), run_name="__main__"))
            else:
                raise ValueError(f"unknown block kind {block.kind!r}")
        finally:
            sys.argv = saved
    if code not in (0, None):
        raise RuntimeError(f"block {block.name}: `{block.target or 'phrasezoo'} {' '.join(argv)}` exited {code}")
    return out.getvalue()


def _run(fn: Callable[[], object]) -> int | None:
    try:
        fn()
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    return 0


def block_text(text: str, name: str) -> str | None:
    """The content of block ``name`` in a page's text, or None when the page has no such block."""
    match = re.search(rf"<!-- {re.escape(name)}:start -->\n?(.*?)<!-- {re.escape(name)}:end -->", text, re.S)
    return match.group(1) if match else None


def block_names(text: str) -> list[str]:
    """Every block named in a page's text, in order."""
    return re.findall(r"<!-- ([A-Za-z0-9_.-]+):start -->", text)


def pages() -> list[Path]:
    """README.md and every markdown page under docs/."""
    return [ROOT / README, *sorted((ROOT / "docs").rglob("*.md"))]


def regenerate(blocks: list[Block], workdir: Path) -> dict[str, tuple[str, str]]:
    """Render ``blocks`` into copies of their pages under ``workdir``: block name -> (committed, regenerated)."""
    copies: dict[str, Path] = {}
    for block in blocks:
        if block.doc not in copies:
            copies[block.doc] = workdir / block.doc
            copies[block.doc].parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / block.doc, copies[block.doc])
    errors = {}
    for block in blocks:
        try:
            run_block(block, copies[block.doc])
        except Exception as err:  # one broken renderer is reported with the others, not alone
            errors[block.name] = f"(the renderer failed: {type(err).__name__}: {err})"
    out = {}
    for block in blocks:
        committed = block_text((ROOT / block.doc).read_text(), block.name)
        if committed is None:
            raise ValueError(f"{block.doc} has no <!-- {block.name}:start --> block (the registry says it does).")
        fresh = errors.get(block.name) or block_text(copies[block.doc].read_text(), block.name) or ""
        out[f"{block.doc}: {block.name}"] = (committed, fresh)
    return out


def unregistered() -> list[str]:
    """``page: block`` for every block on a page that the registry does not name."""
    known = {(b.doc, b.name) for b in BLOCKS}
    missing = []
    for page in pages():
        rel = page.relative_to(ROOT).as_posix()
        missing += [f"{rel}: {n}" for n in block_names(page.read_text()) if (rel, n) not in known]
    return missing


def select(names: list[str]) -> list[Block]:
    """The registered blocks named ``names`` (every page a name appears on), or all of them."""
    if not names:
        return BLOCKS
    unknown = sorted(set(names) - {b.name for b in BLOCKS})
    if unknown:
        raise SystemExit(f"unknown block(s): {', '.join(unknown)}; `scripts/blocks.py --list` lists them.")
    return [b for b in BLOCKS if b.name in names]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="fail (exit 1) with a diff when a block differs")
    mode.add_argument("--write", action="store_true", help="rewrite the blocks in place from the results files")
    mode.add_argument("--list", action="store_true", help="list the blocks, their pages and commands")
    parser.add_argument("names", nargs="*", help="only these blocks (default: all)")
    args = parser.parse_args(argv)
    blocks = select(args.names)
    if args.list:
        for b in blocks:
            print(f"{b.doc}: {b.name}\n    {b.target or 'phrasezoo'} {' '.join(b.command(b.doc))}")
        return 0
    if args.write:
        for block in blocks:
            run_block(block, ROOT / block.doc)
            print(f"wrote {block.doc}: {block.name}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        result = regenerate(blocks, Path(tmp))
    failed = 0
    for name, (committed, fresh) in result.items():
        if committed != fresh:
            failed += 1
            diff = difflib.unified_diff(
                committed.splitlines(), fresh.splitlines(), "committed", "regenerated", lineterm=""
            )
            print(f"--- block {name} differs from its results:\n" + "\n".join(diff))
    missing = unregistered() if not args.names else []
    for item in missing:
        print(f"unregistered block (add it to BLOCKS or remove it): {item}")
    print(f"{len(result) - failed} of {len(result)} blocks match their results; {len(missing)} unregistered.")
    return 1 if failed or missing else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Markdown comparison table of results files, with the papers' published numbers as reference rows."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .results import get_value, read_results


@dataclass(frozen=True)
class Column:
    task: str
    metric: str
    label: str


COLUMNS = [
    Column("turney", "accuracy", "Turney"),
    Column("bird", "pearson", "BiRD"),
    Column("ppdb", "accuracy", "PPDB"),
    Column("ppdb_filtered", "accuracy", "PPDB-f"),
    Column("yago", "accuracy", "YAGO‡"),
    Column("umls", "accuracy", "UMLS‡"),
    Column("conll2003", "nmi", "CoNLL NMI"),
    Column("bc5cdr", "nmi", "BC5CDR NMI"),
    Column("autofj", "accuracy", "AutoFJ"),
    Column("stsb_context", "pearson_passage", "STS-B-Ctx passage r"),
    Column("stsb_context", "pearson_spans_single_pass", "STS-B-Ctx single-pass r"),
    # UCTopic protocol: mentions in their sentences; "+CCL" after cluster-assisted contrastive finetuning
    Column("conll2003_context", "nmi", "CoNLL ctx NMI"),
    Column("conll2003_context", "acc", "CoNLL ctx ACC"),
    Column("conll2003_context_ccl", "nmi", "CoNLL ctx+CCL NMI"),
    Column("conll2003_context_ccl", "acc", "CoNLL ctx+CCL ACC"),
    Column("bc5cdr_context", "nmi", "BC5CDR ctx NMI"),
    Column("bc5cdr_context", "acc", "BC5CDR ctx ACC"),
    Column("bc5cdr_context_ccl", "nmi", "BC5CDR ctx+CCL NMI"),
    Column("bc5cdr_context_ccl", "acc", "BC5CDR ctx+CCL ACC"),
]
PEARL_TASKS = ["turney", "bird", "ppdb", "ppdb_filtered", "yago", "umls", "conll2003", "bc5cdr", "autofj"]
NO_KB_TASKS = [t for t in PEARL_TASKS if t not in ("yago", "umls")]

#: Published numbers (DESIGN.md "Headline numbers"; BERT-base size unless noted), as fractions. Keys are
#: ``task`` or ``task:metric``. YAGO/UMLS are left out on purpose: the papers searched the full KBs.
REFERENCE_ROWS: list[tuple[str, dict[str, float]]] = [
    (
        "Phrase-BERT (paper)",
        {"turney": 0.572, "bird": 0.688, "ppdb": 0.968, "ppdb_filtered": 0.687, "conll2003": 0.354, "bc5cdr": 0.595,
         "autofj": 0.669, "stsb_context:pearson_spans_single_pass": 0.643},
    ),
    (
        "E5-small, 34M (paper)",
        {"turney": 0.559, "bird": 0.631, "ppdb": 0.960, "ppdb_filtered": 0.568, "conll2003": 0.276, "bc5cdr": 0.537,
         "autofj": 0.748},
    ),
    (
        "PEARL-small, 40M (paper)",
        {"turney": 0.561, "bird": 0.697, "ppdb": 0.972, "ppdb_filtered": 0.692, "conll2003": 0.487, "bc5cdr": 0.610,
         "autofj": 0.746},
    ),
    (
        "PEARL-base (paper)",
        {"turney": 0.609, "bird": 0.723, "ppdb": 0.971, "ppdb_filtered": 0.727, "conll2003": 0.409, "bc5cdr": 0.695,
         "autofj": 0.763},
    ),
    ("SLICE (paper)", {"stsb_context:pearson_spans_single_pass": 0.677}),
    (
        "UCTopic CCL (paper)†",
        {"conll2003_context_ccl:nmi": 0.495, "conll2003_context_ccl:acc": 0.743, "bc5cdr_context_ccl:nmi": 0.865},
    ),
]  # fmt: skip

NOTES = [
    "Values are percentages (accuracy, Pearson r, NMI x 100); – = not run, skipped, or not published.",
    "‡ YAGO/UMLS: top-1 accuracy against a **gold-name KB** (the unique gold names of the 10k test pairs) instead of "
    "the full 572k/750k-name knowledge bases of the paper: an easier search, **not comparable** with the paper's "
    "YAGO/UMLS numbers, so the reference rows leave these columns empty.",
    "Rows marked (paper) are numbers published in the papers (BERT-base size unless noted), not re-run here.",
    "† UCTopic's paper: all splits pooled and the best score seen during CCL finetuning (selected on the gold "
    "labels); ours: test split, the score after a fixed number of CCL steps.",
    "PEARL avg (9): mean over the nine PEARL tasks, shown only when all nine are present (YAGO/UMLS with the "
    "gold-name KB). Avg w/o KB (7): the same without YAGO/UMLS, comparable with the (paper) rows.",
]


def format_report(paths_or_docs: Any, include_reference: bool = True, columns: list[Column] | None = None) -> str:
    """Markdown table: one row per results document (or file), one column per task's main metric, averages, notes."""
    docs = [_as_doc(item) for item in _as_list(paths_or_docs)]
    columns = columns or _columns_for(docs)
    show_avgs = set(PEARL_TASKS) <= {c.task for c in columns}
    split = max((i + 1 for i, c in enumerate(columns) if c.task in PEARL_TASKS), default=0)  # averages go here
    header = ["model", *(c.label for c in columns[:split])]
    if show_avgs:
        header += ["PEARL avg (9)", "avg w/o KB (7)"]
    header += [c.label for c in columns[split:]]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + [":---:"] * (len(header) - 1)) + "|"]
    rows: list[tuple[str, dict[str, float | None]]] = [
        (str(d.get("model", "?")), _doc_values(d, columns)) for d in docs
    ]
    if include_reference:  # reference rows with a number in at least one shown column
        for name, values in REFERENCE_ROWS:
            reference = _reference_values(values, columns)
            if any(reference.get(_key(c)) is not None for c in columns):
                rows.append((name, reference))
    for name, values in rows:
        cells = [_escape(name), *(_pct(values.get(_key(c))) for c in columns[:split])]
        if show_avgs:
            main = {c.task: values.get(_key(c)) for c in columns if c.task in PEARL_TASKS}
            cells += [_pct(_mean([main.get(t) for t in PEARL_TASKS])), _pct(_mean([main.get(t) for t in NO_KB_TASKS]))]
        cells += [_pct(values.get(_key(c))) for c in columns[split:]]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    shown = {name for name, _ in rows}
    tasks = {c.task for c in columns}
    wanted = {
        NOTES[0]: True,
        NOTES[1]: bool(tasks & {"yago", "umls"}),
        NOTES[2]: any(name.endswith(("(paper)", "(paper)†")) for name in shown),
        NOTES[3]: any(name.endswith("†") for name in shown),
        NOTES[4]: show_avgs,
    }
    lines.extend(f"- {note}" for note in NOTES if wanted[note] and (include_reference or "(paper)" not in note))
    return "\n".join(lines)


def _columns_for(docs: list[dict]) -> list[Column]:
    """Known columns present in any document (all of them if none), then one column per unknown task."""
    present = {(r["task"], r["metric"]) for d in docs for r in d.get("results", [])}
    tasks_present = {t for t, _ in present}
    if not present:
        return list(COLUMNS)
    columns = [c for c in COLUMNS if c.task in tasks_present]
    known_tasks = {c.task for c in COLUMNS}
    added: set[tuple[str, str]] = set()
    for doc in docs:  # tasks the report does not know: one column per metric, in order of appearance
        for entry in doc.get("results", []):
            key = (entry["task"], entry["metric"])
            if entry["task"] not in known_tasks and key not in added:
                added.add(key)
                columns.append(Column(entry["task"], entry["metric"], f"{entry['task']} {entry['metric']}"))
    if set(PEARL_TASKS) <= tasks_present:  # PEARL columns first, then the averages
        pearl = [c for c in COLUMNS if c.task in PEARL_TASKS]
        others = [c for c in columns if c.task not in PEARL_TASKS]
        columns = pearl + others
    return columns


def _key(column: Column) -> str:
    return f"{column.task}:{column.metric}"


def _doc_values(doc: dict, columns: list[Column]) -> dict[str, float | None]:
    return {_key(c): get_value(doc, c.task, c.metric) for c in columns}


def _reference_values(values: dict[str, float], columns: list[Column]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    main = {c.task: c.metric for c in COLUMNS if c.task != "stsb_context"}
    for key, value in values.items():
        task, _, metric = key.partition(":")
        out[f"{task}:{metric or main[task]}"] = value
    return out


def _mean(values: Iterable[float | None]) -> float | None:
    values = list(values)
    if not values or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]


def _pct(value: float | None) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f}"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _as_list(items: Any) -> list:
    if isinstance(items, (dict, str, os.PathLike)):
        return [items]
    return list(items)


def _as_doc(item: Any) -> dict:
    return item if isinstance(item, dict) else read_results(item)

"""Markdown comparison table of results files, with the papers' published numbers as reference rows."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from phrasezoo.zoo.registry import get_method, list_methods

from .hub_model import authors_results_path
from .results import get_value, read_results
from .tasks import GROUPS, TASKS


@dataclass(frozen=True)
class Column:
    task: str
    metric: str
    label: str


SUITE_GROUP = "pearl"  # the nine tasks of the PEARL benchmark suite: the averages of the table are over them


def report_columns() -> list[Column]:
    """Every task's columns (``Task.columns``), in table order (``Task.column_order``, else ``Task.order``)."""
    tasks = sorted(TASKS.values(), key=lambda t: (t.order if t.column_order is None else t.column_order, t.name))
    return [Column(task.name, metric, label) for task in tasks for metric, label in task.columns]


def suite_tasks() -> list[str]:
    return list(GROUPS.get(SUITE_GROUP, []))


def no_kb_tasks() -> list[str]:
    """The suite without the tasks scored against a gold-name KB (comparable with the papers' rows)."""
    return [name for name in suite_tasks() if not TASKS[name].gold_name_kb]


def reference_rows() -> list[tuple[str, dict[str, float]]]:
    """The papers' published numbers, as fractions, declared by the methods (``Method.paper_rows``); keys are
    ``task`` (its main metric) or ``task:metric``."""
    return [(row, dict(values)) for name in list_methods() for row, values in get_method(name).paper_rows.items()]


NOTES = [
    "Values are percentages (accuracy, Pearson r, NMI x 100); – = not run, skipped, or not published.",
    "‡ YAGO/UMLS: top-1 accuracy against a **gold-name KB** (the unique gold names of the 10k test pairs) instead of "
    "the full 572k/750k-name knowledge bases of the paper: an easier search, **not comparable** with the paper's "
    "YAGO/UMLS numbers, so the reference rows leave these columns empty.",
    "Rows marked (paper) are numbers published in the papers (BERT-base size unless noted), not re-run here.",
    "† UCTopic's paper: all splits pooled and the best score seen during CCL finetuning (selected on the gold "
    "labels); ours: test split, CCL for a fixed number of steps chosen on the dev splits (no label decides "
    "when it stops).",
    "¹ An authors' published checkpoint (converted by `phrasezoo convert`) not measured yet: downloading it needs a "
    "network, and none was here. `phrasezoo evaluate --model <repo id>` writes results/<method>/authors-<name>.json "
    "and the row fills in.",
    "PEARL avg (9): mean over the nine PEARL tasks, shown only when all nine are present (YAGO/UMLS with the "
    "gold-name KB). Avg w/o KB (7): the same without YAGO/UMLS, comparable with the (paper) rows.",
]


def authors_rows(columns: list[Column], root: str | os.PathLike = ".") -> list[tuple[str, dict[str, float | None]]]:
    """One row per published checkpoint of the methods (``Method.releases``), named ``<repo id> (authors'
    checkpoint)``: its results file (:func:`~phrasezoo.evaluation.hub_model.authors_results_path`) when measured,
    else empty cells and the mark ¹ (not measured: no network)."""
    rows = []
    for method in list_methods():
        for release in get_method(method).releases:
            path = os.path.join(root, authors_results_path(release.repo_id))
            name = f"{release.repo_id} (authors' checkpoint)"
            if os.path.isfile(path):
                rows.append((name, _doc_values(read_results(path), columns)))
            else:
                rows.append((name + "¹", {_key(c): None for c in columns}))
    return rows


def format_report(paths_or_docs: Any, include_reference: bool = True, columns: list[Column] | None = None,
                  authors: bool = False) -> str:  # fmt: skip
    """Markdown table: one row per results document (or file), one column per task's main metric, averages, notes;
    with ``authors``, a row per authors' published checkpoint (:func:`authors_rows`)."""
    docs = [_as_doc(item) for item in _as_list(paths_or_docs)]
    columns = columns or _columns_for(docs)
    suite, no_kb = suite_tasks(), no_kb_tasks()
    show_avgs = bool(suite) and set(suite) <= {c.task for c in columns}
    split = max((i + 1 for i, c in enumerate(columns) if c.task in suite), default=0)  # averages go here
    header = ["model", *(_escape(c.label) for c in columns[:split])]
    if show_avgs:
        header += ["PEARL avg (9)", "avg w/o KB (7)"]
    header += [_escape(c.label) for c in columns[split:]]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + [":---:"] * (len(header) - 1)) + "|"]
    rows: list[tuple[str, dict[str, float | None]]] = [
        (str(d.get("model", "?")), _doc_values(d, columns)) for d in docs
    ]
    if authors:
        rows += authors_rows(columns)
    if include_reference:  # reference rows with a number in at least one shown column
        for name, values in reference_rows():
            reference = _reference_values(values, columns)
            if any(reference.get(_key(c)) is not None for c in columns):
                rows.append((name, reference))
    for name, values in rows:
        cells = [_escape(name), *(_pct(values.get(_key(c))) for c in columns[:split])]
        if show_avgs:
            main = {c.task: values.get(_key(c)) for c in columns if c.task in suite}
            cells += [_pct(_mean([main.get(t) for t in suite])), _pct(_mean([main.get(t) for t in no_kb]))]
        cells += [_pct(values.get(_key(c))) for c in columns[split:]]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    shown = {name for name, _ in rows}
    tasks = {c.task for c in columns}
    wanted = {
        NOTES[0]: True,
        NOTES[1]: any(TASKS[t].gold_name_kb for t in tasks if t in TASKS),
        NOTES[2]: any(name.endswith(("(paper)", "(paper)†")) for name in shown),
        NOTES[3]: any(name.endswith("†") for name in shown),
        NOTES[4]: any(name.endswith("¹") for name in shown),
        NOTES[5]: show_avgs,
    }
    lines.extend(f"- {note}" for note in NOTES if wanted[note] and (include_reference or "(paper)" not in note))
    return "\n".join(lines)


def _columns_for(docs: list[dict]) -> list[Column]:
    """Known columns present in any document (all of them if none), then one column per unknown task."""
    present = {(r["task"], r["metric"]) for d in docs for r in d.get("results", [])}
    tasks_present = {t for t, _ in present}
    known = report_columns()
    if not present:
        return known
    columns = [c for c in known if c.task in tasks_present]
    known_tasks = {c.task for c in known}
    added: set[tuple[str, str]] = set()
    for doc in docs:  # tasks the report does not know: one column per metric, in order of appearance
        for entry in doc.get("results", []):
            key = (entry["task"], entry["metric"])
            if entry["task"] not in known_tasks and key not in added:
                added.add(key)
                columns.append(Column(entry["task"], entry["metric"], f"{entry['task']} {entry['metric']}"))
    suite = suite_tasks()
    if suite and set(suite) <= tasks_present:  # the suite's columns first, then the averages
        columns = [c for c in known if c.task in suite] + [c for c in columns if c.task not in suite]
    return columns


def _key(column: Column) -> str:
    return f"{column.task}:{column.metric}"


def _doc_values(doc: dict, columns: list[Column]) -> dict[str, float | None]:
    return {_key(c): get_value(doc, c.task, c.metric) for c in columns}


def _reference_values(values: dict[str, float], columns: list[Column]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key, value in values.items():
        task, _, metric = key.partition(":")
        out[f"{task}:{metric or TASKS[task].main_metric}"] = value
    return out


def _mean(values: Iterable[float | None]) -> float | None:
    values = list(values)
    if not values or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]


def _pct(value: float | None) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f}"


def _escape(text: str) -> str:
    """``text`` as one markdown table cell: pipes escaped, line breaks as spaces (a break would end the row)."""
    return " ".join(text.splitlines()).replace("|", "\\|")


def _as_list(items: Any) -> list:
    if isinstance(items, (dict, str, os.PathLike)):
        return [items]
    return list(items)


def _as_doc(item: Any) -> dict:
    return item if isinstance(item, dict) else read_results(item)

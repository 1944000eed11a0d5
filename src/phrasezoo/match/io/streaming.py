"""Tables larger than memory for ``phrasezoo match join|link|apply``: the query table is read and matched in chunks.

The reference (left table, knowledge base, saved matcher) is fitted once and held in memory; the query table is
read ``chunk_rows`` rows at a time (:func:`~phrasezoo.match.io.tables.iter_table`: CSV/TSV with pandas' chunked
reader, JSON lines likewise, parquet by record batches), each chunk is matched, and its rows are appended to a
temporary output file that replaces the output only when every chunk is done (an interrupted run leaves the previous
output, if any, untouched). Row labels are the
rows' positions in the whole file, so ``right_index`` and the report (unmatched and skipped rows) name rows of the
file, not of a chunk. Memory is the reference, the matcher and one chunk, whatever the file's size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .inputs import MissingValuesError
from .tables import TableWriter


def stream_matches(chunks: Iterator[Any], match: Callable[[Any], Any], output: str) -> dict[str, Any]:
    """Match each chunk with ``match`` (a query DataFrame -> result DataFrame with the ``attrs`` report of
    :func:`phrasezoo.match.join`) and write the results; returns the merged report: ``rows_read``, ``rows_written``,
    ``threshold`` (and ``target_precision``, ``calibration``), ``unmatched`` and ``skipped`` labels."""
    writer = TableWriter(output)
    report: dict[str, Any] = {"rows_read": 0, "unmatched": [], "skipped": {}, "threshold": None}
    try:
        for chunk in chunks:
            try:
                frame = match(chunk)
            except ValueError as err:  # say where in a large file: a later chunk may be the first bad one
                where = f"Rows {report['rows_read']}-{report['rows_read'] + len(chunk) - 1} of the file: "
                if isinstance(err, MissingValuesError):
                    raise err.at(where) from err
                raise ValueError(where + str(err)) from err
            report["rows_read"] += len(chunk)
            report["unmatched"] += list(frame.attrs.get("unmatched", []))
            for table, labels in frame.attrs.get("skipped", {}).items():
                report["skipped"].setdefault(table, [])
                if table in ("right", "mentions", "queries"):
                    report["skipped"][table] += list(labels)
                else:  # the reference's skipped rows are the same in every chunk
                    report["skipped"][table] = list(labels)
            report["threshold"] = frame.attrs.get("threshold")
            for key in ("target_precision", "calibration"):
                if key in frame.attrs:
                    report[key] = frame.attrs[key]
            frame.attrs = {}
            writer.write(frame)
    except BaseException:
        writer.abort()
        raise
    writer.close()
    report["rows_written"] = writer.rows
    return report

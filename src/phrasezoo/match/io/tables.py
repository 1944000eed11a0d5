"""Table files in and out: CSV, TSV, parquet and JSON lines (by suffix), read whole or in chunks, written whole or
appended chunk by chunk, with errors that say what to do (a missing file, another encoding, a malformed table).

The suffix says the format: ``.tsv``/``.tab`` are tab-separated, ``.parquet`` is parquet, ``.jsonl``/``.ndjson``
JSON lines, anything else comma-separated. Delimited cells are read as text, empty cells as empty strings (not
NaN), so a name column keeps its spelling ("007", "NA").
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_CHUNK_ROWS = 100_000


def table_file(path: str) -> tuple[Path, str]:
    """The table's file and its lower-case suffix (which says its format); a clear error when there is no file."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"No such table: {path}")
    return file, file.suffix.lower()


def separator(suffix: str) -> str:
    """The field separator of a delimited table: a tab for .tsv and .tab, else a comma."""
    return "\t" if suffix in (".tsv", ".tab") else ","


def csv_options(suffix: str, encoding: str) -> dict[str, Any]:
    """How every delimited table is read: its separator, cells as text, empty cells as empty strings (not NaN)."""
    return {"sep": separator(suffix), "dtype": str, "keep_default_na": False, "encoding": encoding}


def iter_table(path: str, encoding: str = "utf-8", chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[Any]:
    """DataFrames of at most ``chunk_rows`` rows, indexed by their row position in the file (from 0)."""
    import pandas as pd  # lazy: keeps pandas off 'phrasezoo --help' and 'import phrasezoo.match'

    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise ValueError(f"--chunk-rows must be a positive whole number, got {chunk_rows!r}.")
    file, suffix = table_file(path)
    with read_errors(path, suffix, encoding):
        if suffix == ".parquet":
            import pyarrow.parquet as pq  # lazy: parquet files only

            start = 0
            for batch in pq.ParquetFile(file).iter_batches(batch_size=chunk_rows):
                frame = batch.to_pandas()
                frame.index = pd.RangeIndex(start, start + len(frame))
                start += len(frame)
                yield frame
            return
        if suffix in (".jsonl", ".ndjson"):
            reader = pd.read_json(file, lines=True, encoding=encoding, chunksize=chunk_rows)
        else:
            reader = pd.read_csv(file, chunksize=chunk_rows, **csv_options(suffix, encoding))
        read = 0
        with reader:
            for chunk in reader:  # pandas numbers the rows of later chunks on from the earlier ones
                read += 1
                yield chunk
        if not read and suffix not in (".jsonl", ".ndjson"):  # a header without rows: an empty table, not nothing
            yield pd.read_csv(file, nrows=0, **csv_options(suffix, encoding))


@contextlib.contextmanager
def read_errors(path: str, suffix: str, encoding: str):
    """Reading errors as one ``ValueError`` that says what to do (wrong encoding, unknown encoding, bad table)."""
    try:
        yield
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{path} is not valid {encoding} (byte {err.object[err.start : err.start + 1]!r} at position {err.start}); "
            "pass its encoding, e.g. --encoding latin-1 or --encoding cp1252."
        ) from err
    except LookupError as err:
        raise ValueError(f"Unknown encoding {encoding!r}: {err}") from err
    except ValueError as err:  # pandas' ParserError and EmptyDataError are ValueErrors
        raise ValueError(f"Could not read {path} as a {suffix.lstrip('.') or 'csv'} table: {err}") from err


class TableWriter:
    """Appends DataFrames to one CSV/TSV/parquet/JSON-lines output (``-``: stdout); :meth:`close` moves the
    finished file into place, :meth:`abort` removes it. Parquet takes its column types from the first chunk; a column
    that chunk leaves empty (every row unmatched) is written as text."""

    def __init__(self, path: str) -> None:
        self.path, self.rows, self._parquet, self._tmp, self._started = path, 0, None, None, False
        if path != "-":
            target = Path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
            os.close(handle)
            self._tmp = Path(name)
        self.suffix = Path(path).suffix.lower()

    def write(self, frame) -> None:
        first, self._started = not self._started, True  # a CSV header once, even when the first chunks are empty
        if self.path == "-":
            frame.to_csv(sys.stdout, index=False, header=first)
        elif self.suffix == ".parquet":
            import pyarrow as pa  # lazy: parquet files only
            import pyarrow.parquet as pq  # lazy: parquet files only

            table = pa.Table.from_pandas(frame, preserve_index=False)
            if self._parquet is None:  # a column with no value yet (all unmatched) is written as text
                schema = pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in table.schema])
                self._parquet = pq.ParquetWriter(self._tmp, schema.remove_metadata())
            self._parquet.write_table(table.cast(self._parquet.schema))
        elif self.suffix in (".jsonl", ".ndjson"):
            with open(self._tmp, "a", encoding="utf-8") as out:
                frame.to_json(out, orient="records", lines=True)  # one line per row, each ending in a newline
        else:
            frame.to_csv(self._tmp, index=False, header=first, mode="w" if first else "a", sep=separator(self.suffix))
        self.rows += len(frame)

    def close(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
        if self._tmp is not None:
            self._tmp.replace(self.path)

    def abort(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)


def read_table(path: str, encoding: str = "utf-8"):
    """A DataFrame from CSV, TSV, parquet or JSON lines (by suffix); clear errors for a missing file, a file in
    another encoding and a malformed table."""
    import pandas as pd  # lazy: keeps pandas off 'phrasezoo --help' and 'import phrasezoo.match'

    file, suffix = table_file(path)
    with read_errors(path, suffix, encoding):
        if suffix == ".parquet":
            return pd.read_parquet(file)
        if suffix in (".jsonl", ".ndjson"):
            return pd.read_json(file, lines=True, encoding=encoding)
        return pd.read_csv(file, **csv_options(suffix, encoding))


def write_table(frame, path: str) -> None:
    if path == "-":
        frame.to_csv(sys.stdout, index=False)
        return
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    suffix = file.suffix.lower()
    if suffix == ".parquet":
        frame.to_parquet(file, index=False)
    elif suffix in (".jsonl", ".ndjson"):
        frame.to_json(file, orient="records", lines=True)
    else:
        frame.to_csv(file, index=False, sep=separator(suffix))

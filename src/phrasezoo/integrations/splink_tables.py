"""Table plumbing for :mod:`phrasezoo.integrations.splink`: read a text column and write a vector column on pandas,
DuckDB relations and Spark DataFrames, and encode texts in chunks with any encoder.

Vectors live in tables as fixed-size float32 arrays: an Arrow ``fixed_size_list<float32>[dim]`` column in pandas
(``pd.ArrowDtype``) and DuckDB (``FLOAT[dim]``, what ``array_cosine_similarity`` takes), ``array<float>`` in Spark
(Spark has no fixed-size array type; every row has ``dim`` values). A missing text (None, NaN, empty) gets a null
vector, which splink's null level handles.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from tqdm.auto import tqdm

from phrasezoo.core.progress import progress_enabled

PANDAS, DUCKDB, SPARK = "pandas", "duckdb", "spark"
#: the embedded encoder (all-MiniLM-L6-v2, mean pooling) used when no model is given
DEFAULT_MODEL = "baseline:minilm-l6"


def table_kind(table: Any) -> str:
    """``"pandas"``, ``"duckdb"`` or ``"spark"``; a clear error for anything else."""
    module = type(table).__module__
    if module.startswith("pandas") and hasattr(table, "columns"):
        return PANDAS
    if module.startswith("duckdb") and hasattr(table, "arrow"):
        return DUCKDB
    if module.startswith("pyspark") and hasattr(table, "mapInPandas"):
        return SPARK
    raise TypeError(
        f"Expected a pandas DataFrame, a DuckDB relation or a Spark DataFrame, got {type(table).__name__}. "
        "Convert other tables with pandas.DataFrame(...) first."
    )


def column_names(table: Any) -> list[str]:
    table_kind(table)  # a clear error for a list, a dict, ...
    return list(table.columns)


def check_column(table: Any, column: str, what: str = "column") -> None:
    names = column_names(table)
    if column not in names:
        raise KeyError(f"The table has no {what} {column!r}; its columns are {names}.")


# ------------------------------------------------------------------------------------------------------ encoding
def resolve_encoder(model: Any = DEFAULT_MODEL, batch_size: int | None = None, progress: bool = True) -> Any:
    """Anything with ``encode(list[str]) -> (n, d)`` is used as is (a zoo model, an encoder, a matcher's scorer);
    a spec string (``baseline:minilm-l6``, an exported zoo folder, a recipe name) is loaded by the zoo's loader."""
    if not isinstance(model, (str, bytes, os.PathLike)) and callable(getattr(model, "encode", None)):
        return model
    from phrasezoo.encoders import load_encoder  # lazy: keeps the encoders (scipy) off 'import ...integrations.splink'

    return load_encoder(model, batch_size=batch_size, progress=False)


def _forget_strings(encoder: Any) -> None:
    """Zoo encoders keep every string they embed; a table of millions of rows must not stay in memory twice."""
    for attribute in ("_cache", "_token_cache", "_mention_cache"):
        cache = getattr(encoder, attribute, None)
        if isinstance(cache, dict):
            cache.clear()
    inner = getattr(encoder, "encoder", None)  # a matcher's scorer wraps a zoo encoder
    if inner is not None and inner is not encoder:
        _forget_strings(inner)


def is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def encode_texts(
    encoder: Any, texts: list[Any], chunk_size: int = 4096, progress: bool = True, desc: str = "embed"
) -> tuple[np.ndarray, np.ndarray]:
    """``(vectors float32 (n, d), present bool (n,))``: L2-normalised rows, zeros where the text is missing.

    Non-string cells (numbers, dates) are embedded as their ``str``; texts go to the encoder ``chunk_size`` at a
    time, so a long table shows progress and the encoder's own string cache never holds more than one chunk.
    """
    present = np.array([not is_missing(t) for t in texts], dtype=bool)
    rows = np.flatnonzero(present)
    vectors: np.ndarray | None = None
    with tqdm(total=len(rows), desc=desc, unit="row", disable=not progress_enabled(progress) or len(rows) < 2) as bar:
        for start in range(0, len(rows), chunk_size):
            chunk = rows[start : start + chunk_size]
            encoded = np.asarray(encoder.encode([str(texts[i]) for i in chunk]), dtype=np.float32)
            if encoded.ndim != 2 or encoded.shape[0] != len(chunk):
                raise RuntimeError(f"The encoder returned vectors of shape {encoded.shape} for {len(chunk)} texts.")
            norms = np.linalg.norm(encoded, axis=1, keepdims=True)
            encoded /= np.maximum(norms, 1e-12)
            if vectors is None:
                vectors = np.zeros((len(texts), encoded.shape[1]), dtype=np.float32)
            vectors[chunk] = encoded
            _forget_strings(encoder)
            bar.update(len(chunk))
    if vectors is None:
        raise ValueError("Every text in the column is missing (None, NaN or empty): nothing to embed.")
    return vectors, present


# --------------------------------------------------------------------------------------------- Arrow vectors
def vectors_to_arrow(vectors: np.ndarray, present: np.ndarray | None = None):
    """A ``fixed_size_list<float32>[dim]`` Arrow array (null where ``present`` is False)."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n, dim = vectors.shape
    mask = None if present is None or present.all() else pa.array(~present)
    return pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim, mask=mask)


def arrow_to_vectors(array) -> tuple[np.ndarray, np.ndarray]:
    """``(vectors (n, d) float32, present (n,))`` from an Arrow list column (fixed-size or not)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    present = ~np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    rows = array.to_pylist() if not pa.types.is_fixed_size_list(array.type) else None
    if rows is None:
        dim = array.type.list_size
        values = array.flatten() if array.null_count == 0 else array.fill_null([0.0] * dim).flatten()
        return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, dim), present
    dims = {len(r) for r in rows if r is not None}
    if len(dims) > 1:
        raise ValueError(f"The vector column holds rows of different lengths {sorted(dims)}.")
    dim = dims.pop() if dims else 0
    out = np.zeros((len(rows), dim), dtype=np.float32)
    for i, r in enumerate(rows):
        if r is not None:
            out[i] = r
    return out, present


# ---------------------------------------------------------------------------------------- per-backend columns
def duckdb_arrow(relation: Any):
    """A DuckDB relation as a ``pyarrow.Table`` (``to_arrow_table`` in duckdb >= 1.4, ``arrow`` before)."""
    fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
    table = fetch()
    return table.read_all() if hasattr(table, "read_all") else table


def read_texts(table: Any, column: str) -> list[Any]:
    """The values of a column of a pandas or DuckDB table, in row order."""
    kind = table_kind(table)
    if kind == PANDAS:
        return table[column].tolist()
    if kind == DUCKDB:
        return duckdb_arrow(table.select(column)).column(0).to_pylist()
    raise TypeError("read_texts reads pandas and DuckDB tables; Spark columns are encoded on the executors.")


def read_vectors(table: Any, column: str) -> tuple[np.ndarray, np.ndarray]:
    """``(vectors, present)`` of a vector column of a pandas or DuckDB table."""
    kind = table_kind(table)
    if kind == PANDAS:
        values = table[column].array
        arrow = getattr(values, "_pa_array", None)
        if arrow is None:
            arrow = pa.array([None if v is None else np.asarray(v, dtype=np.float32).tolist() for v in table[column]])
        return arrow_to_vectors(arrow)
    if kind == DUCKDB:
        return arrow_to_vectors(duckdb_arrow(table.select(column)).column(0))
    raise TypeError("read_vectors reads pandas and DuckDB tables.")


def with_column(table: Any, name: str, array, connection: Any = None) -> Any:
    """A copy of a pandas/DuckDB table with an Arrow ``array`` as column ``name`` (replaced when present)."""
    kind = table_kind(table)
    if kind == PANDAS:
        out = table.copy()
        out[name] = pd.Series(pd.arrays.ArrowExtensionArray(array), index=table.index)
        return out
    if kind == DUCKDB:
        import duckdb  # lazy: DuckDB tables only

        arrow = duckdb_arrow(table)
        if name in arrow.column_names:
            arrow = arrow.drop_columns([name])
        arrow = arrow.append_column(name, array)
        connection = connection or duckdb.default_connection()
        return connection.from_arrow(arrow)
    raise TypeError("with_column writes pandas and DuckDB tables.")

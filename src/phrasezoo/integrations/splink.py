"""Phrase embeddings inside splink 4 probabilistic record linkage, on DuckDB (the default) and on Spark.

Three pieces, each usable alone:

* :func:`add_embedding_column`: a fixed-size float32 vector column, encoded by any zoo model (default: the embedded
  all-MiniLM-L6-v2) in chunks with a progress bar; pandas, DuckDB relations and Spark DataFrames (encoded on the
  executors with ``mapInPandas``, one model per Python worker).
* :func:`cosine_comparison`: splink's own ``CosineSimilarityAtThresholds`` levels; on DuckDB it is splink's SQL
  (``array_cosine_similarity``) unchanged, on Spark, where splink 4 has no cosine function, the same levels with a
  Spark SQL cosine (``zip_with`` + ``aggregate``).
* :func:`add_neighbour_blocks` + :func:`neighbour_blocking_rule`: blocking on embedding neighbours. faiss finds each
  row's ``k`` nearest rows of the other table (or of the same table, deduplication); the row ids are written into
  an array column that splink explodes (``block_on(..., arrays_to_explode=...)``), so a pair is compared when one
  row is among the other's neighbours. Typos, reordered words and abbreviations that defeat ``substr`` or
  first-token blocking still land in one block.

```python
from splink import DuckDBAPI, Linker, SettingsCreator
import splink.comparison_library as cl
from phrasezoo.integrations.splink import add_embedding_column, add_neighbour_blocks, cosine_comparison, \
    neighbour_blocking_rule

left, right = (add_embedding_column(t, "name") for t in (left, right))
left, right = add_neighbour_blocks([left, right], "name_embedding", k=10)
settings = SettingsCreator(
    link_type="link_only",
    comparisons=[cl.JaroWinklerAtThresholds("name"), cosine_comparison("name_embedding")],
    blocking_rules_to_generate_predictions=[neighbour_blocking_rule()],
)
linker = Linker([left, right], settings, db_api=DuckDBAPI())
```

On Spark, pass Spark DataFrames and ``SparkAPI(spark_session=spark)``; :func:`local_spark` starts a local session
with splink's jar (Java 17 from Debian: ``apt-get install openjdk-17-jre-headless``).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

try:
    import splink.comparison_level_library as cll
    import splink.comparison_library as cl
    from splink import block_on
except ImportError as err:  # pragma: no cover - the extra is part of [dev]
    raise ImportError("phrasezoo.integrations.splink needs splink 4: pip install 'phrasezoo[splink]'") from err

from .splink_tables import (
    DEFAULT_MODEL,
    SPARK,
    check_column,
    encode_texts,
    is_missing,
    read_texts,
    read_vectors,
    resolve_encoder,
    table_kind,
    vectors_to_arrow,
    with_column,
)

DEFAULT_THRESHOLDS = (0.9, 0.8, 0.7)  # splink's CosineSimilarityAtThresholds default levels
NEIGHBOUR_COLUMN = "embedding_neighbours"
EXACT_SEARCH_LIMIT = 200_000  # flat (exact) faiss search up to this many indexed rows, HNSW beyond

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_THRESHOLDS",
    "NEIGHBOUR_COLUMN",
    "CosineSimilarityAtThresholds",
    "CosineSimilarityLevel",
    "add_embedding_column",
    "add_neighbour_blocks",
    "cosine_comparison",
    "local_spark",
    "neighbour_blocking_rule",
    "nearest_keys",
    "neighbour_keys",
]


# ------------------------------------------------------------------------------------------ embedding column
def add_embedding_column(
    table: Any,
    column: str,
    model: Any = DEFAULT_MODEL,
    output_column: str | None = None,
    *,
    chunk_size: int = 4096,
    batch_size: int | None = None,
    progress: bool = True,
    connection: Any = None,
) -> Any:
    """The table with a vector column ``output_column`` (default ``f"{column}_embedding"``) of ``column``'s texts.

    ``model``: a spec string (``baseline:minilm-l6``, an exported zoo folder such as ``outputs/pearl-mini``, a
    recipe name) or anything with ``encode(list[str])`` (a loaded zoo model, a ``phrasezoo.encoders`` encoder, a
    matcher's scorer). Vectors are L2-normalised float32, so cosine = dot product. Missing texts (None, NaN, empty)
    get a null vector; every input row is kept. pandas and DuckDB are encoded here, ``chunk_size`` rows at a time
    with a progress bar (``connection``: the DuckDB connection of the relation, default duckdb's default one);
    a Spark DataFrame is encoded lazily on the executors, each Python worker loading ``model`` once.
    """
    check_column(table, column)
    output_column = output_column or f"{column}_embedding"
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}.")
    if table_kind(table) == SPARK:
        return _spark_embedding_column(table, column, model, output_column, chunk_size, batch_size)
    encoder = resolve_encoder(model, batch_size=batch_size, progress=progress)
    texts = read_texts(table, column)
    if not texts:
        raise ValueError("The table is empty: nothing to embed.")
    vectors, present = encode_texts(encoder, texts, chunk_size=chunk_size, progress=progress, desc=f"embed {column}")
    return with_column(table, output_column, vectors_to_arrow(vectors, present), connection=connection)


_WORKER_ENCODERS: dict[str, Any] = {}


def _worker_encoder(model: Any, batch_size: int | None) -> Any:
    """One encoder per Spark Python worker process and model spec (loaded on first use)."""
    if not isinstance(model, (str, os.PathLike)):
        return resolve_encoder(model, batch_size=batch_size, progress=False)
    key = f"{os.fspath(model)}|{batch_size}"
    if key not in _WORKER_ENCODERS:
        _WORKER_ENCODERS[key] = resolve_encoder(os.fspath(model), batch_size=batch_size, progress=False)
    return _WORKER_ENCODERS[key]


def _spark_embedding_column(table, column: str, model: Any, output_column: str, chunk_size: int, batch_size):
    from pyspark.sql import types as T  # lazy: Spark tables only (pyspark is optional)

    fields = [f for f in table.schema.fields if f.name != output_column]
    schema = T.StructType(fields + [T.StructField(output_column, T.ArrayType(T.FloatType()), True)])
    names = [f.name for f in fields]

    def encode_partitions(frames):
        for frame in frames:
            frame = frame[names].copy()
            texts = frame[column].tolist()
            if any(not is_missing(t) for t in texts):
                encoder = _worker_encoder(model, batch_size)
                vectors, present = encode_texts(encoder, texts, chunk_size, progress=False)
                frame[output_column] = [v if ok else None for v, ok in zip(vectors, present)]
            else:  # an empty partition, or one whose texts are all missing
                frame[output_column] = [None] * len(frame)
            yield frame

    return table.select(*names).mapInPandas(encode_partitions, schema)


# ------------------------------------------------------------------------------------------------ comparisons
def _spark_cosine(left: str, right: str) -> str:
    """Spark SQL cosine of two array columns (Spark has no array_cosine_similarity)."""

    def dot(a: str, b: str) -> str:
        return f"aggregate(zip_with({a}, {b}, (x, y) -> x * y), 0D, (acc, v) -> acc + v)"

    return f"({dot(left, right)} / (sqrt({dot(left, left)}) * sqrt({dot(right, right)})))"


class CosineSimilarityLevel(cll.CosineSimilarityLevel):
    """splink's cosine level; on a dialect without a cosine function (Spark) the same test in plain SQL."""

    def create_sql(self, sql_dialect) -> str:
        try:
            return super().create_sql(sql_dialect)
        except NotImplementedError:
            if sql_dialect.sql_dialect_str != "spark":
                raise
        col = self.col_expression
        col.sql_dialect = sql_dialect
        return f"{_spark_cosine(col.name_l, col.name_r)} >= {self.similarity_threshold}"


class CosineSimilarityAtThresholds(cl.CosineSimilarityAtThresholds):
    """splink's ``CosineSimilarityAtThresholds`` (null level, one level per threshold, else), on Spark too."""

    def create_comparison_levels(self):
        return [
            cll.NullLevel(self.col_expression),
            *[CosineSimilarityLevel(self.col_expression, threshold) for threshold in self.thresholds],
            cll.ElseLevel(),
        ]


def cosine_comparison(column: str, thresholds: float | tuple[float, ...] | list[float] = DEFAULT_THRESHOLDS):
    """A splink comparison of a vector column: one level per cosine threshold (highest first), null, else."""
    values = [thresholds] if isinstance(thresholds, (int, float)) else list(thresholds)
    if not values or any(not isinstance(t, (int, float)) or not 0.0 <= t <= 1.0 for t in values):
        raise ValueError(f"thresholds must be numbers in [0, 1], got {thresholds!r}.")
    return CosineSimilarityAtThresholds(column, sorted(values, reverse=True))


# ----------------------------------------------------------------------------------------- neighbour blocking
def _knn(base: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """faiss inner-product top-k (exact up to EXACT_SEARCH_LIMIT rows, HNSW beyond); ids -1 where none."""
    import faiss  # lazy: keeps faiss off 'import phrasezoo.integrations.splink'

    k = min(k, len(base))
    if k == 0 or len(queries) == 0:
        return np.zeros((len(queries), 0), np.float32), np.zeros((len(queries), 0), np.int64)
    dim = base.shape[1]
    if len(base) <= EXACT_SEARCH_LIMIT:
        index = faiss.IndexFlatIP(dim)
    else:
        index = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction, index.hnsw.efSearch = 80, max(128, 2 * k)
    index.add(np.ascontiguousarray(base, dtype=np.float32))
    scores, ids = index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
    return scores, ids


def neighbour_keys(
    vectors: list[np.ndarray], present: list[np.ndarray] | None = None, k: int = 10, min_similarity: float | None = None
) -> list[list[list[int]]]:
    """Block keys per row of one table (deduplication) or two tables (linkage) from their vectors.

    Row ``i`` of table ``t`` owns the key ``offset[t] + i``. In a linkage each row also gets the keys of its ``k``
    nearest rows of the other table (both directions), so two rows share a key exactly when one is among the
    other's neighbours. In a deduplication a row gets the keys of its ``k`` nearest other rows, so rows also share
    a key through a common neighbour. Neighbours below ``min_similarity`` (cosine) are dropped; rows without a
    vector keep only their own key.
    """
    if len(vectors) not in (1, 2):
        raise ValueError(f"Neighbour blocking takes one table (dedupe) or two (link), got {len(vectors)}.")
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}.")
    present = present or [np.ones(len(v), dtype=bool) for v in vectors]
    offsets = np.cumsum([0] + [len(v) for v in vectors])[:-1]
    keys = [[[int(offsets[t]) + i] for i in range(len(v))] for t, v in enumerate(vectors)]
    pairs = [(0, 0)] if len(vectors) == 1 else [(0, 1), (1, 0)]
    for query_table, base_table in pairs:
        base_rows = np.flatnonzero(present[base_table])
        query_rows = np.flatnonzero(present[query_table])
        extra = 1 if query_table == base_table else 0  # a row finds itself first
        scores, ids = _knn(vectors[base_table][base_rows], vectors[query_table][query_rows], k + extra)
        for row, row_scores, row_ids in zip(query_rows, scores, ids):
            own = keys[query_table][row]
            for score, found in zip(row_scores, row_ids):
                if found < 0 or (min_similarity is not None and score < min_similarity):
                    continue
                key = int(offsets[base_table]) + int(base_rows[found])
                if key != own[0] and len(own) <= k:
                    own.append(key)
    return keys


def add_neighbour_blocks(
    tables: list[Any],
    embedding_column: str,
    k: int = 10,
    output_column: str = NEIGHBOUR_COLUMN,
    *,
    min_similarity: float | None = None,
    nearest_column: str | None = None,
    unique_id_column: str = "unique_id",
    connection: Any = None,
) -> list[Any]:
    """The tables with an integer-array column of embedding-neighbour block keys (see :func:`neighbour_keys`).

    One table: deduplication; two: linkage (``k`` neighbours in each direction). Block on it with
    :func:`neighbour_blocking_rule`. splink trains EM only on blocking rules that explode nothing, so
    ``nearest_column`` adds a plain integer key for training (see :func:`nearest_keys`): ``block_on(nearest_column)``
    pairs every row of the second table with its nearest row of the first. pandas and DuckDB tables are searched here with faiss. Spark DataFrames send
    ``unique_id_column`` and the vectors to the driver (about ``rows x dim x 4`` bytes: 1.5 GB for a million
    384-d rows), are searched there, and get the keys back by a join on ``unique_id_column``.
    """
    if not isinstance(tables, (list, tuple)) or not tables:
        raise ValueError("tables must be a list of one table (dedupe) or two tables (link).")
    for table in tables:
        check_column(table, embedding_column, what="embedding column (add it with add_embedding_column)")
    kinds = {table_kind(t) for t in tables}
    if len(kinds) > 1:
        raise TypeError(f"All tables must be of one kind, got {sorted(kinds)}.")
    if kinds == {SPARK}:
        return _spark_neighbour_blocks(list(tables), embedding_column, k, output_column, min_similarity,
                                       nearest_column, unique_id_column)  # fmt: skip
    read = [read_vectors(t, embedding_column) for t in tables]
    keys = neighbour_keys([v for v, _ in read], [p for _, p in read], k=k, min_similarity=min_similarity)
    out = [with_column(t, output_column, _keys_to_arrow(rows), connection=connection) for t, rows in zip(tables, keys)]
    if nearest_column:
        out = [with_column(t, nearest_column, pa.array(rows, type=pa.int64()), connection=connection)
               for t, rows in zip(out, nearest_keys(keys))]  # fmt: skip
    return out


def nearest_keys(keys: list[list[list[int]]]) -> list[list[int]]:
    """One integer key per row from :func:`neighbour_keys`' lists, for EM training blocks.

    Linkage: a row of the first table keeps its own key, a row of the second gets the key of its nearest
    first-table row (its own when it has none), so equal keys pair each second-table row with its nearest match.
    Deduplication: the smaller of a row's own key and its nearest neighbour's (mutual nearest rows share it).
    """
    if len(keys) == 1:
        return [[min(row[:2]) for row in keys[0]]]
    return [[row[0] for row in keys[0]], [row[1] if len(row) > 1 else row[0] for row in keys[1]]]


def _keys_to_arrow(rows: list[list[int]]):
    return pa.array(rows, type=pa.list_(pa.int64()))


def _spark_neighbour_blocks(
    tables, embedding_column, k, output_column, min_similarity, nearest_column, unique_id_column
):
    spark = tables[0].sparkSession
    read, ids = [], []
    for table in tables:
        check_column(table, unique_id_column, what="unique id column")
        frame = table.select(unique_id_column, embedding_column).toPandas()
        if frame[unique_id_column].duplicated().any():
            raise ValueError(f"{unique_id_column!r} has duplicate values; neighbour keys are joined back on it.")
        ids.append(frame[unique_id_column])
        read.append(read_vectors(frame, embedding_column))
    keys = neighbour_keys([v for v, _ in read], [p for _, p in read], k=k, min_similarity=min_similarity)
    nearest = nearest_keys(keys) if nearest_column else [None] * len(keys)
    out = []
    for table, table_ids, rows, near in zip(tables, ids, keys, nearest):
        frame = pd.DataFrame({unique_id_column: table_ids.to_numpy(), output_column: rows})
        if nearest_column:
            frame[nearest_column] = near
        schema = _spark_keys_schema(table, unique_id_column, output_column, nearest_column)
        blocks = spark.createDataFrame(frame, schema=schema)
        drop = [c for c in (output_column, nearest_column) if c]
        out.append(table.drop(*drop).join(blocks, on=unique_id_column, how="left"))
    return out


def _spark_keys_schema(table, unique_id_column: str, output_column: str, nearest_column: str | None):
    from pyspark.sql import types as T  # lazy: Spark tables only (pyspark is optional)

    id_type = table.schema[unique_id_column].dataType
    fields = [T.StructField(unique_id_column, id_type, False), T.StructField(output_column, T.ArrayType(T.LongType()))]
    if nearest_column:
        fields.append(T.StructField(nearest_column, T.LongType()))
    return T.StructType(fields)


def neighbour_blocking_rule(output_column: str = NEIGHBOUR_COLUMN):
    """splink's ``block_on`` over the exploded neighbour-key column (for predictions; splink does not train EM on
    exploding rules, so train with another blocking rule)."""
    return block_on(output_column, arrays_to_explode=[output_column])


# -------------------------------------------------------------------------------------------------- local Spark
def local_spark(cores: int = 2, shuffle_partitions: int = 2, driver_memory: str = "2g", app_name: str = "phrasezoo"):
    """A local-mode SparkSession ready for splink: splink's jar (jaro_winkler and friends), this Python for the
    workers, Arrow transfers, no web UI. Java 17 must be installed (Debian: ``openjdk-17-jre-headless``)."""
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        raise RuntimeError(
            "Spark needs Java 17: `apt-get install openjdk-17-jre-headless` (scripts/bootstrap.sh does it as root), "
            "or set JAVA_HOME."
        )
    try:
        from pyspark.sql import SparkSession  # lazy: pyspark is optional
    except ImportError as err:
        raise ImportError("Spark needs pyspark: pip install 'phrasezoo[splink]'") from err
    from splink.backends.spark import similarity_jar_location  # lazy: imports pyspark

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app_name)
        .config("spark.jars", similarity_jar_location())
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.default.parallelism", str(cores))
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
    )
    spark = builder.getOrCreate()
    if not spark.sparkContext.getCheckpointDir():  # splink's SparkAPI checkpoints to break long lineages
        folder = tempfile.mkdtemp(prefix="phrasezoo-spark-checkpoints-")
        atexit.register(shutil.rmtree, folder, True)  # Spark leaves its checkpoint folder behind; this process owns it
        spark.sparkContext.setCheckpointDir(folder)
    return spark

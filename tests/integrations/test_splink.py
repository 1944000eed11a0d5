"""phrasezoo.integrations.splink on DuckDB (the embedded default) and pandas: embedding column, cosine comparison,
neighbour blocking, and a splink linkage of real names that finds the true pairs."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from phrasezoo.integrations.splink import (
    add_embedding_column,
    add_neighbour_blocks,
    cosine_comparison,
    neighbour_blocking_rule,
    neighbour_keys,
)
from phrasezoo.integrations.splink_tables import read_vectors

# Real entity names (AutoFJ-style) and a variant of each as another table would write it.
LEFT = ["The New York Times", "International Business Machines", "Massachusetts Institute of Technology",
        "United Nations Educational, Scientific and Cultural Organization", "Deutsche Bahn", "Real Madrid CF",
        "Bank of America", "University of Cambridge", "Royal Dutch Shell", "Los Angeles Lakers"]  # fmt: skip
RIGHT = ["New York Times", "IBM Corporation", "MIT (Massachusetts Inst. of Technology)", "UNESCO",
         "Deutsche Bahn AG", "Real Madrid", "Bank of America Corp.", "Cambridge University", "Shell plc",
         "LA Lakers"]  # fmt: skip


class CountingEncoder:
    """A tiny deterministic encoder (character-trigram hashing) that records its calls."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.calls: list[int] = []

    def encode(self, texts):
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f"  {text.lower()}  "
            for i in range(len(padded) - 2):
                out[row, hash(padded[i : i + 3]) % self.dim] += 1.0
        return out


@pytest.fixture(scope="module")
def tables():
    """The two tables with MiniLM (the embedded default) vectors, encoded once for the module."""
    left = pd.DataFrame({"unique_id": range(len(LEFT)), "name": LEFT})
    right = pd.DataFrame({"unique_id": range(len(RIGHT)), "name": RIGHT})
    return add_embedding_column(left, "name", progress=False), add_embedding_column(right, "name", progress=False)


def test_embedding_column_is_a_fixed_size_float_array(tables):
    left, _ = tables
    assert str(left["name_embedding"].dtype).startswith("fixed_size_list<item: float>[384]")
    vectors, present = read_vectors(left, "name_embedding")
    assert vectors.shape == (len(LEFT), 384) and present.all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert list(left.columns) == ["unique_id", "name", "name_embedding"]  # input columns kept, in order


def test_embedding_is_chunked_and_missing_texts_get_null_vectors():
    encoder = CountingEncoder()
    table = pd.DataFrame({"name": ["alpha", None, float("nan"), "", "beta", 12345, "gamma"]})
    out = add_embedding_column(table, "name", model=encoder, chunk_size=2, output_column="v", progress=False)
    assert encoder.calls == [2, 2]  # 4 present texts (12345 embedded as "12345"), in chunks of 2
    vectors, present = read_vectors(out, "v")
    assert present.tolist() == [True, False, False, False, True, True, True]
    assert len(out) == len(table) and out["v"].isna().sum() == 3


def test_duckdb_relation_in_duckdb_relation_out():
    connection = duckdb.connect()
    relation = connection.sql("select * from (values (1, 'Deutsche Bahn'), (2, 'Bank of America')) t(id, name)")
    out = add_embedding_column(relation, "name", model=CountingEncoder(16), connection=connection, progress=False)
    assert out.columns == ["id", "name", "name_embedding"]
    assert str(out.types[-1]) == "FLOAT[16]"  # DuckDB's fixed-size array: what array_cosine_similarity takes
    cosine = connection.sql("select array_cosine_similarity(name_embedding, name_embedding) from out").fetchall()
    assert [round(c[0], 5) for c in cosine] == [1.0, 1.0]


def test_bad_input_gets_clear_errors():
    table = pd.DataFrame({"name": ["a"]})
    with pytest.raises(KeyError, match="no column 'title'"):
        add_embedding_column(table, "title", model=CountingEncoder())
    with pytest.raises(TypeError, match="pandas DataFrame, a DuckDB relation or a Spark DataFrame"):
        add_embedding_column([["a"]], "name")
    with pytest.raises(ValueError, match="Every text in the column is missing"):
        add_embedding_column(pd.DataFrame({"name": [None, ""]}), "name", model=CountingEncoder(), progress=False)
    with pytest.raises(ValueError, match="thresholds must be numbers in"):
        cosine_comparison("v", [1.5])
    with pytest.raises(KeyError, match="add it with add_embedding_column"):
        add_neighbour_blocks([table], "name_embedding")
    with pytest.raises(ValueError, match="one table \\(dedupe\\) or two"):
        neighbour_keys([np.eye(2)] * 3)


def test_neighbour_keys_link_both_directions():
    left = np.eye(4, dtype=np.float32)
    right = np.eye(4, dtype=np.float32)[[2, 0]]  # right 0 ~ left 2, right 1 ~ left 0
    keys = neighbour_keys([left, right], k=1)
    assert keys[1] == [[4, 2], [5, 0]]  # own key (offset 4), then the nearest left row
    assert keys[0][2] == [2, 4] and keys[0][0] == [0, 5]


def test_neighbour_keys_dedupe_skip_self_and_low_similarity():
    vectors = np.array([[1, 0], [0.99, 0.141], [0, 1]], dtype=np.float32)
    keys = neighbour_keys([vectors], k=1, min_similarity=0.5)
    assert keys == [[[0, 1], [1, 0], [2]]]  # row 2's nearest other row scores 0.14 < 0.5


def test_cosine_comparison_is_splinks_own_sql_on_duckdb():
    import splink.comparison_library as cl

    ours = cosine_comparison("v", [0.7, 0.9]).get_comparison("duckdb").as_dict()
    theirs = cl.CosineSimilarityAtThresholds("v", [0.9, 0.7]).get_comparison("duckdb").as_dict()
    assert ours == theirs
    assert "array_cosine_similarity" in ours["comparison_levels"][1]["sql_condition"]


def _best_matches(left, right, comparisons) -> tuple[int, int]:
    """(correct best matches, compared pairs) of a splink DuckDB linkage blocked on embedding neighbours."""
    from splink import DuckDBAPI, Linker, SettingsCreator

    settings = SettingsCreator(
        link_type="link_only",
        comparisons=comparisons,
        blocking_rules_to_generate_predictions=[neighbour_blocking_rule()],
        probability_two_random_records_match=1 / len(LEFT),
    )
    linker = Linker([left, right], settings, db_api=DuckDBAPI())
    linker.training.estimate_u_using_random_sampling(max_pairs=1e4, seed=1)
    predictions = linker.inference.predict().as_pandas_dataframe()
    best = predictions.sort_values("match_weight", ascending=False).drop_duplicates("unique_id_r")
    found = dict(zip(best["unique_id_r"], best["unique_id_l"]))
    return sum(found.get(i) == i for i in range(len(RIGHT))), len(predictions)


def test_splink_linkage_on_duckdb_finds_more_true_pairs_with_the_cosine_comparison(tables):
    import splink.comparison_library as cl

    left, right = add_neighbour_blocks(list(tables), "name_embedding", k=2)
    keys_left, keys_right = left["embedding_neighbours"].tolist(), right["embedding_neighbours"].tolist()
    assert sum(i in keys_right[i] for i in range(len(RIGHT))) >= 9  # the neighbour blocks hold the true pairs
    assert all(len(k) <= 3 for k in keys_left + keys_right)
    with_cosine, compared = _best_matches(
        left, right, [cosine_comparison("name_embedding", [0.8, 0.6]), cl.JaroWinklerAtThresholds("name", [0.9])]
    )
    strings_only, _ = _best_matches(left, right, [cl.JaroWinklerAtThresholds("name", [0.9])])
    assert compared <= len(LEFT) * 2 * 2  # only neighbour pairs were compared
    assert with_cosine >= 7 and with_cosine > strings_only, (with_cosine, strings_only)


def test_local_spark_without_java_says_how_to_install_it(monkeypatch):
    import phrasezoo.integrations.splink as integration

    monkeypatch.setattr(integration.shutil, "which", lambda name: None)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(RuntimeError, match="apt-get install openjdk-17-jre-headless"):
        integration.local_spark()

"""The suite's metrics as local ``evaluate`` modules (:mod:`phrasezoo.evaluation.metrics`) give exactly the numbers of
the implementation they replaced, on real benchmark files (whole files or real slices) scored with a deterministic
character-trigram encoder: the ``_old_*`` functions below are that implementation (main at 04176d1), frozen here."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.stats import pearsonr, spearmanr
from sklearn.cluster import KMeans
from sklearn.metrics import normalized_mutual_info_score

from phrasezoo.encoders import Encoder
from phrasezoo.evaluation.metrics import METRICS, compute, load_metric, metric_path
from phrasezoo.evaluation.tasks import TaskContext, get_task
from phrasezoo.evaluation.tasks.autofj import autofj_names, read_autofj
from phrasezoo.evaluation.tasks.clustering import kmeans_nmi, read_ner_jsonl
from phrasezoo.evaluation.tasks.context_clustering import cluster_scores
from phrasezoo.evaluation.tasks.retrieval import read_pairs_tsv, top1_accuracy
from phrasezoo.evaluation.tasks.similarity import multiple_choice_accuracy, read_bird, read_turney
from phrasezoo.evaluation.tasks.stsb_context import correlations, read_stsb_context

pytestmark = pytest.mark.usefixtures("one_thread")


class TrigramEncoder(Encoder):
    """Hashed character trigrams (512 buckets): deterministic, fast, and far from chance on these benchmarks."""

    def __init__(self):
        super().__init__(name="trigrams", revision="test", progress=False)

    def _encode(self, texts: list[str]) -> np.ndarray:
        rows = np.zeros((len(texts), 512), dtype=np.float32)
        for i, text in enumerate(texts):
            padded = f"  {text.lower()} "
            for j in range(len(padded) - 2):
                rows[i, int.from_bytes(hashlib.md5(padded[j : j + 3].encode()).digest()[:4], "little") % 512] += 1
        return rows


@pytest.fixture(scope="module")
def encoder() -> TrigramEncoder:
    return TrigramEncoder()


# --------------------------------------------------------------------------- the replaced implementation (04176d1)
def _old_multiple_choice_accuracy(encoder, data) -> float:
    k = len(data.candidates[0])
    left = [q for q in data.queries for _ in range(k)]
    right = [c for cands in data.candidates for c in cands]
    scores = encoder.paired_similarity(left, right).reshape(len(data.queries), k)
    top = scores == scores.max(axis=1, keepdims=True)
    return float(np.mean(top[:, 0] / top.sum(axis=1)))


def _old_hungarian_accuracy(labels, clusters) -> float:
    label_ids = {label: i for i, label in enumerate(dict.fromkeys(labels))}
    cluster_ids = {cluster: i for i, cluster in enumerate(dict.fromkeys(clusters))}
    counts = np.zeros((len(cluster_ids), len(label_ids)), dtype=np.int64)
    for label, cluster in zip(labels, clusters):
        counts[cluster_ids[cluster], label_ids[label]] += 1
    rows, cols = linear_sum_assignment(counts, maximize=True)
    return float(counts[rows, cols].sum() / max(1, len(labels)))


def _old_autofj(encoder, tables) -> tuple[float, dict[str, float]]:
    per_dataset = {}
    for table in tables:
        queries = table.queries()
        best = encoder.nearest(queries, table.left)
        correct = [table.left[i] == table.gold[q] for i, q in zip(best, queries)]
        per_dataset[table.name] = round(float(np.mean(correct)), 6)
    return float(np.mean(list(per_dataset.values()))), per_dataset


# --------------------------------------------------------------------------- same numbers, exactly
def test_turney_tie_split_accuracy(encoder, benchmarks_dir):
    data = read_turney(benchmarks_dir / "turney" / "turney.txt")
    new = multiple_choice_accuracy(encoder, data)
    assert new == _old_multiple_choice_accuracy(encoder, data)
    assert 0.3 < new < 0.9  # a real score, not a degenerate one


def test_bird_pearson(encoder, benchmarks_dir):
    ctx = TaskContext(benchmarks_dir=benchmarks_dir, progress=False)
    data = read_bird(benchmarks_dir / "bird" / "bird.tsv")
    [result] = get_task("bird").score(encoder, data, ctx)
    sims = encoder.paired_similarity(data.left, data.right)
    old = float(pearsonr(sims.astype(np.float64), np.asarray(data.scores, dtype=np.float64)).statistic)
    assert result.value == old and result.n == 3345


def test_stsb_context_pearson_and_spearman(encoder, benchmarks_dir):
    data = read_stsb_context(benchmarks_dir / "stsb_context" / "sts-test-sentences-clean.tsv")
    pred = encoder.paired_similarity(data.lines, data.passages)
    gold = np.asarray(data.gold, dtype=np.float64)
    old = (
        float(pearsonr(pred.astype(np.float64), gold).statistic),
        float(spearmanr(pred.astype(np.float64), gold).statistic),
    )
    assert correlations(pred, data.gold) == old


@pytest.mark.parametrize("folder,types", [("conll2003", ["PER", "LOC", "ORG"]), ("bc5cdr", ["Chemical", "Disease"])])
def test_clustering_nmi_and_hungarian_accuracy(encoder, benchmarks_dir, folder, types):
    data = read_ner_jsonl(benchmarks_dir / folder / "test.jsonl", types)
    phrases, labels = data.phrases[:1500], data.labels[:1500]  # a real slice: KMeans on all mentions is slower
    vectors = encoder.encode(phrases)
    clusters = KMeans(n_clusters=len(types), random_state=0, n_init=10).fit_predict(vectors)
    old_nmi = float(normalized_mutual_info_score(labels, clusters))
    assert kmeans_nmi(vectors, labels, len(types), seed=0) == old_nmi
    assert cluster_scores(vectors, labels, len(types), seed=0) == {
        "acc": _old_hungarian_accuracy(labels, clusters.tolist()),
        "nmi": old_nmi,
    }


@pytest.mark.parametrize("folder", ["yago", "umls"])
def test_retrieval_top1_accuracy(encoder, benchmarks_dir, folder):
    data = read_pairs_tsv(next((benchmarks_dir / folder).glob("*.tsv")))
    data.mentions, data.gold = data.mentions[:800], data.gold[:800]
    kb = data.knowledge_base()
    predicted = np.asarray(kb, dtype=object)[encoder.nearest(data.mentions, kb)]
    old = float(np.mean(predicted == np.asarray(data.gold, dtype=object)))
    assert top1_accuracy(encoder, data) == (old, len(kb))


def test_autofj_fuzzy_join_accuracy(encoder):
    tables = read_autofj(autofj_names("dev")[:4])
    [result] = get_task("autofj_dev").score(encoder, tables, TaskContext(progress=False))
    old_mean, old_per_dataset = _old_autofj(encoder, tables)
    assert result.value == old_mean and result.details["per_dataset"] == old_per_dataset


# --------------------------------------------------------------------------- the modules themselves
def test_every_metric_is_a_local_evaluate_module():
    import evaluate

    for name in METRICS:
        path = metric_path(name)
        assert path.is_file() and path.name == f"{name}.py" and path.with_name("metric_base.py").is_file()
        module = load_metric(name)
        assert isinstance(module, evaluate.Metric) and module.name == name


def test_tie_split_accuracy_splits_exact_ties():
    scores = [[1.0, 1.0, 0.0], [0.5, 0.2, 0.1], [0.0, 0.0, 0.0], [0.1, 0.9, 0.0]]
    assert compute("tie_split_accuracy", predictions=scores, references=[0, 0, 0, 0])["accuracy"] == pytest.approx(
        (1 / 2 + 1 + 1 / 3 + 0) / 4
    )


def test_fuzzy_join_accuracy_is_a_mean_over_datasets():
    result = compute("fuzzy_join_accuracy", predictions=["a", "x", "c"], references=["a", "b", "c"],
                     datasets=["one", "one", "two"], decimals=None)  # fmt: skip
    assert result == {"accuracy": 0.75, "per_dataset": {"one": 0.5, "two": 1.0}}


def test_unknown_metric_names_the_known_ones():
    with pytest.raises(ValueError, match="tie_split_accuracy"):
        metric_path("f1")

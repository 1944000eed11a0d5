"""Codebook evaluation tasks: scorers, controls, tie handling, reconstruction, summarisation and harness wiring."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import phrasezoo.methods.codebook.tasks  # noqa: F401  (registers the tasks)
from phrasezoo.evaluation import evaluate
from phrasezoo.evaluation.tasks.base import TaskContext
from phrasezoo.methods.codebook import data as cb
from phrasezoo.methods.codebook.build import build_model
from phrasezoo.methods.codebook.tasks import phrases as P
from phrasezoo.methods.codebook.tasks import reconstruction as R
from phrasezoo.methods.codebook.tasks import sts as S
from phrasezoo.methods.codebook.tasks import summarization as Z
from phrasezoo.methods.codebook.tasks.common import facet_importance, text_words, unit, word_space, word_tokens

from .test_data import CORPUS, GUARDED

TINY = dict(d_model=16, n_heads=2, ffn_dim=32, encoder_layers=1, decoder_layers=1, n_facets=3)


@pytest.fixture(scope="module")
def corpus_path(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n".join(CORPUS * 2) + "\n", encoding="utf8")
    return str(path)


@pytest.fixture(scope="module")
def data_options(corpus_path, benchmarks_dir) -> dict:
    return dict(kind="sentence", corpus=corpus_path, benchmarks_dir=str(benchmarks_dir), guard_benchmarks=GUARDED,
                valid_percent=50.0, cache=False)  # fmt: skip


@pytest.fixture(scope="module")
def model(data_options):
    built = cb.build_codebook_data(**data_options, progress=False)
    return build_model(built.vocabulary, "glove-6b-50d", "sentence", seed=0, **TINY).eval()


@pytest.fixture(scope="module")
def heldout(data_options):
    """The held-out examples the method provides to the reconstruction task, for a recipe with ``data_options``."""
    from types import SimpleNamespace

    return cb.heldout_examples(SimpleNamespace(data=data_options))


@pytest.fixture()
def ctx(benchmarks_dir, heldout) -> TaskContext:
    return TaskContext(benchmarks_dir=benchmarks_dir, progress=False, options={"heldout_examples": heldout})


def test_eq6_weights_match_the_models_word_importance(model):
    text = "Fishing boats unloaded fresh cod every morning."
    space = word_space()
    words = text_words(text, space)
    ours = facet_importance(space.rows(words), model.facets([text])[0])
    theirs = {w["word"].lower(): w["weight"] for w in model.word_importance(text) if w["known"]}
    for word, weight in zip(words, ours):
        if word in theirs:
            assert weight == pytest.approx(theirs[word], abs=1e-4)


def test_sts_subset_rows_controls_and_intervals(model, ctx, monkeypatch):
    monkeypatch.setattr(S, "reference_sentences", lambda n=0, seed=0: CORPUS[:4] + ["Rain fell.", "Boats sailed."])
    full = S.FacetsStsSubset().load(ctx)
    assert len(full.gold) == 1024 and S.low_half(full.gold).sum() == 494
    data = S.StsPairs(full.left[:120], full.right[:120], full.gold[:120])
    results = {r.metric: r for r in S.FacetsStsSubset().score(_Encoder(model), data, ctx)}
    assert set(results) == set(S.FacetsStsSubset().metrics())
    for r in results.values():
        assert -1 <= r.value <= 1 and r.details["ci95"][0] <= r.value + 1e-9
    ours = results["pearson_all:prob_avg:ours"].details
    assert "minus_none_ci95" in ours and "minus_centroid_ci95" in ours
    # the GloVe rows do not depend on the model: the plain average of the first 120 pairs, recomputed here
    left, right = P.glove_average(data.left), P.glove_average(data.right)
    expected = np.corrcoef(np.einsum("ij,ij->i", left, right), data.gold)[0, 1]
    assert results["pearson_all:avg:none"].value == pytest.approx(expected, abs=1e-5)


def test_weightings_change_only_what_they_claim():
    space = word_space()
    text = "the old harbour was busy"
    words = text_words(text, space)
    facets = unit(space.rows(["harbour"]))[None]  # one facet on "harbour"
    plain = S.sentence_embeddings([text], "avg", "none", None)[0]
    ours = S.sentence_embeddings([text], "avg", "ours", facets)[0]
    vectors = space.rows(words)
    assert np.allclose(plain, vectors.mean(0), atol=1e-6)
    # eq. 6 puts the most weight on the facet's own word: the weighted average moves towards "harbour"
    harbour = space.rows(["harbour"])[0]
    assert unit(ours) @ harbour > unit(plain) @ harbour


def test_turney_ties_and_reversed_candidates():
    scores = np.asarray([[0.5, 0.5, 0.1], [0.9, 0.2, 0.1], [0.1, 0.3, 0.2]])
    assert P.split_tie_accuracy(scores) == pytest.approx((0.5 + 1 + 0) / 3)
    data = P.MultipleChoiceData(["double star"], [["binary", "dual", "lumen", "neutralism", "keratoplasty"]])
    left, right, width = P.turney_candidates(data, reversed_too=True)
    assert width == 10 and left[:5] == ["double star"] * 5 and left[5:] == ["star double"] * 5
    # a bag-of-words scorer ties each pair with its reversed twin: Turney(10) is half of Turney(5) for GloVe Avg
    sims = P.pair_scores(None, "glove_avg", left, right).reshape(1, 10)
    assert np.allclose(sims[0, :5], sims[0, 5:], atol=1e-6)


def test_reconstruction_finds_the_held_out_examples_through_the_registry(monkeypatch):
    """Without examples in the options, the task reads them from the recipe's method (``Method.load("data")``)."""
    from types import SimpleNamespace

    recipe = SimpleNamespace(method="codebook", name="codebook-tiny")
    monkeypatch.setattr(R, "load_recipe", lambda name: recipe)
    calls = []
    monkeypatch.setattr(cb, "heldout_examples", lambda *args, **kwargs: calls.append((args, kwargs)) or "examples")
    assert R.heldout_examples(SimpleNamespace(name="codebook-tiny"), TaskContext(seed=3)) == "examples"
    assert calls == [((recipe,), {"max_examples": R.MAX_EXAMPLES, "seed": 3})]


def test_reconstruction_on_held_out_documents(model, ctx, heldout, data_options):
    assert heldout.texts and len(heldout.texts) == len(heldout.targets)
    tagged = cb.tag_corpus(data_options["corpus"], valid_percent=50.0, cache=False, progress=False)
    valid_texts = {t for t, s in zip(tagged["text"][:], tagged["split"][:]) if s == "valid"}
    assert set(heldout.texts) <= valid_texts  # only held-out documents
    results = {r.metric: r.value for r in R.FacetsReconstruction().score(_Encoder(model), None, ctx)}
    assert set(results) == set(R.FacetsReconstruction().metrics())
    for source in R.FACET_SOURCES:
        assert 0 <= results[f"er_pos:{source}"] <= 1.0 + 1e-5  # M = 0 gives 1 for unit targets
        margin = results[f"er_neg:{source}"] - results[f"er_pos:{source}"]
        assert results[f"margin:{source}"] == pytest.approx(margin, abs=1e-6)
    # a model whose facets ARE the held-out targets reconstructs them almost perfectly
    oracle = _OracleFacets(model, heldout)
    perfect = {r.metric: r.value for r in R.FacetsReconstruction().score(_Encoder(oracle), None, ctx)}
    assert perfect["er_pos:model"] < 0.1 < perfect["er_neg:model"]


def test_greedy_cover_prefers_new_facets_and_rouge_counts():
    doc = unit(np.eye(4, dtype=np.float32))
    weights = np.ones(4)
    candidates = [doc[[0, 1]], doc[[0]], doc[[2, 3]], doc[[1]]]
    assert Z.greedy_cover(doc, weights, candidates, n=2) == [0, 2]
    # length normalisation favours short sentences with the same gain per word
    assert Z.greedy_cover(doc, weights, candidates, n=1, length_normalise=[4, 1, 4, 1]) in ([1], [3])
    from rouge_score import rouge_scorer

    score = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True).score("boats sailed", "boat sailing")
    assert score["rouge1"].fmeasure == pytest.approx(1.0)  # stemming on, as in the paper's pythonrouge setting


def test_harness_runs_codebook_tasks_and_skips_other_models(model, tmp_path: Path):
    doc = evaluate(model, tasks="facets_facet_words", progress=False, output=tmp_path / "r.json")
    (item,) = doc["results"]
    facets = item["details"]["facets"]["civil order"]
    assert len(facets) == 3 and all(len(f) == 3 for f in facets)
    skipped = evaluate("baseline:char-jaccard", tasks="facets_facet_words,facets_bird", progress=False)
    assert all(r["value"] is None and "facets" in r["notes"] for r in skipped["results"])


class _Encoder:
    """The minimum the codebook tasks read from an encoder."""

    def __init__(self, model):
        self.model = model
        self.name = "tiny-codebook"


class _OracleFacets:
    """Wraps a model; ``facets(normalize=False)`` returns, per held-out text, its own target vectors (K slots)."""

    def __init__(self, model, heldout):
        self.by_text = dict(zip(heldout.texts, heldout.targets))
        self.config = model.config
        self.model = model

    def facets(self, texts, normalize=True, batch_size=0):
        space, k = word_space(), 30
        out = np.zeros((len(texts), k, 50), dtype=np.float32)
        for i, text in enumerate(texts):
            words = [w for w in self.by_text[text] if space.has(w)][:k]
            out[i, : len(words)] = space.rows(words)
        return out

    def nnsc(self, *args, **kwargs):
        return self.model.nnsc(*args, **kwargs)


def test_evaluation_reads_text_like_the_training_data():
    """The tasks' word tokens and summarisation articles are the data builder's (kept apart by the import ladder)."""
    text = "Don't stop: the U.S. \ufb01nancial economy grew 3.5% in 2019!"
    assert word_tokens(text) == cb.word_tokens(text)
    assert [a.text for a in Z.summarization_articles()] == [a.text for a in cb.summarization_articles()]


def test_report_states_where_claims_hold_and_fail(tmp_path: Path):
    """The README section is generated from results files and says plainly when a claim fails."""
    from phrasezoo.core.files import write_readme_table
    from phrasezoo.evaluation.results import TaskResult as Result
    from phrasezoo.evaluation.results import make_document, write_results
    from phrasezoo.methods.codebook import report

    def doc(name, entries):
        rows = [Result(task=t, metric=m, value=v, n=10, details=d) for t, m, v, d in entries]
        write_results(make_document(name, None, rows), tmp_path / f"{name}.json")

    ci = {"ci95": [0.1, 0.2], "minus_none_ci95": [0.01, 0.05], "minus_centroid_ci95": [-0.01, 0.03]}
    sts = [("facets_stsb_subset", f"pearson_{h}:{s}:{w}", v, ci if w == "ours" else {"ci95": [0, 1]})
           for h in ("all", "low") for s in ("avg", "prob_avg", "sif")
           for w, v in (("none", 0.30), ("centroid", 0.31), ("ours", 0.35))]  # fmt: skip
    recon = [("facets_reconstruction", f"er_pos:{s}", v, None)
             for s, v in (("model", 0.6), ("input_words", 0.7), ("input_mean", 0.8), ("frequent_targets", 0.5))]  # fmt: skip
    doc("s10", sts + recon)
    doc("s1", [("facets_reconstruction", "er_pos:model", 0.65, None)])
    phr = [("facets_turney", "turney5:glove_avg", 0.26, None), ("facets_turney", "turney5:emb", 0.30, None),
           ("facets_bird", "pearson:glove_avg", 0.45, None), ("facets_bird", "pearson:emb", 0.34, None)]  # fmt: skip
    doc("p10", phr)
    doc("p1", phr)
    report.RECIPES.update(sentence=("s10", "s1"), phrase=("p10", "p1"))
    section = report.facets_section(tmp_path)
    assert "Our a K = 10 raises Avg (All) beyond no weights and the centroid control: **holds**" in section
    assert "not significant" in section  # the interval vs the centroid control includes 0
    assert "below K = 1 **holds**, below input words **holds**" in section
    assert "below frequent targets **fails**" in section  # the 10 most frequent target words reconstruct better
    assert "Turney(5) **holds**" in section and "BiRD **fails**" in section and "Turney(10) not measured" in section
    assert "| Avg | Our a, K = 10 | 35.0 | 35.0 | 50.0 / 46.5 |" in section
    assert "Does training longer help Emb?" not in section  # no dev curve measured: no table
    curve = [{"model": "glove-6b-50d average", "dev_avg": 0.30, "dev_topics": 0.34},
             {"model": "p10", "overrides": ["training.max_steps=1500"], "step": 500, "dev_avg": 0.14,
              "dev_topics": 0.35}]  # fmt: skip
    (tmp_path / "curve.jsonl").write_text("".join(json.dumps(r) + "\n" for r in curve))
    section = report.facets_section(tmp_path, tmp_path / "curve.jsonl")
    assert "| encoder | step | dev_avg | topics |" in section
    assert "| glove-6b-50d average | – | 30.0 | 34.0 |" in section
    assert "| p10 (training.max_steps=1500) | 500 | 14.0 | 35.0 |" in section
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- facets:start -->\nSTALE\n<!-- facets:end -->\nrest\n")
    write_readme_table(readme, section.rstrip(), "facets")  # what main() does with --readme
    text = readme.read_text()
    assert (
        "STALE" not in text
        and text.startswith("intro\n<!-- facets:start -->\nTraining runs")
        and text.endswith("rest\n")
    )


def test_turney_through_the_tie_split_module_is_the_float32_formula():
    """Turney through the tie_split_accuracy module, bit-for-bit the float32 formula it used: ties within 1e-6."""
    rng = np.random.default_rng(0)
    scores = rng.random((200, 7)).astype(np.float32)
    scores[::3, 1] = scores[::3, 0]  # exact ties
    scores[1::3, 2] = scores[1::3, 0] + np.float32(5e-7)  # ties within the tolerance
    scores[2::5, 3] = scores[2::5, 0] + np.float32(3e-6)  # not a tie
    top = scores >= scores.max(axis=1, keepdims=True) - 1e-6
    assert P.split_tie_accuracy(scores) == float(np.mean(top[:, 0] / top.sum(axis=1)))

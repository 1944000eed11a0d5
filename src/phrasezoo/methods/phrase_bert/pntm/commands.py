"""``phrasezoo topics pntm``: train PNTM with one or more encoders and LDA with the same K and vocabulary, measure
them, print and write the comparison; :func:`add_pntm_command` adds ``pntm`` to ``phrasezoo topics``
(:mod:`phrasezoo.applications.commands`).

Also runnable on its own: ``python -m phrasezoo.methods.phrase_bert.pntm pntm --model ...``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from phrasezoo.core.files import write_readme_table

from .baselines import LDABaseline
from .corpus import load_topic_corpus
from .metrics import (
    DocumentIndex,
    neighbour_lexical_diversity,
    sample_query_phrases,
    token_diversity,
    topic_coherence,
    topic_diversity,
)
from .topic_model import PNTM
from .visualize import visualize_topics

EPILOG = """\
examples:
  phrasezoo topics pntm --model phrase-bert-mini --model baseline:minilm-l6 --corpus embedded --k 20 \\
      --output results/phrase-bert/experiments/topic-model/pntm-embedded-20-topics.json --plot results/phrase-bert/experiments/topic-model/pntm-embedded-20-topics.png
  phrasezoo topics pntm --model outputs/phrase-bert-mini --k 50 --sentences 2000 --save-dir outputs/pntm-k50

--model takes what `phrasezoo evaluate` takes: a trained config name (outputs/<name>/), an exported folder, or
baseline:<backbone> (mean pooling of a plain transformers model). Every model gets its own PNTM; LDA (scikit-learn,
words + phrases counted as tokens) is trained once on the same documents, vocabulary and K.
"""

METRIC_COLUMNS = (
    ("npmi", "NPMI@10"),
    ("topic_diversity", "topic div.@25"),
    ("token_diversity", "token div.@25"),
    ("phrase_share", "phrases in top-10"),
    ("nn_new_tokens", "NN new tokens"),
    ("nn_lcs_precision", "NN LCS prec."),
    ("nn_levenshtein", "NN Levenshtein"),
)


def add_pntm_command(sub) -> None:
    """Add the ``pntm`` subcommand to the subparsers of ``phrasezoo topics``."""
    pntm = sub.add_parser(
        "pntm",
        help="train PNTM and an LDA baseline with the same K and vocabulary; compare NPMI and diversity",
        description="Train Phrase-BERT's phrase-based neural topic model (PNTM) on a corpus with each --model as the "
        "embedding function, and LDA with the same K, documents and word+phrase vocabulary. Prints and writes a "
        "table of NPMI coherence, topic diversity and the lexical diversity of nearest neighbours, and the topics.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pntm.add_argument("--model", action="append", required=True, metavar="M", help="encoder spec (repeatable)")
    pntm.add_argument("--corpus", default="embedded", help="corpus name for phrasezoo.resources.iter_corpus")
    pntm.add_argument("--k", type=int, default=20, help="number of topics (default 20)")
    pntm.add_argument("--top-n", type=int, default=10, help="terms per topic for NPMI and the printout (default 10)")
    pntm.add_argument("--epochs", type=int, default=30, help="PNTM training epochs (default 30)")
    pntm.add_argument("--temperature", type=float, default=0.1, help="PNTM softmax temperature (default 0.1)")
    pntm.add_argument("--orthogonality", type=float, default=1.0, help="weight of the orthogonality penalty")
    pntm.add_argument("--seed", type=int, default=0)
    pntm.add_argument("--max-words", type=int, default=200, help="words per document chunk (default 200)")
    pntm.add_argument("--min-word-count", type=int, default=5, help="vocabulary words occur more often than this")
    pntm.add_argument("--max-phrases", type=int, default=20000, help="most frequent mined phrases kept (default 20000)")
    pntm.add_argument("--sentences", type=int, default=0, help="random corpus sentences added to the vocabulary")
    pntm.add_argument("--lda-iter", type=int, default=50, help="LDA passes (default 50)")
    pntm.add_argument("--no-lda", action="store_true", help="skip the LDA baseline")
    pntm.add_argument("--queries", type=int, default=300, help="query phrases of the neighbour metrics (default 300)")
    pntm.add_argument("--neighbours", type=int, default=10, help="neighbours per query (default 10)")
    pntm.add_argument(
        "--output",
        metavar="FILE",
        help="results JSON (default results/phrase-bert/experiments/topic-model/pntm-<corpus>-<K>-topics.json)",
    )
    pntm.add_argument("--plot", metavar="PNG", help="bar charts of the first model's topics (LDA's go to *-lda.png)")
    pntm.add_argument("--save-dir", metavar="DIR", help="save each trained PNTM under DIR/<model name>/")
    pntm.add_argument("--readme", metavar="FILE", help="also rewrite the <!-- pntm:start --> block of this README")
    pntm.add_argument("--no-progress", action="store_true", help="no progress bars")
    pntm.set_defaults(func=run_pntm_command)


def run_pntm_command(args: argparse.Namespace) -> int:
    output = Path(
        args.output or f"results/phrase-bert/experiments/topic-model/pntm-{_slug(args.corpus)}-{args.k}-topics.json"
    )
    doc = compare_topic_models(
        models=args.model,
        corpus=args.corpus,
        k=args.k,
        top_n=args.top_n,
        epochs=args.epochs,
        temperature=args.temperature,
        orthogonality=args.orthogonality,
        seed=args.seed,
        max_words=args.max_words,
        min_word_count=args.min_word_count,
        max_phrases=args.max_phrases,
        n_sentences=args.sentences,
        lda_iter=args.lda_iter,
        lda=not args.no_lda,
        n_queries=args.queries,
        n_neighbours=args.neighbours,
        plot=args.plot,
        save_dir=args.save_dir,
        progress=not args.no_progress,
    )
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(output)
    print(format_topics(doc, args.top_n))
    print(format_table(doc))
    print(f">> wrote {output}" + (f" and {args.plot}" if args.plot else ""))
    if args.readme:
        write_readme_table(Path(args.readme), f"Generated from `{output}`.\n\n{format_table(doc)}", block="pntm")
    return 0


def compare_topic_models(
    models: list[Any],
    corpus: str = "embedded",
    k: int = 20,
    top_n: int = 10,
    epochs: int = 30,
    temperature: float = 0.1,
    orthogonality: float = 1.0,
    seed: int = 0,
    max_words: int = 200,
    min_word_count: int = 5,
    max_phrases: int | None = 20_000,
    n_sentences: int = 0,
    lda_iter: int = 50,
    lda: bool = True,
    n_queries: int = 300,
    n_neighbours: int = 10,
    plot: str | None = None,
    save_dir: str | None = None,
    progress: bool = True,
    topic_corpus=None,
) -> dict[str, Any]:
    """Train and measure PNTM per encoder in ``models`` and LDA on one corpus; return the results document.

    ``topic_corpus`` (a :class:`~.corpus.TopicCorpus`) replaces loading ``corpus``, e.g. for tests.
    """
    started = time.monotonic()
    data = topic_corpus or load_topic_corpus(
        corpus,
        max_words=max_words,
        min_word_count=min_word_count,
        max_phrases=max_phrases,
        n_sentences=n_sentences,
        progress=progress,
    )
    baseline, lda_seconds = _fit_lda(data, k, lda_iter, seed, progress) if lda else (None, 0.0)
    measures = _Measures.of(data, baseline, top_n, n_queries, n_neighbours, seed)
    pntm = {"n_topics": k, "epochs": epochs, "temperature": temperature, "orthogonality": orthogonality, "seed": seed}
    rows, topics_out = [], {}
    for spec in models:
        row, topics = _measure_pntm(spec, data, measures, pntm, plot if not rows else None, save_dir, progress)
        rows.append(row)
        topics_out[row["model"]] = topics
    if baseline is not None:
        row, topics = _measure_lda(baseline, lda_seconds, data, measures, k, plot)
        rows.append(row)
        topics_out[row["model"]] = topics
    settings = {
        "corpus": data.name,
        "k": k,
        "top_n": top_n,
        "epochs": epochs,
        "temperature": temperature,
        "orthogonality": orthogonality,
        "seed": seed,
        "max_words": max_words,
        "min_word_count": min_word_count,
        "max_phrases": max_phrases,
        "lda_iter": lda_iter,
        "queries": len(measures.queries),
        "neighbours": n_neighbours,
    }
    return _results_document(settings, data, measures, rows, topics_out, started)


@dataclass
class _Measures:
    """What every topic model of a comparison is measured against: the documents' co-occurrence index for NPMI and
    the neighbour pool (readable terms; those LDA uses when it runs) with its query phrases."""

    index: Any
    pool: list[int]
    pool_terms: list[str]
    queries: Any
    top_n: int
    n_neighbours: int

    @classmethod
    def of(cls, data, baseline, top_n: int, n_queries: int, n_neighbours: int, seed: int) -> _Measures:
        vocabulary = data.vocabulary
        index = DocumentIndex(data.documents)
        readable = vocabulary.select(("word", "phrase"))
        if baseline is not None:
            used = np.asarray(baseline.counts.sum(0)).ravel() > 0
            pool = [i for i in readable if used[i]]
        else:
            pool = list(readable)
        pool_terms = [vocabulary.terms[i] for i in pool]
        queries = sample_query_phrases(pool_terms, [vocabulary.kinds[i] for i in pool], n_queries, seed)
        return cls(index, pool, pool_terms, queries, top_n, n_neighbours)

    def row(self, topics: list[list[str]], term_vectors) -> dict[str, Any]:
        """A model's topic metrics and the lexical diversity of its terms' nearest neighbours."""
        row = _topic_metrics(topics, self.index, self.top_n)
        diversity = neighbour_lexical_diversity(self.pool_terms, term_vectors, self.queries, self.n_neighbours)
        return {**row, **_prefix(diversity)}


def _fit_lda(data, k: int, lda_iter: int, seed: int, progress: bool):
    """LDA with K topics over the comparison's documents and vocabulary, and the seconds its fit took."""
    readable = data.vocabulary.select(("word", "phrase"))
    _say(progress, f">> LDA, K={k}, {len(data.documents)} documents, {len(readable)} terms")
    t0 = time.monotonic()
    baseline = LDABaseline(k, data.vocabulary, max_iter=lda_iter, seed=seed).fit(data.documents)
    return baseline, time.monotonic() - t0


def _measure_pntm(spec, data, measures: _Measures, pntm: dict[str, Any], plot, save_dir, progress: bool):
    """Train PNTM with the encoder ``spec`` and measure it: its results row and its topics (top ``top_n`` terms);
    plots its topics to ``plot`` and saves it under ``save_dir`` when given."""
    name = spec if isinstance(spec, str) else type(spec).__name__
    _say(progress, f">> PNTM with {name}: encoding {len(data.documents)} documents and {len(data.vocabulary)} terms")
    t0 = time.monotonic()
    model = PNTM(encoder=spec, **pntm, progress=progress)
    document_vectors = model.encode(data.documents)
    model.fit(data.documents, data.vocabulary, document_vectors=document_vectors)
    topics = [[t for t, _ in topic] for topic in model.get_topics(top_n=max(25, measures.top_n))]
    row = {"model": f"PNTM ({name})", "encoder": name, "seconds": round(time.monotonic() - t0, 1)}
    row.update(measures.row(topics, model.vocabulary_vectors[measures.pool]))
    sizes = model.topic_sizes(model.transform(document_vectors=document_vectors))
    row["topics_used"] = int((sizes > 0).sum())
    if plot:
        title = f"PNTM ({name}), K={pntm['n_topics']}, {data.name}"
        visualize_topics(model.get_topics(top_n=8), plot, title=title)
    if save_dir:
        model.save(Path(save_dir) / _slug(name))
    return row, [t[: measures.top_n] for t in topics]


def _measure_lda(baseline, seconds: float, data, measures: _Measures, k: int, plot):
    """The LDA baseline's results row and topics; plots its topics beside ``plot`` (``*-lda.png``) when given."""
    lda_topics = [[t for t, _ in topic] for topic in baseline.get_topics(top_n=max(25, measures.top_n))]
    row = {"model": "LDA (same vocabulary)", "encoder": None, "seconds": round(seconds, 1)}
    row.update(measures.row(lda_topics, baseline.term_vectors()[measures.pool]))
    row["topics_used"] = int((np.bincount(baseline.transform(data.documents).argmax(1), minlength=k) > 0).sum())
    if plot:
        lda_plot = Path(plot).with_name(Path(plot).stem + "-lda.png")
        visualize_topics(
            baseline.get_topics(top_n=8), lda_plot, title=f"LDA, K={k}, {data.name}", score_label="p(term | topic)"
        )
    return row, [t[: measures.top_n] for t in lda_topics]


def _results_document(settings, data, measures: _Measures, rows, topics, started: float) -> dict[str, Any]:
    """The comparison's results document: settings, corpus counts, one row per model, topics, notes."""
    kinds = data.vocabulary.kinds
    return {
        "task": "pntm-topic-quality",
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "settings": settings,
        "corpus": {
            "documents": len(data.documents),
            "words": sum(kind == "word" for kind in kinds),
            "phrases": sum(kind == "phrase" for kind in kinds),
            "sentences": sum(kind == "sentence" for kind in kinds),
            "neighbour pool": len(measures.pool),
        },
        "rows": rows,
        "topics": topics,
        "seconds": round(time.monotonic() - started, 1),
        "notes": "NPMI: document co-occurrence on the training documents, mean over topic pairs of the top 10 terms; "
        "topic/token diversity over the top 25; NN metrics: the paper's section 5.3 on the 10 nearest vocabulary "
        "terms of random multiword phrases, in each model's term space (encoder vectors; LDA: term distributions "
        "over topics).",
    }


def _topic_metrics(topics: list[list[str]], index, top_n: int) -> dict[str, float]:
    coherence = topic_coherence(topics, index, top_n)
    shown = [t for topic in topics for t in topic[:top_n]]
    return {
        "npmi": round(coherence["npmi"], 4),
        "topic_diversity": round(topic_diversity(topics, 25), 4),
        "token_diversity": round(token_diversity(topics, 25), 4),
        "phrase_share": round(sum(len(t.split()) > 1 for t in shown) / max(1, len(shown)), 4),
        "npmi_per_topic": [round(s, 4) for s in coherence["per_topic"]],
    }


def _prefix(metrics: dict[str, float]) -> dict[str, float]:
    return {f"nn_{k}": round(v, 3) for k, v in metrics.items()}


def format_table(doc: dict[str, Any]) -> str:
    """Markdown table of the comparison (one row per model)."""
    settings = doc["settings"]
    header = "| model | " + " | ".join(label for _, label in METRIC_COLUMNS) + " | topics used | seconds |"
    lines = [
        f"PNTM vs LDA on `{settings['corpus']}`: K={settings['k']}, {doc['corpus']['documents']} documents, "
        f"{doc['corpus']['words']} words + {doc['corpus']['phrases']} phrases",
        "",
        header,
        "|" + "---|" * (len(METRIC_COLUMNS) + 3),
    ]
    for row in doc["rows"]:
        cells = [f"{row[key]:.3f}" for key, _ in METRIC_COLUMNS]
        lines.append(f"| {row['model']} | " + " | ".join(cells) + f" | {row['topics_used']} | {row['seconds']} |")
    return "\n".join(lines)


def format_topics(doc: dict[str, Any], top_n: int = 10) -> str:
    lines = []
    for model, topics in doc["topics"].items():
        lines.append(f"\n{model}")
        for i, terms in enumerate(topics):
            lines.append(f"  {i:3d}: " + ", ".join(terms[:top_n]))
    return "\n".join(lines) + "\n"


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-." else "-" for c in str(text)).strip("-") or "model"


def _say(progress: bool, message: str) -> None:
    if progress:
        print(message, flush=True)

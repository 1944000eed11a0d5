"""The unit of parsing work: spaCy-parse paragraphs and mine their sentences, in this or a worker process.

Kept import-light (spaCy and :mod:`phrasezoo.data.corpus.spans` only, no ``datasets``/``transformers``/``torch``) because
on platforms without ``fork`` every spawned parser process imports this module before it can start; heavy imports
would cost seconds per worker.
"""

from __future__ import annotations

from phrasezoo.resources import load_spacy

from .spans import MiningOptions, extract_entities, extract_mentions

_STATE: dict = {}

#: Sentences shorter than this many tokens, or longer than this many characters, are skipped (layout debris).
MIN_SENTENCE_TOKENS = 3
MAX_SENTENCE_CHARS = 1000


def init_worker(spacy_model: str, options: MiningOptions, threads: int | None = None) -> None:
    """Load the spaCy pipeline once per process; ``threads`` caps BLAS threads so workers do not oversubscribe."""
    if threads is not None:
        try:
            from threadpoolctl import threadpool_limits  # lazy: optional (comes with scikit-learn)

            _STATE["limits"] = threadpool_limits(threads)
        except ImportError:  # threadpoolctl comes with scikit-learn; without it BLAS threads stay unlimited
            pass
    _STATE["nlp"] = load_spacy(spacy_model)
    _STATE["options"] = options


def parse_batch(batch: list[tuple[int, int, str]]) -> list[dict]:
    """Parse (doc_id, para_id, text) paragraphs into sentence rows; ``sent_id`` is left at -1 for the caller."""
    nlp, options = _STATE["nlp"], _STATE["options"]
    rows = []
    texts = ((text, (doc_id, para_id)) for doc_id, para_id, text in batch)
    for doc, (doc_id, para_id) in nlp.pipe(texts, as_tuples=True, batch_size=64):
        for sent in doc.sents:
            if len(sent) < MIN_SENTENCE_TOKENS or len(sent.text) > MAX_SENTENCE_CHARS:
                continue
            if not any(t.is_alpha for t in sent):
                continue
            rows.append(
                {
                    "doc_id": doc_id,
                    "para_id": para_id,
                    "sent_id": -1,
                    "sentence": sent.text,
                    "mentions": extract_mentions(sent, options),
                    "entities": extract_entities(sent),
                }
            )
    return rows

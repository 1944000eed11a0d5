"""The ``phrasezoo_vectors`` spaCy component: phrase vectors of a zoo model on noun chunks, entities or span groups.

```python
import spacy

nlp = spacy.load("en_core_web_sm")
nlp.add_pipe("phrasezoo_vectors", config={"model": "outputs/pearl-mini", "spans": "noun_chunks"})
doc = nlp("The New York Times reported on the city's new subway line.")
doc._.phrase_spans        # [The New York Times, the city's new subway line]
doc._.phrase_vectors      # (2, dim) float32, L2-normalised rows
doc._.phrase_spans[0]._.vector
```

The factory is registered through spaCy's ``spacy_factories`` entry point (installing phrasezoo is enough, no
import needed) and by importing this module. Config:

* ``model``: an exported zoo folder, a recipe name (``pearl-mini`` -> ``outputs/pearl-mini``) or a baseline spec
  (``baseline:minilm-l6``).
* ``spans``: ``"noun_chunks"`` (needs a parser), ``"ents"``, or the key of a span group (``doc.spans[key]``).
* ``context``: how a span's sentence is used. ``"auto"``: the model's method decides (``Method.span_context``):
  UCTopic models encode the mention in its sentence (``"mentions"``), SLICE models pool the span's token vectors from
  one pass over the sentence (``"tokens"``), other models embed the span text alone (``"none"``). Any of the three
  can be forced when the model supports it.
* ``window``: the context of a span: its ``"sentence"`` (when the pipeline sets sentence boundaries) or the ``"doc"``.
* ``batch_size``: documents per encoding batch in ``nlp.pipe``.

Importing this module is cheap (spaCy imports every ``spacy_factories`` entry point when it builds a pipeline):
the model libraries are imported when a component is created.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import minibatch

from phrasezoo.zoo.registry import method_for_model_type

logger = logging.getLogger(__name__)

FACTORY = "phrasezoo_vectors"
CONTEXTS = ("auto", "none", "mentions", "tokens")
WINDOWS = ("sentence", "doc")

if not Doc.has_extension("phrase_vectors"):
    Doc.set_extension("phrase_vectors", default=None)
if not Doc.has_extension("phrase_spans"):
    Doc.set_extension("phrase_spans", default=None)
if not Span.has_extension("vector"):
    Span.set_extension("vector", default=None)


def _encoders():
    from phrasezoo import encoders  # lazy: on building a component, not when spaCy scans its entry points

    return encoders


class PhraseVectors:
    """Sets ``doc._.phrase_spans``, ``doc._.phrase_vectors`` and ``span._.vector`` (see the module docstring)."""

    def __init__(
        self, nlp: Language, name: str, model: str, spans: str, context: str, window: str, batch_size: int
    ) -> None:
        if context not in CONTEXTS:
            raise ValueError(f"context must be one of {CONTEXTS}, got {context!r}.")
        if window not in WINDOWS:
            raise ValueError(f"window must be one of {WINDOWS}, got {window!r}.")
        if not isinstance(spans, str) or not spans:
            raise ValueError("spans must be 'noun_chunks', 'ents' or the key of a span group (doc.spans[key]).")
        if spans == "noun_chunks" and not any(pipe in nlp.pipe_names for pipe in ("parser", "senter")):
            logger.warning(
                "spans='noun_chunks' needs a dependency parser; this pipeline has none (%s).", nlp.pipe_names
            )
        self.name = name
        self.spans = spans
        self.window = window
        self.batch_size = batch_size
        self.encoder = _encoders().load_encoder(model, progress=False)
        if "vectors" not in self.encoder.capabilities:
            raise ValueError(f"{self.encoder.name} produces no vectors (similarity only); use a zoo model or baseline.")
        self.context = self._resolve_context(context)
        self.dim = int(self.encoder.encode(["phrase"]).shape[1])
        self._clear()

    # ------------------------------------------------------------------------------------------------- set-up
    def _model_type(self) -> str:
        config = getattr(getattr(self.encoder, "model", None), "config", None)
        return str(getattr(config, "model_type", "") or "")

    def _resolve_context(self, context: str) -> str:
        capabilities = self.encoder.capabilities
        if context == "auto":  # the model's method says how it embeds a span in context (Method.span_context)
            method = method_for_model_type(self._model_type())
            preferred = method.span_context if method is not None else "none"
            return preferred if preferred in capabilities else "none"
        needed = {"mentions": "mentions", "tokens": "tokens"}.get(context)
        if needed and needed not in capabilities:
            raise ValueError(
                f"context={context!r} needs a model with encode_{needed}(); {self.encoder.name} has none. "
                "Use context='none' (the span text alone) or 'auto'."
            )
        return context

    # ------------------------------------------------------------------------------------------------ running
    def __call__(self, doc: Doc) -> Doc:
        return next(iter(self.pipe([doc])))

    def pipe(self, docs, batch_size: int | None = None):
        for batch in minibatch(docs, size=batch_size or self.batch_size):
            yield from self._process(list(batch))

    def select(self, doc: Doc) -> list[Span]:
        """The spans of ``doc`` this component embeds (noun chunks, entities or a span group), empty ones dropped."""
        if self.spans == "noun_chunks":
            try:
                found = list(doc.noun_chunks)
            except ValueError as err:
                raise ValueError(
                    "spans='noun_chunks' needs a dependency parse: put phrasezoo_vectors after the parser, or use "
                    "spans='ents' or a span group."
                ) from err
        elif self.spans == "ents":
            found = list(doc.ents)
        else:
            found = list(doc.spans[self.spans]) if self.spans in doc.spans else []
        return [span for span in found if span.text.strip()]

    def _process(self, docs: list[Doc]) -> list[Doc]:
        selected = [self.select(doc) for doc in docs]
        flat = [span for spans in selected for span in spans]
        vectors = self._embed(flat) if flat else np.zeros((0, self.dim), dtype=np.float32)
        start = 0
        for doc, spans in zip(docs, selected):
            rows = vectors[start : start + len(spans)]
            start += len(spans)
            doc._.phrase_spans = spans
            doc._.phrase_vectors = rows
            for span, row in zip(spans, rows):
                span._.vector = row
        self._clear()  # the encoder's string cache would otherwise grow with every document
        return docs

    def _context(self, span: Span) -> tuple[str, int]:
        if self.window == "sentence" and span.doc.has_annotation("SENT_START"):
            sentence = span.sent
            if sentence.start <= span.start and span.end <= sentence.end:
                return sentence.text, sentence.start_char
        return span.doc.text, 0

    def _embed(self, spans: list[Span]) -> np.ndarray:
        if self.context == "none":
            return self.encoder.encode([span.text for span in spans])
        contexts = [self._context(span) for span in spans]
        if self.context == "mentions":
            items = [(text, (span.start_char - offset, span.end_char - offset)) for span, (text, offset) in
                     zip(spans, contexts)]  # fmt: skip
            return self.encoder.encode_mentions(items)
        encoders = _encoders()
        tokens = self.encoder.encode_tokens([text for text, _ in contexts])
        rows = []
        for span, (_, offset), token_output in zip(spans, contexts, tokens):
            pooled = encoders.span_mean(
                token_output["embeddings"], token_output["offsets"], span.start_char - offset, span.end_char - offset
            )
            if pooled is None:  # the span lies beyond the model's token limit: embed its text alone
                pooled = self.encoder.encode([span.text])[0]
            rows.append(pooled)
        return encoders.l2_normalize(np.asarray(rows))

    def _clear(self) -> None:
        for attribute in ("_cache", "_token_cache", "_mention_cache"):
            cache = getattr(self.encoder, attribute, None)
            if isinstance(cache, dict):
                cache.clear()


@Language.factory(
    FACTORY,
    default_config={
        "model": "baseline:minilm-l6",
        "spans": "noun_chunks",
        "context": "auto",
        "window": "sentence",
        "batch_size": 64,
    },  # fmt: skip
)
def make_phrasezoo_vectors(
    nlp: Language, name: str, model: str, spans: str, context: str, window: str, batch_size: int
) -> PhraseVectors:
    """spaCy factory of :class:`PhraseVectors` (registered as ``phrasezoo_vectors``)."""
    return PhraseVectors(nlp, name, model, spans, context, window, batch_size)


def phrase_vectors(doc: Doc) -> dict[str, Any]:
    """``{span text: vector}`` of a processed doc (the first span wins when a text repeats)."""
    spans = doc._.phrase_spans or []
    vectors = doc._.phrase_vectors if doc._.phrase_vectors is not None else []
    return {span.text: vector for span, vector in reversed(list(zip(spans, vectors)))}

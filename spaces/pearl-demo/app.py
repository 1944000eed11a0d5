"""PEARL phrase embeddings demo: entity matching, fuzzy joins and phrase types.

The model is loaded exactly as users load it: ``AutoModel.from_pretrained(MODEL, trust_remote_code=True)``, with
``MODEL`` from the ``PHRASEZOO_MODEL`` environment variable (a Hub id or a local exported folder).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

import gradio as gr
import numpy as np

MODEL = os.environ.get("PHRASEZOO_MODEL", "phrasezoo/pearl-mini")
MAX_ITEMS = 2000

EXAMPLE_QUERY = "The New York Times"
EXAMPLE_CANDIDATES = "nytimes.com\nNYTimes\nNew-York Daily Times\nNew York Post\nNew York"
EXAMPLE_LEFT = "2012 Wisconsin Badgers football team\nUniversity of Wisconsin–Madison\nMilwaukee Brewers"
EXAMPLE_RIGHT = "2012 Wisconsin Badgers football season\nUW Madison\nBrewers (baseball)"


def _malloc_trim():
    """glibc's ``malloc_trim`` (None elsewhere): hands freed heap pages back to the OS."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


MALLOC_TRIM = _malloc_trim()


def releasing_memory(handler):
    """Run ``handler``, then trim the heap: torch allocates tensors of a new shape for every request, and without a
    trim glibc's heap fragments and the Space's memory creeps up under load (``benchmarks/space_load.py``)."""

    @functools.wraps(handler)
    def wrapped(*args, **kwargs):
        try:
            return handler(*args, **kwargs)
        finally:
            if MALLOC_TRIM is not None:
                MALLOC_TRIM(0)

    return wrapped


def load_model(name: str = MODEL):
    from transformers import AutoModel

    return AutoModel.from_pretrained(name, trust_remote_code=True).eval()


def _lines(text: str, what: str) -> list[str]:
    items = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not items:
        raise gr.Error(f"Enter at least one {what}, one per line.")
    if len(items) > MAX_ITEMS:
        raise gr.Error(f"At most {MAX_ITEMS} {what}s per request ({len(items)} given).")
    return items


def build_demo(model) -> gr.Blocks:
    """The Blocks app around an already loaded model (tests pass a small one)."""

    @releasing_memory
    def rank(query: str, candidates: str):
        if not (query or "").strip():
            raise gr.Error("Enter a phrase to match.")
        items = _lines(candidates, "candidate")
        vectors = model.encode([query.strip(), *items])
        scores = vectors[1:] @ vectors[0]
        types = model.predict_type(items)
        order = np.argsort(-scores)
        return [[i + 1, items[j], round(float(scores[j]), 4), types[j][0][0]] for i, j in enumerate(order)]

    @releasing_memory
    def fuzzy_join(left: str, right: str, threshold: float):
        left_items, right_items = _lines(left, "left value"), _lines(right, "right value")
        left_vectors, right_vectors = model.encode(left_items), model.encode(right_items)
        scores = right_vectors @ left_vectors.T
        best = scores.argmax(1)
        rows = []
        for i, j in enumerate(best):
            score = float(scores[i, j])
            rows.append([right_items[i], left_items[j] if score >= threshold else "(no match)", round(score, 4)])
        return rows

    @releasing_memory
    def phrase_types(phrases: str):
        items = _lines(phrases, "phrase")
        return [[p, ", ".join(f"{label} ({prob:.2f})" for label, prob in ranked)]
                for p, ranked in zip(items, model.predict_type(items, top_k=3))]  # fmt: skip

    with gr.Blocks(title="PEARL phrase embeddings") as demo:
        gr.Markdown(
            "# PEARL phrase embeddings\nContext-free phrase embeddings for entity matching and fuzzy joins "
            f"(model `{getattr(model, 'name_or_path', MODEL)}`). Cosine similarity mixes the phrase encoder and "
            "a character encoder that sees spelling variants."
        )
        with gr.Tab("Entity matching"):
            query = gr.Textbox(label="Phrase", value=EXAMPLE_QUERY)
            candidates = gr.Textbox(label="Candidates (one per line)", value=EXAMPLE_CANDIDATES, lines=6)
            ranked = gr.Dataframe(headers=["rank", "candidate", "cosine", "predicted type"], label="Ranking")
            gr.Button("Rank").click(rank, [query, candidates], ranked, api_name="rank")
        with gr.Tab("Fuzzy join"):
            with gr.Row():
                left = gr.Textbox(label="Left table (reference)", value=EXAMPLE_LEFT, lines=6)
                right = gr.Textbox(label="Right table (to match)", value=EXAMPLE_RIGHT, lines=6)
            threshold = gr.Slider(0.0, 1.0, value=0.5, step=0.01, label="Minimum cosine for a match")
            joined = gr.Dataframe(headers=["right", "best left match", "cosine"], label="Join")
            gr.Button("Join").click(fuzzy_join, [left, right, threshold], joined, api_name="fuzzy_join")
        with gr.Tab("Phrase types"):
            phrases = gr.Textbox(label="Phrases (one per line)", value="The New York Times\nvery difficult", lines=4)
            typed = gr.Dataframe(headers=["phrase", "top-3 types"], label="Types")
            gr.Button("Predict").click(phrase_types, phrases, typed, api_name="phrase_types")
    return demo


if __name__ == "__main__":
    build_demo(load_model()).launch()

"""PNTM explorer: browse the topics of a phrase-based neural topic model and see which topics a text is about.

Two inputs, set by environment variables:

* ``PHRASEZOO_MODEL``: the encoder the topic model was trained with (Hub id or exported folder), loaded as users
  load zoo models: ``AutoModel.from_pretrained(..., trust_remote_code=True)``;
* ``PNTM_DIR``: a folder written by ``PNTM.save`` (``pntm.safetensors`` + ``pntm.json``) or a Hub repository holding
  one. The topic model is read with safetensors and numpy only, so the Space does not need the phrasezoo package.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import json
import os
from pathlib import Path

import gradio as gr
import numpy as np


# Copied from spaces/pearl-demo/app.py: the heap trim (tests/spaces/test_heap_trim.py keeps the copies equal)
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


MODEL = os.environ.get("PHRASEZOO_MODEL", "phrasezoo/phrase-bert-mini")
PNTM_DIR = os.environ.get("PNTM_DIR", "phrasezoo/pntm-embedded-k20")
EXAMPLE_TEXT = (
    "The spacecraft entered lunar orbit and the astronauts prepared the landing module for the descent to the Moon."
)


class TopicModel:
    """A saved PNTM: unit-length topic rows, vocabulary terms with their vectors, and the softmax temperature."""

    def __init__(self, folder: str):
        from safetensors.numpy import load_file

        path = Path(folder)
        if not (path / "pntm.json").exists():
            from huggingface_hub import snapshot_download

            path = Path(snapshot_download(folder))
        document = json.loads((path / "pntm.json").read_text())
        tensors = load_file(str(path / "pntm.safetensors"))
        topics = tensors["topics"].astype(np.float32)
        self.topics = topics / np.linalg.norm(topics, axis=1, keepdims=True)
        self.vectors = tensors["vocabulary_vectors"].astype(np.float32)
        self.terms = document["vocabulary"]["terms"]
        self.kinds = document["vocabulary"]["kinds"]
        self.temperature = float(document["config"]["temperature"])

    def top_terms(self, topic: int, n: int, kinds: tuple[str, ...]) -> list[str]:
        ids = [i for i, kind in enumerate(self.kinds) if kind in kinds]
        scores = self.vectors[ids] @ self.topics[topic]
        return [self.terms[ids[j]] for j in np.argsort(-scores)[:n]]

    def mixture(self, vector: np.ndarray) -> np.ndarray:
        scores = self.topics @ (vector / np.linalg.norm(vector)) / self.temperature
        weights = np.exp(scores - scores.max())
        return weights / weights.sum()


def load_model(name: str = MODEL):
    from transformers import AutoModel

    return AutoModel.from_pretrained(name, trust_remote_code=True).eval()


def _kinds(choice: str) -> tuple[str, ...]:
    return {"words and phrases": ("word", "phrase"), "phrases": ("phrase",), "sentences": ("sentence",)}[choice]


def build_demo(encoder, topic_model: TopicModel) -> gr.Blocks:
    """The Blocks app around a loaded encoder and topic model (tests pass small ones)."""
    available = sorted(set(topic_model.kinds))

    @releasing_memory
    def topics_table(choice: str, n: float):
        kinds = _kinds(choice)
        if not set(kinds) & set(available):
            raise gr.Error(f"This topic model's vocabulary has no {choice}.")
        return [[k, ", ".join(topic_model.top_terms(k, int(n), kinds))] for k in range(len(topic_model.topics))]

    @releasing_memory
    def explain(text: str, n: float):
        if not (text or "").strip():
            raise gr.Error("Enter a text to explain.")
        mixture = topic_model.mixture(np.asarray(encoder.encode([text.strip()]))[0])
        order = np.argsort(-mixture)[:3]
        return [
            [int(k), round(float(mixture[k]), 4), ", ".join(topic_model.top_terms(int(k), int(n), ("word", "phrase")))]
            for k in order
        ]

    @releasing_memory
    def neighbours(phrase: str, n: float):
        if not (phrase or "").strip():
            raise gr.Error("Enter a phrase.")
        vector = np.asarray(encoder.encode([phrase.strip()]))[0]
        ids = [i for i, kind in enumerate(topic_model.kinds) if kind != "sentence"]
        scores = topic_model.vectors[ids] @ (vector / np.linalg.norm(vector))
        return [[topic_model.terms[ids[j]], round(float(scores[j]), 4)] for j in np.argsort(-scores)[: int(n)]]

    with gr.Blocks(title="PNTM explorer") as demo:
        gr.Markdown(
            "# PNTM explorer\nTopics of a phrase-based neural topic model (Phrase-BERT, section 6), described by the "
            f"nearest words, phrases or sentences of each topic embedding (encoder `{getattr(encoder, 'name_or_path', MODEL)}`, "
            f"{len(topic_model.topics)} topics, {len(topic_model.terms)} vocabulary terms)."
        )
        n_terms = gr.Slider(3, 20, value=8, step=1, label="terms per topic")
        with gr.Tab("Topics"):
            choice = gr.Radio(
                ["words and phrases", "phrases", "sentences"], value="words and phrases", label="describe with"
            )
            table = gr.Dataframe(headers=["topic", "top terms"], label="Topics")
            gr.Button("Show topics").click(topics_table, [choice, n_terms], table, api_name="topics")
        with gr.Tab("Explain a text"):
            text = gr.Textbox(label="Text", value=EXAMPLE_TEXT, lines=4)
            mixture = gr.Dataframe(headers=["topic", "weight", "top terms"], label="Most probable topics")
            gr.Button("Explain").click(explain, [text, n_terms], mixture, api_name="explain")
        with gr.Tab("Nearest terms"):
            phrase = gr.Textbox(label="Phrase", value="pulls the trigger")
            nearest = gr.Dataframe(headers=["term", "cosine"], label="Nearest vocabulary terms")
            gr.Button("Search").click(neighbours, [phrase, n_terms], nearest, api_name="neighbours")
    return demo


if __name__ == "__main__":
    build_demo(load_model(), TopicModel(PNTM_DIR)).launch()

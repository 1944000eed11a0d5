"""PNTM explorer: browse the topics of a phrase-based neural topic model and see which topics a text is about.

Two inputs, set by environment variables:

* ``PHRASEZOO_MODEL``: the encoder the topic model was trained with (Hub id or exported folder; default the zoo's
  ``phrasezoo/phrase-bert-mini``), loaded as users load zoo models: ``AutoModel.from_pretrained(...,
  trust_remote_code=True)``;
* ``PNTM_DIR``: a folder written by ``PNTM.save`` (``pntm.safetensors`` + ``pntm.json``) or a Hub repository holding
  one (default: the encoder's repo id + ``-pntm``). The topic model is read with safetensors and numpy only, so the
  Space does not need the phrasezoo package.

When either cannot be loaded (not published yet, or no Hub), the page says so instead of crashing.
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


#: the zoo checkpoints this Space serves by default (``repo_id`` of ``hub_configs/*.yaml``; README ``models:``)
ZOO_MODELS = ("phrasezoo/phrase-bert-mini",)
MODEL = os.environ.get("PHRASEZOO_MODEL", ZOO_MODELS[0])
#: the topic model fitted on that encoder (``phrasezoo topics pntm``), published beside it as ``<encoder>-pntm``
PNTM_DIR = os.environ.get("PNTM_DIR", f"{ZOO_MODELS[0]}-pntm")
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


# Copied from spaces/pearl-demo/app.py: the note for a model that cannot be loaded (tests/spaces/test_space_files.py)
def unavailable(name: str, error: BaseException, variable: str = "PHRASEZOO_MODEL") -> str:
    """The page's note when model ``name`` cannot be loaded (never a crash): a Hub id that is not published yet, a Hub
    that cannot be reached, a missing local folder, or the error itself."""
    chain: list[BaseException] = []
    cause: BaseException | None = error
    while cause is not None and len(chain) < 10:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    kinds = {type(e).__name__ for e in chain}
    detail = next((str(e).strip().splitlines()[0][:300] for e in chain if str(e).strip()), type(error).__name__)
    fix = f"Set the Space variable `{variable}` to a published checkpoint's Hub id (or, locally, an exported folder)."
    local = name.startswith((".", "/", "~", "outputs/")) or name.count("/") != 1
    if local and not os.path.exists(os.path.expanduser(name)):
        return f"**Folder `{name}` not found.** {fix}"
    if not local and kinds & {"RepositoryNotFoundError", "GatedRepoError", "RevisionNotFoundError"}:
        return f"**`{name}` is not published on the Hugging Face Hub yet**, so this Space cannot download it. {fix}"
    if not local and kinds & {"LocalEntryNotFoundError", "OfflineModeIsEnabled"}:
        return (f"**`{name}` could not be downloaded**: the Hugging Face Hub could not be reached and no copy is "
                f"cached (or it is not published yet). {fix}")  # fmt: skip
    return f"**`{name}` could not be loaded** ({detail}). {fix}"


def load_model(name: str = MODEL, pntm: str = PNTM_DIR):
    """``(encoder, topic model, note)``: both loaded, or ``None``s and a note saying what is missing (the page shows
    it)."""
    from transformers import AutoModel

    try:
        encoder = AutoModel.from_pretrained(name, trust_remote_code=True).eval()
    except Exception as error:  # noqa: BLE001 - any load failure becomes a note on the page, not a crash
        return None, None, unavailable(name, error)
    try:
        topic_model = TopicModel(pntm)
    except Exception as error:  # noqa: BLE001
        return None, None, unavailable(pntm, error, "PNTM_DIR")
    return encoder, topic_model, f"encoder `{name}`, topic model `{pntm}`"


def _kinds(choice: str) -> tuple[str, ...]:
    return {"words and phrases": ("word", "phrase"), "phrases": ("phrase",), "sentences": ("sentence",)}[choice]


def build_demo(encoder, topic_model: TopicModel | None, note: str = "") -> gr.Blocks:
    """The Blocks app around a loaded encoder and topic model (tests pass small ones); ``None`` shows ``note``."""
    if encoder is None or topic_model is None:
        with gr.Blocks(title="PNTM explorer") as demo:
            gr.Markdown(f"# PNTM explorer\n{note}")
        return demo
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
    build_demo(*load_model()).launch()

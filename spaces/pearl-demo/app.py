"""PEARL phrase embeddings demo: entity matching, fuzzy joins and phrase types.

The model is loaded exactly as users load it: ``AutoModel.from_pretrained(MODEL, trust_remote_code=True)``, with
``MODEL`` from the ``PHRASEZOO_MODEL`` environment variable (a Hub id or a local exported folder; by default the zoo's
``phrasezoo/pearl-mini``, the ``repo_id`` of ``hub_configs/pearl-mini.yaml``; any other PEARL checkpoint works, the
conversions of the authors' releases by ``phrasezoo convert`` included). When it cannot be loaded (not published
yet, or no Hub), the page says so instead of crashing. A model without a phrase-type head (the authors' releases
have none: ``predict_type`` raises ``ValueError``) is served with the types shown as unavailable, and a note.

The entity-matching tab ranks the candidates twice: by the encoder's cosine (how similar the phrases are) and by
phrasezoo's default matcher (how likely each is the same entity). The fuzzy-join tab runs that matcher
(``phrasezoo.match.join``, model ``"hybrid"``) with this model as its encoder: candidates from embedding and
character TF-IDF neighbours, reranked by the combination learned on AutoFJ's dev datasets, whose score is a match
probability. The threshold is ``"auto"``: the one that kept the chosen precision on AutoFJ's dev datasets, shown
next to the join with the recall it kept there.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

import gradio as gr
import numpy as np

from phrasezoo.match import Matcher, join
from phrasezoo.match.scoring.hybrid import HybridScorer

#: the zoo checkpoints this Space serves by default (``repo_id`` of ``hub_configs/*.yaml``; README ``models:``)
ZOO_MODELS = ("phrasezoo/pearl-mini",)
MODEL = os.environ.get("PHRASEZOO_MODEL", ZOO_MODELS[0])
MAX_ITEMS = 2000
PRECISIONS = [0.8, 0.85, 0.9, 0.95]

EXAMPLE_QUERY = "The New York Times"
EXAMPLE_CANDIDATES = "nytimes.com\nNYTimes\nNew-York Daily Times\nNew York Post\nNew York"
EXAMPLE_LEFT = "2012 Wisconsin Badgers football team\nUniversity of Wisconsin–Madison\nMilwaukee Brewers"
EXAMPLE_RIGHT = "2012 Wisconsin Badgers football season\nUW Madison\nBrewers (baseball)"
UNAVAILABLE = "unavailable"
#: under the two rankings: what each is for (README.md says the same)
WHICH_RANKING = (
    "**Which ranking to use.** The encoder's **cosine** says how *similar* two phrases are: use it to find related "
    "phrases, cluster them or search by meaning. It does not say whether two names are the *same entity*: on the "
    'example, pearl-mini scores "New York Post", another newspaper, above "NYTimes". The **default matcher** '
    "(`phrasezoo.match`: this encoder's cosine with character n-grams and acronym, number and word clues, combined "
    "by a model learned on matching data) gives the probability that two names are the same entity: use it to link, "
    "join or deduplicate names, with a threshold (the Fuzzy join tab). It scores its shortlist of likely candidates "
    "only; the others have no probability."
)


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


def _query(text: str) -> str:
    if not (text or "").strip():
        raise gr.Error("Enter a phrase to match.")
    return text.strip()


def types_note(model) -> str:
    """Empty when ``model`` predicts phrase types; else the page's one-line note. The authors' released PEARL
    checkpoints (``phrasezoo convert``) have no type head, and their ``predict_type`` raises ``ValueError``."""
    try:
        model.predict_type(["The New York Times"])
    except ValueError:
        return (f"**Phrase types: {UNAVAILABLE}.** This model has no phrase-type head (the authors' released PEARL "
                "checkpoints include none); matching and joins work as usual.")  # fmt: skip
    return ""


def matcher_for(model, reference: list[str]) -> Matcher:
    """phrasezoo's default matcher (the hybrid scorer) with ``model`` as its encoder, fitted on ``reference``."""
    return Matcher(HybridScorer(model, progress=False), progress=False).fit(reference)


def ranking_handlers(model, typed: bool):
    """The entity-matching tab's two rankings of the candidates: the encoder's cosine (with each candidate's
    predicted type, or "unavailable") and the default matcher's match probability."""

    @releasing_memory
    def rank(query: str, candidates: str):
        query, items = _query(query), _lines(candidates, "candidate")
        vectors = model.encode([query, *items])
        scores = vectors[1:] @ vectors[0]
        types = [t[0][0] for t in model.predict_type(items)] if typed else [UNAVAILABLE] * len(items)
        order = np.argsort(-scores)
        return [[i + 1, items[j], round(float(scores[j]), 4), types[j]] for i, j in enumerate(order)]

    @releasing_memory
    def match_rank(query: str, candidates: str):
        query, items = _query(query), _lines(candidates, "candidate")
        scores, ids = matcher_for(model, items).search([query], top_k=len(items))
        ranked = [(int(j), float(score)) for score, j in zip(scores[0], ids[0]) if j >= 0]
        rows = [[i + 1, items[j], round(score, 4)] for i, (j, score) in enumerate(ranked)]
        shortlisted = {j for j, _ in ranked}  # the matcher scores only its shortlist of neighbours
        return rows + [[None, item, None] for j, item in enumerate(items) if j not in shortlisted]

    return rank, match_rank


def join_handler(model):
    """The fuzzy-join tab: the default matcher's join at the threshold that kept the target precision on AutoFJ."""

    def threshold_note(matcher: Matcher, target: float, threshold: float, joined) -> str:
        dev_recall = dict((row[0], row[2]) for row in matcher.scorer.combination.calibration if len(row) > 2)
        recall = dev_recall.get(round(target, 2))
        matched = int(joined["left"].notna().sum())
        return (f"**Threshold {threshold:.3f}** (match probability): on AutoFJ's dev datasets it kept a precision "
                f"of {target:.2f}" + (f" with a recall of {recall:.2f}" if recall is not None else "") +
                f". Here: {matched} of {len(joined)} right values matched; the others stay unmatched rather "
                "than forced onto their nearest neighbour.")  # fmt: skip

    @releasing_memory
    def join_tables(left: str, right: str, target_precision: float):
        left_items, right_items = _lines(left, "left value"), _lines(right, "right value")
        matcher = matcher_for(model, left_items)
        threshold = matcher.threshold_for(float(target_precision))
        joined = join(left_items, right_items, threshold="auto", target_precision=float(target_precision),
                      keep_unmatched=True, matcher=matcher)  # fmt: skip
        rows = [[r.right, r.left if isinstance(r.left, str) else "(no match)",
                 round(float(r.score), 4) if r.score == r.score else None] for r in joined.itertuples()]  # fmt: skip
        return rows, threshold_note(matcher, float(target_precision), threshold, joined)

    return join_tables


def entity_matching_tab(model, typed: bool, note: str) -> None:
    """Phrase and candidates in; the cosine ranking and the matcher's ranking side by side, and which to use."""
    rank, match_rank = ranking_handlers(model, typed)
    query = gr.Textbox(label="Phrase", value=EXAMPLE_QUERY)
    candidates = gr.Textbox(label="Candidates (one per line)", value=EXAMPLE_CANDIDATES, lines=6)
    button = gr.Button("Rank", variant="primary")
    with gr.Row():
        ranked = gr.Dataframe(headers=["rank", "candidate", "cosine", "predicted type"],
                              label="Encoder cosine: how similar the phrases are")  # fmt: skip
        matched = gr.Dataframe(headers=["rank", "candidate", "match probability"],
                               label="Default matcher: how likely the same entity")  # fmt: skip
    gr.Markdown(WHICH_RANKING + (f"\n\n{note}" if note else ""))
    button.click(rank, [query, candidates], ranked, api_name="rank")
    button.click(match_rank, [query, candidates], matched, api_name="match_rank")


def fuzzy_join_tab(model) -> None:
    join_tables = join_handler(model)
    gr.Markdown("phrasezoo's default matcher (embedding + character TF-IDF + number and acronym clues) with "
                "this model; the threshold keeps the chosen precision on AutoFJ's dev datasets.")  # fmt: skip
    with gr.Row():
        left = gr.Textbox(label="Left table (reference)", value=EXAMPLE_LEFT, lines=6)
        right = gr.Textbox(label="Right table (to match)", value=EXAMPLE_RIGHT, lines=6)
    precision = gr.Dropdown(PRECISIONS, value=0.9, label="Target precision (sets the threshold)")
    joined = gr.Dataframe(headers=["right", "best left match", "match probability"], label="Join")
    note = gr.Markdown()
    gr.Button("Join").click(join_tables, [left, right, precision], [joined, note], api_name="join_tables")


def phrase_types_tab(model, note: str) -> None:
    if note:  # no type head: the note instead of a tool that cannot answer
        gr.Markdown(note)
        return

    @releasing_memory
    def phrase_types(phrases: str):
        items = _lines(phrases, "phrase")
        return [[p, ", ".join(f"{label} ({prob:.2f})" for label, prob in ranked)]
                for p, ranked in zip(items, model.predict_type(items, top_k=3))]  # fmt: skip

    phrases = gr.Textbox(label="Phrases (one per line)", value="The New York Times\nvery difficult", lines=4)
    typed = gr.Dataframe(headers=["phrase", "top-3 types"], label="Types")
    gr.Button("Predict").click(phrase_types, phrases, typed, api_name="phrase_types")


def build_demo(model, note: str = "") -> gr.Blocks:
    """The Blocks app around an already loaded model (tests pass a small one); ``model=None`` shows ``note``."""
    if model is None:
        with gr.Blocks(title="PEARL phrase embeddings") as demo:
            gr.Markdown(f"# PEARL phrase embeddings\n{note}")
        return demo
    missing_types = types_note(model)
    spelling = (" Cosine similarity mixes the phrase encoder and a character encoder that sees spelling variants."
                if getattr(model.config, "use_char_encoder", False) else "")  # fmt: skip
    with gr.Blocks(title="PEARL phrase embeddings") as demo:
        gr.Markdown(
            "# PEARL phrase embeddings\nContext-free phrase embeddings for entity matching and fuzzy joins "
            f"(model `{getattr(model, 'name_or_path', MODEL)}`).{spelling}"
        )
        with gr.Tab("Entity matching"):
            entity_matching_tab(model, not missing_types, missing_types)
        with gr.Tab("Fuzzy join"):
            fuzzy_join_tab(model)
        with gr.Tab("Phrase types"):
            phrase_types_tab(model, missing_types)
    return demo


if __name__ == "__main__":
    build_demo(*load_model()).launch()

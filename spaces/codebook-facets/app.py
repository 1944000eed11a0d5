"""Multi-facet codebook embeddings demo: the facets of a text, two texts compared, extractive summaries.

The model is loaded exactly as users load it: ``AutoModel.from_pretrained(MODEL, trust_remote_code=True)``, with
``MODEL`` from the ``PHRASEZOO_MODEL`` environment variable (a Hub id or a local exported folder; default the zoo's
``phrasezoo/codebook-sentence-mini``). ``PHRASEZOO_MODEL_K1`` (default ``phrasezoo/codebook-sentence-mini-k1``,
skipped with a note when it cannot be loaded) names a K = 1 model whose facets are shown beside the main model's.
When the main model cannot be loaded (not published yet, or no Hub), the page says so instead of crashing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import html
import os

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
ZOO_MODELS = ("phrasezoo/codebook-sentence-mini", "phrasezoo/codebook-sentence-mini-k1")
MODEL = os.environ.get("PHRASEZOO_MODEL", ZOO_MODELS[0])
MODEL_K1 = os.environ.get("PHRASEZOO_MODEL_K1", ZOO_MODELS[1])
MAX_TEXT_CHARS = 1_000
MAX_DOCUMENT_CHARS = 20_000
MAX_SENTENCES = 300
TOP_WORDS = 5

EXAMPLES = [
    "civil order",
    "real property",
    "SMS messages confirming the appointment to the hospital",
    "A man is lifting weights in a garage .",
]
EXAMPLE_B = "A man is lifting weights ."
EXAMPLE_DOCUMENT = (
    "The city council approved a new budget on Tuesday after months of debate. "
    "The plan raises spending on schools and public transport while cutting administrative costs. "
    "Teachers welcomed the extra money for classrooms, but said salaries still lag behind other cities. "
    "The transport authority will buy forty electric buses and extend two tram lines. "
    "Opposition members argued that the budget relies on optimistic tax forecasts. "
    "The mayor said the plan would be reviewed in the autumn if revenue falls short. "
    "Local businesses asked for lower fees, which the council promised to consider next year."
)


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


def load_model(name: str = MODEL, variable: str = "PHRASEZOO_MODEL"):
    """``(model, note)``: the loaded model, or ``None`` and a message saying how to get one."""
    from transformers import AutoModel

    if not name:
        return None, f"No model configured: set {variable} to an exported codebook folder or a Hub id."
    looks_local = name.startswith((".", "/", "~", "outputs/")) or name.count("/") != 1  # a Hub id is "org/name"
    if looks_local and not os.path.isdir(os.path.expanduser(name)):
        return None, (
            f"Model folder `{name}` not found. Train and export one first, e.g. "
            f"`accelerate launch train.py hub_configs/codebook-sentence-mini.yaml`, or set {variable} to an "
            "exported codebook folder or Hub id."
        )
    try:
        model = AutoModel.from_pretrained(os.path.expanduser(name), trust_remote_code=True).eval()
    except Exception as error:  # noqa: BLE001 - any load failure becomes a note on the page, not a crash
        return None, unavailable(name, error, variable)
    if not hasattr(model, "facet_words"):
        return None, f"`{name}` is not a codebook model (it has no facets); point {variable} at one."
    k = model.config.n_facets
    return model, f"Codebook model `{name}`: K = {k} facets, {model.config.vocab_size - 3:,} words."


def _text(value: str, what: str = "a text", limit: int = MAX_TEXT_CHARS) -> str:
    value = (value or "").strip()
    if not value:
        raise gr.Error(f"Enter {what}.")
    if len(value) > limit:
        raise gr.Error(f"At most {limit:,} characters per input ({len(value):,} given).")
    return value


def _facet_rows(model, text: str, top_n: int) -> list[list]:
    words = model.facet_words(text, top_n=top_n)
    return [[k + 1, ", ".join(f"{w} {c:.2f}" for w, c in facet)] for k, facet in enumerate(words)]


def importance_html(items: list[dict], text: str) -> str:
    """The text with each word's background shaded by its eq. 6 importance, from the text's least to its most
    important word (unknown words unshaded)."""
    known = [d["weight"] for d in items if d["known"]]
    low, high = (min(known), max(known)) if known else (0.0, 1.0)
    parts, last = [], 0
    for d in items:
        parts.append(html.escape(text[last : d["start"]]))
        alpha = 0.1 + 0.8 * (d["weight"] - low) / (high - low) if d["known"] and high > low else 0.5 * d["known"]
        title = f"a = {d['weight']:.3f}" if d["known"] else "not in the vocabulary"
        parts.append(
            f'<span title="{title}" style="background: rgba(220, 60, 40, {alpha:.2f}); padding: 1px 2px; '
            f'border-radius: 3px">{html.escape(text[d["start"] : d["end"]])}</span>'
        )
        last = d["end"]
    parts.append(html.escape(text[last:]))
    return f'<div class="importance" style="font-size: 1.2em; line-height: 2">{"".join(parts)}</div>'


def facet_plot(model, text: str):
    """2-D PCA of the unit facets and their nearest words."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    facets = model.facets(text)
    neighbours = model.facet_words(text, top_n=3)
    index = model.target_word_index()
    vectors = model.target_vectors.detach().float().numpy()
    words = sorted({w for facet in neighbours for w, _ in facet})
    word_vectors = vectors[[index[w] for w in words]]
    word_vectors = word_vectors / np.linalg.norm(word_vectors, axis=1, keepdims=True)
    points = np.concatenate([facets, word_vectors])
    centred = points - points.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    xy = centred @ vt[:2].T
    fig, ax = plt.subplots(figsize=(6, 4.5))
    k = len(facets)
    ax.scatter(xy[k:, 0], xy[k:, 1], c="#888", s=12)
    for (x, y), w in zip(xy[k:], words):
        ax.annotate(w, (x, y), fontsize=8, color="#555")
    ax.scatter(xy[:k, 0], xy[:k, 1], c="#d33", s=40, marker="*")
    for i, (x, y) in enumerate(xy[:k]):
        ax.annotate(f"f{i + 1}", (x, y), fontsize=10, color="#d33", fontweight="bold")
    ax.set_xticks([])
    ax.set_yticks([])
    fig.tight_layout()
    return fig


def heatmap(coefficients: np.ndarray, labels_a: list[str], labels_b: list[str]):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 5))
    image = ax.imshow(coefficients, vmin=0, vmax=1, cmap="Reds")
    ax.set_xticks(range(len(labels_a)), labels_a, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(labels_b)), labels_b, fontsize=8)
    ax.set_xlabel("facets of text A (reconstructing)")
    ax.set_ylabel("facets of text B (reconstructed)")
    fig.colorbar(image, ax=ax, label="NNSC coefficient")
    fig.tight_layout()
    return fig


def coverage_plot(result: dict, labels: list[list[str]]):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    coverage = np.asarray(result["facet_coverage"])
    fig, ax = plt.subplots(figsize=(7, 0.5 + 0.35 * coverage.size))
    names, values = [], []
    for i, row in enumerate(coverage):
        for k, value in enumerate(row):
            names.append(f"S{i + 1} f{k + 1} ({labels[i][k]})")
            values.append(value)
    ax.barh(range(len(values)), values, color="#d33")
    ax.set_yticks(range(len(values)), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("weighted document words covered (eq. 7)")
    fig.tight_layout()
    return fig


def build_demo(model, note: str = "", model_k1=None) -> gr.Blocks:
    """The Blocks app around an already loaded model (tests pass a small one); ``model=None`` shows ``note``."""
    with gr.Blocks(title="Multi-facet codebook embeddings") as demo:
        gr.Markdown(
            "# Multi-facet codebook embeddings\nA text is represented by K *facets*: predicted cluster centres of "
            "the words likely to appear around it, in a frozen GloVe space (Chang, Agrawal & McCallum, AAAI 2021)."
        )
        gr.Markdown(note)
        if model is None:
            return demo

        @releasing_memory
        def show_facets(text: str, top_n: int):
            text = _text(text)
            top_n = int(top_n)
            rows = _facet_rows(model, text, top_n)
            items = model.word_importance(text)
            ranked = sorted((d for d in items if d["known"]), key=lambda d: -d["weight"])
            importance = [[d["word"], round(d["weight"], 4)] for d in ranked]
            k1 = _facet_rows(model_k1, text, top_n) if model_k1 is not None else []
            truncated = len(model.tokenizer(text)["input_ids"]) > model.config.max_seq_length
            status = (
                f"Truncated to the model's {model.config.max_seq_length} tokens." if truncated else "Whole text used."
            )
            return rows, importance_html(items, text), importance, facet_plot(model, text), k1, status

        @releasing_memory
        def compare(text_a: str, text_b: str):
            a, b = _text(text_a, "text A"), _text(text_b, "text B")
            sc = model.similarity(a, b, method="sc")
            emb = model.similarity(a, b, method="emb")
            avg = model.sentence_embedding([a, b], "avg", learned=False)
            norms = np.linalg.norm(avg, axis=1)
            glove = float(avg[0] @ avg[1] / (norms[0] * norms[1])) if norms.all() else float("nan")
            coefficients = model.coefficient_matrix(a, b)
            label = lambda text: [f"f{k + 1} {f[0][0]}" for k, f in enumerate(model.facet_words(text, 1))]  # noqa: E731
            return round(sc, 4), round(emb, 4), round(glove, 4), heatmap(coefficients, label(a), label(b))

        @releasing_memory
        def summarise(document: str, n: int):
            document = _text(document, "a document", MAX_DOCUMENT_CHARS)
            n = int(n)
            from_model = model.summarize(document, n=n)
            sentences = from_model["all_sentences"]
            if len(sentences) > MAX_SENTENCES:
                raise gr.Error(f"At most {MAX_SENTENCES} sentences ({len(sentences)} found).")
            if len(sentences) <= n:
                raise gr.Error(f"Found only {len(sentences)} sentence(s); paste a longer document than n = {n}.")
            baseline = model.summarize(sentences, n=n, method="sent_emb")
            ours, theirs = set(from_model["indices"]), set(baseline["indices"])
            highlighted = []
            for i, sentence in enumerate(sentences):
                tag = ("codebook + Sent Emb" if i in theirs else "codebook") if i in ours else (
                    "Sent Emb" if i in theirs else None
                )  # fmt: skip
                highlighted.append((sentence + " ", tag))
            rows = [
                [rank + 1, i + 1, sentences[i], round(gain, 4)]
                for rank, (i, gain) in enumerate(zip(from_model["indices"], from_model["gains"]))
            ]
            labels = [[f[0][0] for f in model.facet_words(s, 1)] for s in from_model["sentences"]]
            return (
                highlighted,
                rows,
                [[i + 1, sentences[i]] for i in baseline["indices"]],
                coverage_plot(from_model, labels),
            )

        with gr.Tab("Facets"):
            with gr.Row():
                text = gr.Textbox(label="Phrase or sentence", value=EXAMPLES[0], max_length=MAX_TEXT_CHARS, scale=4)
                top_n = gr.Slider(1, 10, value=TOP_WORDS, step=1, label="Nearest words per facet", scale=1)
            gr.Examples(EXAMPLES, inputs=text)
            go = gr.Button("Show facets", variant="primary")
            status = gr.Markdown()
            with gr.Row():
                facets_table = gr.Dataframe(headers=["facet", "nearest words (cosine)"], label="Facets", scale=3)
                plot = gr.Plot(label="Facets (red stars) and their nearest words: 2-D PCA", scale=2)
            gr.Markdown(
                "**Word importance** (eq. 6: summed positive cosine of each word with the facets; shading runs from "
                "the text's least to its most important word)"
            )
            shaded = gr.HTML()
            importance = gr.Dataframe(headers=["word", "importance"], label="Words by importance")
            k1_table = gr.Dataframe(
                headers=["facet", "nearest words (cosine)"], label="K = 1 model", visible=model_k1 is not None
            )
            outputs = [facets_table, shaded, importance, plot, k1_table, status]
            go.click(show_facets, [text, top_n], outputs, api_name="facets")
            demo.load(show_facets, [text, top_n], outputs)
        with gr.Tab("Compare") as compare_tab:
            with gr.Row():
                text_a = gr.Textbox(label="Text A", value=EXAMPLES[3], max_length=MAX_TEXT_CHARS)
                text_b = gr.Textbox(label="Text B", value=EXAMPLE_B, max_length=MAX_TEXT_CHARS)
            compare_button = gr.Button("Compare", variant="primary")
            with gr.Row():
                sc = gr.Number(label="SC similarity (negated eq. 5 distance; about -0.04 for identical texts)")
                emb = gr.Number(label="Emb cosine (mean encoder state)")
                glove = gr.Number(label="GloVe Avg cosine (baseline)")
            coefficient_plot = gr.Plot(label="Which facet of A rebuilds which facet of B")
            compare_outputs = [sc, emb, glove, coefficient_plot]
            compare_button.click(compare, [text_a, text_b], compare_outputs, api_name="compare")
            compare_tab.select(compare, [text_a, text_b], compare_outputs)  # the example is scored on opening
        with gr.Tab("Summarise") as summary_tab:
            document = gr.Textbox(label="Document", value=EXAMPLE_DOCUMENT, lines=8, max_length=MAX_DOCUMENT_CHARS)
            n = gr.Slider(1, 10, value=3, step=1, label="Sentences to extract")
            summary_button = gr.Button("Summarise", variant="primary")
            marked = gr.HighlightedText(
                label="Chosen sentences in place",
                color_map={"codebook": "red", "Sent Emb": "blue", "codebook + Sent Emb": "purple"},
            )
            with gr.Row():
                chosen = gr.Dataframe(headers=["pick", "#", "sentence", "gain (eq. 7)"], label="Codebook", wrap=True)
                baseline = gr.Dataframe(headers=["#", "sentence"], label="Sent Emb baseline", wrap=True)
            coverage = gr.Plot(label="Facet coverage of the chosen sentences")
            summary_outputs = [marked, chosen, baseline, coverage]
            summary_button.click(summarise, [document, n], summary_outputs, api_name="summarize")
            summary_tab.select(summarise, [document, n], summary_outputs)
    return demo


def load_models(name: str = MODEL, name_k1: str = MODEL_K1):
    """``(model, note, K = 1 model)``: the K = 1 model is ``None`` (and the note says why) when it cannot be loaded."""
    model, note = load_model(name)
    if model is None or not name_k1:
        return model, note, None
    model_k1, note_k1 = load_model(name_k1, "PHRASEZOO_MODEL_K1")
    return model, note if model_k1 is not None else f"{note}\n\nNo K = 1 panel: {note_k1}", model_k1


if __name__ == "__main__":
    build_demo(*load_models()).launch()

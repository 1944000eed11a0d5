"""Export a zoo model as a sentence-transformers folder: ``SentenceTransformer(folder)`` gives the zoo's embeddings.

* **Phrase-BERT** becomes the standard pipeline ``Transformer -> Pooling(mean) -> Normalize``: no custom code, so
  ``SentenceTransformer(folder)`` loads it without ``trust_remote_code``.
* **PEARL** needs its character encoder, which reads each word's characters and word pieces; no stock module does
  that. The folder holds the full PEARL export (weights, config with ``auto_map``, the model's own code, tokenizer)
  plus ``phrasezoo_st_modules.py``, a sentence-transformers input module that runs it, so
  ``SentenceTransformer(folder, trust_remote_code=True)`` gives the concatenation of the normalised phrase vector and
  the weighted normalised character vector, exactly as ``PearlModel.encode``. The same folder still loads with
  ``AutoModel.from_pretrained(folder, trust_remote_code=True)``.

Each method declares its way (``Method.sentence_transformers``). UCTopic embeds mentions in their sentence and has
no sentence-transformers equivalent: it is refused with a clear error. The export is written to a temporary folder and moved into place, then (``verify=True``) loaded back with
sentence-transformers and compared with the zoo model on sample phrases.

    python -m phrasezoo.integrations.sentence_transformers outputs/pearl-mini --output outputs/pearl-mini-st
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import sentence_transformers
import torch
import transformers
from sentence_transformers import SentenceTransformer
from transformers import AutoModel
from transformers.utils import logging as hf_logging

from phrasezoo.zoo.registry import get_method, list_methods, method_for_model_type

try:  # sentence-transformers >= 6
    from sentence_transformers.base.modules import Normalize, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
except ImportError:  # pragma: no cover - sentence-transformers 5.x
    from sentence_transformers.models import Normalize, Pooling, Transformer

SAMPLE_PHRASES = ["The New York Times", "NYTimes", "New-York Daily Times", "very difficult", "Famotidine 20 mg"]
MODULE_FILE = "phrasezoo_st_modules.py"  # a method's own input module travels under this name


def load_zoo_model(spec: Any):
    """A loaded zoo model from a model object, an exported folder or a recipe name (``outputs/<name>``)."""
    if not isinstance(spec, (str, os.PathLike)):
        return spec
    path = Path(spec)
    if not path.exists() and "/" not in str(spec) and (Path("outputs") / str(spec)).is_dir():
        path = Path("outputs") / str(spec)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"{spec} is not an exported zoo model folder (no config.json); export it first.")
    return AutoModel.from_pretrained(str(path), trust_remote_code=True).eval()


def export_sentence_transformers(
    model: Any, output_dir: str | os.PathLike, overwrite: bool = False, verify: bool = True
) -> Path:
    """Write ``model`` (a zoo model, folder or recipe name) as a sentence-transformers folder at ``output_dir``."""
    source = Path(model) if isinstance(model, (str, os.PathLike)) else None
    model = load_zoo_model(model)
    model_type = getattr(getattr(model, "config", None), "model_type", None)
    method = method_for_model_type(model_type)
    if method is None or method.sentence_transformers is None:
        supported = [get_method(name) for name in list_methods() if get_method(name).sentence_transformers]
        raise ValueError(
            f"sentence-transformers export supports {', '.join(m.name for m in supported)} (model types "
            f"{', '.join(m.config_class.model_type for m in supported)}), not {model_type!r}. UCTopic embeds a phrase "
            "inside its sentence (model.encode([(sentence, (start, end))])), which sentence-transformers' "
            "text-in/vector-out API cannot express: use the model folder with AutoModel directly."
        )
    output = Path(output_dir)
    if output.exists() and any(output.iterdir()) and not overwrite:
        raise FileExistsError(f"{output} exists and is not empty; pass overwrite=True (--overwrite) to replace it.")
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=output.parent, prefix=f".{output.name}-"))
    try:
        if method.sentence_transformers == "mean_pooling":
            _write_mean_pooling(model, tmp)
        else:
            _write_input_module(model, tmp, method.load(method.sentence_transformers))
        card = Path(getattr(model, "name_or_path", "") or "") / "README.md"
        if source is not None and card.is_file():  # keep the zoo model card (results, training facts)
            shutil.copyfile(card, tmp / "README.md")
        os.chmod(tmp, 0o755)
        if output.exists():
            shutil.rmtree(output)
        tmp.replace(output)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if verify:
        difference = max_difference(model, output)
        if difference > 1e-4:
            raise RuntimeError(f"The export at {output} gives embeddings {difference:.2e} away from the zoo model.")
    return output


def _write_mean_pooling(model, folder: Path) -> None:
    """The backbone + tokenizer as a stock Transformer module, mean pooling, normalisation (e.g. Phrase-BERT)."""
    with tempfile.TemporaryDirectory() as backbone_dir:
        model.backbone.save_pretrained(backbone_dir, safe_serialization=True)
        model.tokenizer.save_pretrained(backbone_dir)
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # the zoo backbone has no pooler (unused by mean pooling): no load report
        try:
            transformer = Transformer(backbone_dir, max_seq_length=model.config.max_seq_length)
        finally:
            hf_logging.set_verbosity(verbosity)
        pooling = Pooling(model.config.backbone_config.hidden_size, pooling_mode="mean")
        st_model = SentenceTransformer(modules=[transformer, pooling, Normalize()], device="cpu")
        st_model.similarity_fn_name = "cosine"
        st_model.save(str(folder))


def _write_input_module(model, folder: Path, module_class: type) -> None:
    """The zoo export plus the method's own input module (``Method.sentence_transformers``, e.g. PEARL's; see the
    module docstring), whose file is copied as ``phrasezoo_st_modules.py``."""
    encoder = module_class(model=model)
    encoder.save(str(folder))
    shutil.copyfile(inspect.getfile(module_class), folder / MODULE_FILE)
    modules = [{"idx": 0, "name": "0", "path": "", "type": f"{Path(MODULE_FILE).stem}.{module_class.__name__}"}]
    (folder / "modules.json").write_text(json.dumps(modules, indent=2))
    versions = {
        "sentence_transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "pytorch": torch.__version__,
    }
    config = {"__version__": versions, "model_type": "SentenceTransformer", "prompts": {}, "default_prompt_name": None,
              "similarity_fn_name": "cosine"}  # fmt: skip
    (folder / "config_sentence_transformers.json").write_text(json.dumps(config, indent=2))


def max_difference(model, folder: str | os.PathLike, phrases: list[str] | None = None) -> float:
    """Largest absolute difference between the zoo model's and the exported folder's embeddings of ``phrases``."""
    phrases = phrases or SAMPLE_PHRASES
    st_model = SentenceTransformer(str(folder), device="cpu", trust_remote_code=True)
    ours = np.asarray(model.encode(phrases, show_progress_bar=False), dtype=np.float32)
    theirs = st_model.encode(phrases, convert_to_numpy=True, show_progress_bar=False)
    return float(np.abs(ours - theirs).max())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m phrasezoo.integrations.sentence_transformers",
        description="Write a zoo model (PEARL, Phrase-BERT) as a folder that SentenceTransformer(folder) loads.",
    )
    parser.add_argument("model", help="exported zoo folder (e.g. outputs/pearl-mini) or recipe name")
    parser.add_argument("--output", "-o", required=True, help="folder to write (e.g. outputs/pearl-mini-st)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    parser.add_argument("--no-verify", action="store_true", help="skip loading the export back to compare embeddings")
    args = parser.parse_args(argv)
    try:
        folder = export_sentence_transformers(
            args.model, args.output, overwrite=args.overwrite, verify=not args.no_verify
        )
    except (ValueError, FileNotFoundError, FileExistsError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    needs_code = (folder / MODULE_FILE).exists()
    print(
        f">> wrote {folder}: SentenceTransformer({str(folder)!r}" + (", trust_remote_code=True)" if needs_code else ")")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

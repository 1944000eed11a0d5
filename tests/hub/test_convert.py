"""``phrasezoo convert`` on stand-ins of the papers' releases, and every zoo model type loaded back by repo id.

The stand-ins (:mod:`tests.hub.release_standins`) are tiny random models saved exactly as the releases are laid out,
served under the real repo ids by the local Hub (:class:`~tests.recipes_offline.served_hub.ServedHub`, which also
takes pushes). One child process runs ``phrasezoo convert`` on the four releases through ``HF_ENDPOINT`` and pushes
the exports plus a tiny export of every zoo model type. Then:

- each converted model's ``encode`` equals a reference written here from the authors' code, not from the converter:
  PEARL as the authors use it (``AutoModel`` + masked mean pooling + L2), Phrase-BERT through sentence-transformers
  itself, UCTopic as the authors' tokenizer call and forward pass (the text cut at the span, each piece with a
  leading space, LUKE with the ``[MASK]`` entity, ``tanh`` of the dense head, unit norm), to 1e-5;
- in a fresh process where phrasezoo cannot be imported, ``AutoModel.from_pretrained(<repo id>,
  trust_remote_code=True)`` loads every pushed export and encodes, among them the brief's line verbatim on the
  converted PEARL-small stand-in pushed as ``org/pearl-small``; then again with ``HF_HUB_OFFLINE=1`` and the network
  refused, from the cache the first load filled.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from huggingface_hub import ModelCard
from safetensors.torch import load_file
from transformers import AutoModel, AutoTokenizer, LukeConfig, LukeModel, LukeTokenizer

from phrasezoo.hub.convert import convert_release
from phrasezoo.zoo.registry import get_method, list_methods
from tests.recipes_offline.served_hub import ServedHub

from .hub_server import hub_python
from .release_standins import PEARL_BASE, PEARL_SMALL, PHRASE_BERT, UCTOPIC, release_repos

#: (method, release, export folder name, repo id the export is pushed to)
CONVERSIONS = [
    ("pearl", PEARL_SMALL, "pearl-small", "org/pearl-small"),
    ("pearl", PEARL_BASE, "pearl-base", "org/pearl-base"),
    ("phrase_bert", PHRASE_BERT, "phrase-bert", "org/phrase-bert"),
    ("uctopic", UCTOPIC, "uctopic-base", "org/uctopic-base"),
]
PHRASES = ["The New York Times", "new york post", "machine learning models", "Paris!", "the trade agreement signed "
           "in london", "studies of climate change at the university"]  # fmt: skip
#: mentions at the start, the end, inside and next to punctuation ("(Paris)": the authors' tokenizer inserts spaces)
MENTIONS = [
    ("The New York Times reported on climate change.", (4, 18)),
    ("(Paris) was popular.", (1, 6)),
    ("Machine learning models need large datasets.", (0, 16)),
    ("Researchers in London signed the trade agreement.", (33, 48)),
    ("Researchers in London signed the trade agreement.", (15, 21)),
]
BRIEF_PHRASES = ["The New York Times", "NYTimes", "New York Post"]
#: every zoo model type: (method, tiny variant) as the contract tests build them
TINY = [(name, None) for name in list_methods()] + [
    (name, variant) for name in list_methods() for variant in sorted(get_method(name).tiny_variants)
]

CONVERT_AND_PUSH = """
from phrasezoo.cli import main
from phrasezoo.hub.push import push_folder
out = {"codes": [main(["convert", method, repo, folder, "--repo-id", target])
                 for method, repo, folder, target in conversions],
       "pushed": {target: push_folder(folder, target).commit_oid for folder, target in pushes}}
"""
LOAD_BY_REPO_ID = """
import importlib.abc, socket
class BlockPhrasezoo(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "phrasezoo" or name.startswith("phrasezoo."):
            raise ImportError("phrasezoo is blocked in this test")
sys.meta_path.insert(0, BlockPhrasezoo())
if block_network:
    def no_network(*args, **kwargs):
        raise OSError("network access attempted")
    socket.socket.connect = no_network
    socket.create_connection = no_network

from transformers import AutoModel
model = AutoModel.from_pretrained("org/pearl-small", trust_remote_code=True)
emb = model.encode(["The New York Times", "NYTimes", "New York Post"])
out = {"brief": emb.tolist(), "encoded": {}}
for repo, inputs in loads.items():
    inputs = [tuple(x) if isinstance(x, list) else x for x in inputs]
    out["encoded"][repo] = AutoModel.from_pretrained(repo, trust_remote_code=True).encode(inputs, batch_size=3).tolist()
out["phrasezoo_imported"] = any(m == "phrasezoo" or m.startswith("phrasezoo.") for m in sys.modules)
"""


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """The local Hub serving the stand-ins under the releases' repo ids; the stand-ins also on disk (``releases``)."""
    root = tmp_path_factory.mktemp("convert")
    server = ServedHub()
    for repo, files in release_repos().items():
        server.add(repo, files)
        for name, data in files.items():
            (root / "releases" / repo / name).parent.mkdir(parents=True, exist_ok=True)
            (root / "releases" / repo / name).write_bytes(data)
    server.root = root
    with server:
        yield server


@pytest.fixture(scope="module")
def pushed(hub):
    """Every conversion through ``phrasezoo convert <method> <repo id> <folder>``, and every export pushed: the four
    converted ones and a tiny one of each zoo model type (``{repo id: (folder, inputs)}``)."""
    exports = hub.root / "exports"
    loads = {target: (exports / name, MENTIONS if method == "uctopic" else PHRASES)
             for method, _, name, target in CONVERSIONS}  # fmt: skip
    for name, variant in TINY:
        method = get_method(name)
        folder = exports / f"tiny-{name}-{variant or 'default'}"
        model = method.tiny_model(variant).eval()
        model.save_pretrained(folder, safe_serialization=True)
        model.tokenizer.save_pretrained(folder)
        loads[f"org/tiny-{name}-{variant or 'default'}"] = (folder, method.sample_inputs)
    conversions = [(method, repo, str(exports / name), target) for method, repo, name, target in CONVERSIONS]
    out = hub_python(hub, hub.root / "home-convert", CONVERT_AND_PUSH, timeout=600, conversions=conversions,
                     pushes=[(str(folder), repo) for repo, (folder, _) in loads.items()])  # fmt: skip
    assert out["codes"] == [0] * len(CONVERSIONS)
    assert set(out["pushed"]) == set(loads)
    return loads


def _release(hub, repo: str) -> Path:
    return hub.root / "releases" / repo


def _export(pushed, target: str):
    folder, _ = pushed[target]
    return AutoModel.from_pretrained(folder, trust_remote_code=True).eval()


def masked_mean(folder: Path, texts: list[str]) -> torch.Tensor:
    """The PEARL authors' use: the repository's ``AutoTokenizer`` + ``AutoModel``, attention-masked mean pooling."""
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    batch = tokenizer(texts, max_length=512, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"][..., None].to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1)


@pytest.mark.parametrize("target", ["org/pearl-small", "org/pearl-base"])
def test_pearl_equals_the_authors_use(hub, pushed, target):
    repo = next(r for _, r, _, t in CONVERSIONS if t == target)
    reference = F.normalize(masked_mean(_release(hub, repo), PHRASES), dim=-1).numpy()
    np.testing.assert_allclose(_export(pushed, target).encode(PHRASES), reference, rtol=0, atol=1e-5)


def test_phrase_bert_equals_sentence_transformers(hub, pushed):
    """The Phrase-BERT README's call, ``SentenceTransformer(repo).encode`` (unnormalised), and its use without
    sentence-transformers (mean pooling) both equal the converted model's ``encode``."""
    from sentence_transformers import SentenceTransformer

    folder = _release(hub, PHRASE_BERT)
    model = _export(pushed, "org/phrase-bert")
    authors = SentenceTransformer(str(folder), device="cpu").encode(PHRASES)
    np.testing.assert_allclose(model.encode(PHRASES, normalize=False), authors, rtol=0, atol=1e-5)
    np.testing.assert_allclose(model.encode(PHRASES, normalize=False), masked_mean(folder, PHRASES), rtol=0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(model.encode(PHRASES), axis=1), 1.0, atol=1e-6)


def authors_luke_inputs(folder: Path, sentence: str, span: tuple[int, int]) -> tuple[list[int], list[int]]:
    """``UCTopicTokenizer(sentence, entity_spans=[span], add_prefix_space=True)`` (the authors' LukeTokenizer of
    transformers 4.7) written out: the text is cut at the span's ends (moved before a preceding space), each piece is
    BPE-encoded with a leading space when it has none, ``<s>``/``</s>`` wrap it; the entity's position ids are the
    span's token positions (at most 30)."""
    from tokenizers import Tokenizer
    from tokenizers.models import BPE
    from tokenizers.pre_tokenizers import ByteLevel

    vocab = json.loads((folder / "vocab.json").read_text())
    bpe = Tokenizer(BPE.from_file(str(folder / "vocab.json"), str(folder / "merges.txt")))
    bpe.pre_tokenizer = ByteLevel(add_prefix_space=False)
    ids, token_at, cursor = [], {}, 0
    for position in sorted(set(span)):
        cut = position - 1 if position > 0 and sentence[position - 1] == " " else position
        if cut != cursor:
            piece = sentence[cursor:cut]
            ids += bpe.encode(piece if piece[0].isspace() else " " + piece).ids
            cursor = cut
        token_at[position] = len(ids)
    if sentence[cursor:]:
        piece = sentence[cursor:]
        ids += bpe.encode(piece if piece[0].isspace() else " " + piece).ids
    positions = list(range(token_at[span[0]] + 1, token_at[span[1]] + 1))[:30]
    return [vocab["<s>"], *ids, vocab["</s>"]], positions


def authors_uctopic(folder: Path, mentions) -> np.ndarray:
    """The authors' forward pass: LUKE (the release's ``luke.*``, the whole entity table) with the ``[MASK]`` entity
    on the span, ``tanh(mlp.dense(entity state))``, unit-normalised (``UCTopicTool.encode``)."""
    state = torch.load(folder / "pytorch_model.bin", weights_only=True)
    luke = LukeModel(LukeConfig.from_pretrained(folder)).eval()
    missing, unexpected = luke.load_state_dict({k[5:]: v for k, v in state.items() if k.startswith("luke.")}, False)
    assert not missing and unexpected == ["embeddings.position_ids"]
    mask_id = json.loads((folder / "entity_vocab.json").read_text())["[MASK]"]
    tokenizer = LukeTokenizer.from_pretrained(folder, add_prefix_space=True)  # transformers' port of the same call
    vectors = []
    for sentence, span in mentions:
        ids, positions = authors_luke_inputs(folder, sentence, span)
        ported = tokenizer(sentence, entity_spans=[span])
        assert ported["input_ids"] == ids and [p for p in ported["entity_position_ids"][0] if p >= 0] == positions
        with torch.no_grad():
            entity = luke(input_ids=torch.tensor([ids]), entity_ids=torch.tensor([[mask_id]]),
                          entity_position_ids=torch.tensor([[positions + [-1] * (30 - len(positions))]]),
                          entity_attention_mask=torch.tensor([[1]])).entity_last_hidden_state[0, 0]  # fmt: skip
        head = torch.tanh(entity @ state["mlp.dense.weight"].T + state["mlp.dense.bias"])
        vectors.append(F.normalize(head, dim=-1).numpy())
    return np.stack(vectors)


def test_uctopic_equals_the_authors_forward_pass(hub, pushed):
    model = _export(pushed, "org/uctopic-base")
    reference = authors_uctopic(_release(hub, UCTOPIC), MENTIONS)
    np.testing.assert_allclose(model.encode(MENTIONS), reference, rtol=0, atol=1e-5)
    table = model.backbone.entity_embeddings.entity_embeddings.weight
    release = torch.load(_release(hub, UCTOPIC) / "pytorch_model.bin", weights_only=True)
    assert table.shape[0] == 4, "only LUKE's special entities are kept"
    torch.testing.assert_close(table, release["luke.entity_embeddings.entity_embeddings.weight"][:4])


@pytest.mark.parametrize(("method", "repo", "name", "target"), CONVERSIONS, ids=[c[2] for c in CONVERSIONS])
def test_export_credits_the_authors_and_records_the_source(hub, pushed, method, repo, name, target):
    folder, _ = pushed[target]
    revision = hub.repos[repo].head.oid
    config = json.loads((folder / "config.json").read_text())
    assert config["converted_from"] == {"repo_id": repo, "revision": revision}
    assert set(config["auto_map"]) >= {"AutoConfig", "AutoModel"}
    assert not [p for p in folder.iterdir() if p.suffix in (".bin", ".pt", ".pkl")], "safetensors only"
    card = ModelCard.load(folder / "README.md")
    assert card.data.license == ("apache-2.0" if method == "pearl" else "mit")
    assert card.data.base_model == repo and "converted" in card.data.tags
    assert f"`{repo}` at revision\n`{revision}`" in card.text and f'from_pretrained("{target}"' in card.text
    authors = {"pearl": "Chen, Varoquaux & Suchanek", "phrase_bert": "Wang, Thompson & Iyyer",
               "uctopic": "Li, Shang & McAuley"}  # fmt: skip
    assert authors[method] in card.text and "not measurements of this conversion" in card.text


def test_pearl_export_says_what_the_release_lacks(pushed):
    model = _export(pushed, "org/pearl-small")
    assert model.char_encoder is None and model.type_head is None and model.config.type_labels == []
    with pytest.raises(ValueError, match="no phrase-type head"):
        model.predict_type(["The New York Times"])
    card = (pushed["org/pearl-small"][0] / "README.md").read_text()
    assert "phrase-type head" in card and "character encoder" in card


def test_a_local_copy_converts_to_the_same_weights(hub, pushed, tmp_path):
    folder = _release(hub, PEARL_SMALL)
    with pytest.raises(ValueError, match="--source-repo"):
        convert_release("pearl", str(folder), tmp_path / "ambiguous")
    out = convert_release("pearl", str(folder), tmp_path / "local", source_repo=PEARL_SMALL, revision="abc123")
    assert json.loads((out / "config.json").read_text())["converted_from"]["revision"] == "abc123"
    local, hub_export = (
        load_file(out / "model.safetensors"),
        load_file(pushed["org/pearl-small"][0] / "model.safetensors"),
    )
    assert local.keys() == hub_export.keys() and all(torch.equal(local[k], hub_export[k]) for k in local)
    with pytest.raises(FileExistsError, match="--overwrite"):
        convert_release("pearl", str(folder), out, source_repo=PEARL_SMALL)


@pytest.mark.parametrize("method", ["slice", "codebook"])
def test_methods_without_published_weights_are_refused(method, tmp_path, capsys):
    from phrasezoo.cli import main

    assert main(["convert", method, "org/anything", str(tmp_path / "out")]) == 2
    assert re.search(r"published no|published neither", capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


def _expected(pushed) -> dict[str, np.ndarray]:
    """What each pushed export encodes, computed here from its folder."""
    return {repo: _export_from(folder).encode(inputs, batch_size=3) for repo, (folder, inputs) in pushed.items()}


def _export_from(folder: Path):
    return AutoModel.from_pretrained(folder, trust_remote_code=True).eval()


def test_every_model_type_loads_by_repo_id_without_phrasezoo_then_offline(hub, pushed):
    """Online from the local Hub into an empty cache, then ``HF_HUB_OFFLINE=1`` with sockets refused from that
    cache: both in fresh processes where phrasezoo cannot be imported, both equal to the exported folders."""
    loads = {repo: inputs for repo, (_, inputs) in pushed.items()}
    home = hub.root / "home-user"
    online = hub_python(hub, home, LOAD_BY_REPO_ID, timeout=600, loads=loads, block_network=False)
    offline = hub_python(hub, home, LOAD_BY_REPO_ID, env={"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": None}, timeout=600,
                         loads=loads, block_network=True)  # fmt: skip
    assert not online["phrasezoo_imported"] and not offline["phrasezoo_imported"]
    brief = _export_from(pushed["org/pearl-small"][0]).encode(BRIEF_PHRASES)
    for run in (online, offline):
        np.testing.assert_allclose(run["brief"], brief, rtol=0, atol=1e-5)
        for repo, expected in _expected(pushed).items():
            np.testing.assert_allclose(run["encoded"][repo], expected, rtol=0, atol=1e-5, err_msg=repo)

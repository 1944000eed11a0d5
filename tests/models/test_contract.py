"""The model contract of DESIGN.md, checked once for every registered method (each new method gets it for free)."""

from __future__ import annotations

import ast
import importlib
import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModel
from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

from phrasezoo.zoo.registry import OutputKind, get_method, list_methods

METHODS = list_methods()
#: (method, variant): every method's tiny model (variant ``None``: ``tiny_config``) plus its ``tiny_variants``
CASES = [(name, None) for name in METHODS] + [
    (name, variant) for name in METHODS for variant in sorted(get_method(name).tiny_variants)
]
#: what the round trip compares per output kind: ``encode`` always, plus the kind's own entry point
ENTRY_POINTS = {OutputKind.VECTOR: ("encode",), OutputKind.TOKENS: ("encode", "encode_tokens"),
                OutputKind.FACETS: ("encode", "facets")}  # fmt: skip
ALLOWED_TOP_LEVEL = {"torch", "numpy", "transformers", "__future__"}


@pytest.fixture(scope="module", params=METHODS)
def method(request):
    return get_method(request.param)


@pytest.fixture(scope="module", params=CASES, ids=[name if v is None else f"{name}-{v}" for name, v in CASES])
def case(request):
    """A method and which of its tiny models to test (``None``: the one of ``tiny_config``)."""
    name, variant = request.param
    return get_method(name), variant


@pytest.fixture(scope="module")
def exported(case, tmp_path_factory):
    """A tiny random model of the method, saved as a folder the way export does (weights, code, tokenizer)."""
    method, variant = case
    model = method.tiny_model(variant).eval()
    folder = tmp_path_factory.mktemp(f"export-{method.name}-{variant or 'default'}")
    model.save_pretrained(folder, safe_serialization=True)
    model.tokenizer.save_pretrained(folder)
    return model, folder


def test_config_has_auto_map_and_code_files(exported):
    _, folder = exported
    config = json.loads((folder / "config.json").read_text())
    auto_map = config["auto_map"]
    assert set(auto_map) >= {"AutoConfig", "AutoModel"}
    for reference in auto_map.values():
        module_file = reference.split(".")[0] + ".py"
        assert (folder / module_file).exists(), f"{module_file} was not copied next to the weights"
    assert (folder / "model.safetensors").exists()
    assert not list(folder.glob("*.bin")) and not list(folder.glob("*.pt")), "weights must be safetensors only"


def test_model_type_is_not_a_builtin(method):
    assert method.config_class.model_type not in CONFIG_MAPPING_NAMES
    assert method.model_class.config_class is method.config_class


def test_model_files_import_only_allowed_modules(method):
    """stdlib, torch, numpy, transformers and same-folder siblings; anything else only inside try blocks."""
    for module_name in method.model_files:
        module = importlib.import_module(module_name)
        tree = ast.parse(Path(module.__file__).read_text())
        guarded = {id(node) for t in ast.walk(tree) if isinstance(t, ast.Try) for b in t.body for node in ast.walk(b)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: must be a sibling file, no sub-packages
                    assert node.level == 1 and node.module and "." not in node.module, ast.unparse(node)
                    sibling = Path(module.__file__).parent / f"{node.module}.py"
                    assert sibling.exists(), f"{module_name} imports a missing sibling {node.module}"
                    continue
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                allowed = top in sys.stdlib_module_names or top in ALLOWED_TOP_LEVEL
                assert allowed or id(node) in guarded, f"{module_name}: `{ast.unparse(node)}` is not allowed"
                assert top != "phrasezoo", f"{module_name} must not import phrasezoo"


def _arrays(output) -> list[np.ndarray]:
    """Every array in an entry point's output (arrays, tensors, nested lists/tuples of them or of offsets)."""
    if isinstance(output, torch.Tensor):
        return [output.detach().float().cpu().numpy()]
    if isinstance(output, dict):
        return [a for key in sorted(output) for a in _arrays(output[key])]
    if isinstance(output, (list, tuple)) and output and not all(isinstance(x, (int, float)) for x in output):
        return [a for item in output for a in _arrays(item)]
    return [np.asarray(output)]


def test_round_trip_in_fresh_process_without_phrasezoo(exported, case, tmp_path):
    """The folder loads offline, with phrasezoo not importable and sockets blocked, and gives the same outputs from
    every entry point of the method's output kind (``encode``, plus ``encode_tokens`` or ``facets``)."""
    method, _ = case
    model, folder = exported
    entry_points = ENTRY_POINTS[method.output_kind]
    expected = {name: _arrays(getattr(model, name)(method.sample_inputs, batch_size=2)) for name in entry_points}
    inputs_path = tmp_path / "inputs.json"
    inputs_path.write_text(json.dumps(method.sample_inputs))
    script = textwrap.dedent(
        f"""
        import importlib.abc, json, pickle, socket, sys
        class BlockPhrasezoo(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "phrasezoo" or name.startswith("phrasezoo."):
                    raise ImportError("phrasezoo is blocked in this test")
        sys.meta_path.insert(0, BlockPhrasezoo())
        def no_network(*args, **kwargs):
            raise OSError("network access attempted")
        socket.socket.connect = no_network
        socket.create_connection = no_network
        import numpy as np
        from transformers import AutoModel
        model = AutoModel.from_pretrained({str(folder)!r}, trust_remote_code=True)
        assert not any(m == "phrasezoo" or m.startswith("phrasezoo.") for m in sys.modules)
        inputs = json.load(open({str(inputs_path)!r}))
        inputs = [tuple(x) if isinstance(x, list) else x for x in inputs]
        for name in {list(entry_points)!r}:
            with open({str(tmp_path)!r} + "/" + name + ".pkl", "wb") as handle:
                pickle.dump(getattr(model, name)(inputs, batch_size=3), handle)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_MODULES_CACHE=str(tmp_path / "modules"))
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Do you wish to run the custom code" not in proc.stdout + proc.stderr, "loading must never prompt"
    for name in entry_points:
        got = _arrays(pickle.loads((tmp_path / f"{name}.pkl").read_bytes()))
        assert len(got) == len(expected[name]), name
        for a, b in zip(got, expected[name]):
            np.testing.assert_allclose(a, b, atol=1e-5, err_msg=name)


def test_loading_keeps_saved_weights(exported):
    model, folder = exported
    loaded = AutoModel.from_pretrained(folder, trust_remote_code=True)
    original = model.state_dict()
    for key, value in loaded.state_dict().items():
        torch.testing.assert_close(value, original[key], msg=f"{key} changed on load")


def test_bad_inputs_raise_clear_errors(exported, case):
    method, _ = case
    model, _ = exported
    for inputs, message in method.bad_inputs:
        with pytest.raises(ValueError, match=message):
            model.encode(inputs)


def test_encode_is_batch_invariant_normalised_and_typed(exported, case):
    method, _ = case
    model, _ = exported
    one_by_one = np.stack([model.encode([x], batch_size=1)[0] for x in method.sample_inputs])
    batched = model.encode(method.sample_inputs, batch_size=4)
    np.testing.assert_allclose(one_by_one, batched, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    as_tensor = model.encode(method.sample_inputs, convert_to_numpy=False)
    assert isinstance(as_tensor, torch.Tensor) and as_tensor.dtype == torch.float32
    assert np.isfinite(batched).all()
    assert model.training is False or model.training is True  # encode restores the mode; checked below
    model.train()
    model.encode(method.sample_inputs[:1])
    assert model.training
    model.eval()


def test_over_long_input_is_truncated_or_rejected(exported, case):
    method, _ = case
    model, _ = exported
    long_input = _make_long(method.sample_inputs[0], model.config.max_seq_length * 4)
    vector = model.encode([long_input])
    assert np.isfinite(vector).all()
    with pytest.raises(ValueError, match="max_seq_length"):
        model.encode([long_input], truncate=False)


def _make_long(sample, n_words: int):
    if isinstance(sample, str):
        return " ".join(["word"] * n_words)
    sentence, _ = sample
    text = " ".join(["word"] * n_words) + " " + sentence
    return (text, (len(text) - len(sentence), len(text)))

"""CONTRIBUTING.md stays true: every path and every registry name it mentions exists in the tree."""

from __future__ import annotations

import re
from pathlib import Path

import phrasezoo.registry as registry
from phrasezoo.registry import get_method, list_methods

REPO_ROOT = Path(__file__).resolve().parents[1]
TEXT = (REPO_ROOT / "CONTRIBUTING.md").read_text()
CODE_SPANS = re.findall(r"`([^`\n]+)`", TEXT)
#: an example method for the ``<name>`` placeholder (the fullest declaration)
EXAMPLE = "pearl"


def _paths() -> list[str]:
    out = []
    for span in CODE_SPANS:
        for token in span.split():
            token = token.strip(",;:()")
            if "/" in token and not token.startswith(("http", "--")) or token.endswith((".py", ".md", ".yaml")):
                out.append(token)
    return out


def test_mentioned_paths_exist():
    paths = _paths()
    assert len(paths) > 20  # the parser finds the layout and the how-to
    missing = []
    for raw in paths:
        path = raw.replace("<name>", EXAMPLE).replace("<other>", EXAMPLE).rstrip("/")
        if "<function>" in path or "*" in path:  # patterns: check the folder part
            path = path.split("<function>")[0].rsplit(".", 1)[0] if "<function>" in path else path
            matches = list(REPO_ROOT.glob(path)) if "*" in path else [REPO_ROOT]
            if not matches:
                missing.append(raw)
            continue
        if path.startswith("phrasezoo.models."):  # a dotted module path
            path = "src/" + path.replace(".", "/") + ".py"
        if "/" not in path:  # a file name inside a method's folders (any method may be the example)
            homes = ("src/phrasezoo/methods/*/", "src/phrasezoo/models/*/", "tests/methods/*/", "")
            if not any(list(REPO_ROOT.glob(home + path.replace("pearl", "*"))) for home in homes):
                missing.append(raw)
            continue
        if not (REPO_ROOT / path).exists() and not (REPO_ROOT / "src" / "phrasezoo" / path).exists():
            missing.append(raw)
    assert not missing, f"CONTRIBUTING.md mentions paths that do not exist: {missing}"


def test_mentioned_method_fields_and_helpers_exist():
    fields = set(registry.Method.__dataclass_fields__) | {"tiny_model", "card_template"}
    for name in ("output_kind", "from_backbone", "from_config", "requires_backbone", "build_task", "args",
                 "check_recipe", "tiny_config", "tiny_variants", "tiny_tokenizer", "sample_inputs", "bad_inputs",
                 "paper_rows", "model_files", "config_class", "model_class", "description"):  # fmt: skip
        assert f"`{name}`" in TEXT, f"CONTRIBUTING.md does not explain Method.{name}"
        assert name in fields
    for helper in ("signature_args", "validate_args", "Arg", "OutputKind", "Method"):
        assert f"`{helper}" in TEXT and hasattr(registry, helper), helper
    for kind in re.findall(r"`OutputKind\.(\w+)`", TEXT):
        assert hasattr(registry.OutputKind, kind), kind
    assert set(registry.Method.__dataclass_fields__) - {"folder"} <= fields


def test_example_method_matches_the_description():
    method = get_method(EXAMPLE)
    assert EXAMPLE in list_methods()
    folder = method.folder
    for file in ("__init__.py", "task.py", "data.py", "card.md"):
        assert (folder / file).exists(), file
    assert (REPO_ROOT / "tests" / "methods" / EXAMPLE / "__init__.py").exists()

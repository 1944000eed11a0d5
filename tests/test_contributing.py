"""CONTRIBUTING.md stays true: every path and every registry name it mentions exists in the tree."""

from __future__ import annotations

import re
from pathlib import Path

import phrasezoo.zoo.registry as registry
from phrasezoo.zoo.registry import get_method, list_methods

REPO_ROOT = Path(__file__).resolve().parents[1]
TEXT = (REPO_ROOT / "CONTRIBUTING.md").read_text()
CODE_SPANS = re.findall(r"`([^`\n]+)`", TEXT)
#: the worked example, the method whose declaration CONTRIBUTING.md calls the fullest
EXAMPLE = re.search(r"`src/phrasezoo/methods/(\w+)/__init__.py` is the\s+fullest declaration", TEXT).group(1)


def _paths() -> list[str]:
    out = []
    for span in CODE_SPANS:
        for token in span.split():
            token = token.strip(",;:()")
            if "/" in token and not token.startswith(("http", "--")) or token.endswith((".py", ".md", ".yaml")):
                out.append(token)
    return out


def _exists(pattern: str) -> bool:
    """A path (``*`` for a method's name) under the repository root or the package, or a dotted module path."""
    if pattern.startswith("phrasezoo."):  # a dotted module path (its last part may be a function)
        parts = pattern.split(".")
        return any(_exists("src/" + "/".join(parts[:n]) + ".py") for n in (len(parts), len(parts) - 1))
    return any(list(base.glob(pattern)) if "*" in pattern else (base / pattern).exists()
               for base in (REPO_ROOT, REPO_ROOT / "src" / "phrasezoo"))  # fmt: skip


def test_mentioned_paths_exist():
    paths = _paths()
    assert len(paths) > 20  # the parser finds the layout and the how-to
    missing = []
    for raw in paths:
        path = raw.replace(".<function>", "").rstrip("/")
        for placeholder in ("<name>", "<other>", "<application>", "<helper>"):
            path = path.replace(placeholder, "*")
        if "/" not in path and not path.startswith("phrasezoo."):  # a file name inside a method's folders
            homes = ("src/phrasezoo/methods/*/", "src/phrasezoo/methods/*/*/", "src/phrasezoo/models/*/",
                     "tests/methods/*/", "")  # fmt: skip
            found = any(_exists(home + path) for home in homes)
        else:
            found = _exists(path)
        if not found:
            missing.append(raw)
    assert not missing, f"CONTRIBUTING.md mentions paths that do not exist: {missing}"


def test_mentioned_method_fields_and_helpers_exist():
    fields = set(registry.Method.__dataclass_fields__) | {"tiny_model", "card_template"}
    for name in ("output_kind", "from_backbone", "from_config", "requires_backbone", "build_task", "args",
                 "check_recipe", "tiny_config", "tiny_variants", "tiny_tokenizer", "sample_inputs", "bad_inputs",
                 "paper_rows", "model_files", "config_class", "model_class", "description", "topic_commands",
                 "sentence_transformers", "span_context", "task_groups"):  # fmt: skip
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
    for file in ("__init__.py", "task.py", "data.py"):
        assert (folder / file).exists(), file
    assert (REPO_ROOT / "model_cards" / f"{EXAMPLE}.md") == method.card_template and method.card_template.exists()
    assert (REPO_ROOT / "tests" / "methods" / EXAMPLE / "__init__.py").exists()

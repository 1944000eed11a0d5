"""Each Space deploys as its own folder: its README's YAML is a valid Space card, its requirements are pinned (phrasezoo
by the wheel slot that ``phrasezoo push`` fills, never a bare name or an unpublished URL), cover what app.py imports, its default models are the zoo's checkpoints,
and a checkpoint that is not published yet gives a note on the page instead of a crash. Checked on the files and in
this process; ``test_space_build.py`` installs each Space in a fresh venv and queries it."""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib

import gradio as gr
import pytest
from huggingface_hub import SpaceCard
from packaging.utils import canonicalize_name

from phrasezoo.core.recipes import list_recipes, load_recipe
from tests.conftest import REPO_ROOT

from .helpers import SPACES, closure, hub_without_repositories, load_app, read_requirements
from .test_heap_trim import definitions

NAMES = sorted(p.parent.name for p in SPACES.glob("*/app.py"))
#: the keys of the Spaces configuration reference (https://huggingface.co/docs/hub/spaces-config-reference)
CONFIG_KEYS = {
    "title", "emoji", "colorFrom", "colorTo", "sdk", "python_version", "sdk_version", "suggested_hardware",
    "suggested_storage", "app_file", "app_port", "base_path", "app_build_command", "fullWidth", "header",
    "short_description", "models", "datasets", "tags", "thumbnail", "pinned", "hf_oauth", "hf_oauth_scopes",
    "hf_oauth_expiration_minutes", "hf_oauth_authorized_org", "disable_embedding", "startup_duration_timeout",
    "custom_headers", "preload_from_hub", "license",
}  # fmt: skip
COLOURS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}
TORCH_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"
TORCH = "2.13.0"  # DESIGN.md: the CPU wheel this machine holds; pyproject.toml pins it too
MINILM = "sentence-transformers/all-MiniLM-L6-v2"  # the Hub id of the fallback/baseline encoder
NOT_PUBLISHED = "is not published on the Hugging Face Hub yet"
VARIABLES = ("PHRASEZOO_MODEL", "PHRASEZOO_MODEL_K1", "PHRASEZOO_MODELS", "PHRASEZOO_MODELS_DIR", "PNTM_DIR",
             "PHRASEZOO_BASELINE", "PHRASEZOO_BASE_MODEL", "PHRASEZOO_FALLBACK_MODEL")  # fmt: skip
PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]


def constraints() -> dict[str, str]:
    pins = {}
    for line in (REPO_ROOT / "constraints.txt").read_text().splitlines():
        name, _, version = line.partition("==")
        if version:
            pins[canonicalize_name(name)] = version.strip()
    return pins


def wheel_slot(space: str, version: str) -> str:
    """Where a Space's requirements name phrasezoo: the wheel of this version in the Space folder's ``wheels/``, the
    slot ``phrasezoo push`` fills with the wheel and points at its copy on the Hub (docs/spaces.md, "Deploying")."""
    return (SPACES / space / "wheels" / f"phrasezoo-{version}-py3-none-any.whl").as_uri()


@pytest.fixture
def app(request, monkeypatch):
    """``spaces/<name>/app.py`` imported with none of its variables set: the defaults a fresh Space runs with."""
    for variable in VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    module = load_app(request.param)
    module.SPACE_NAME = request.param
    return module


def markdown(demo: gr.Blocks) -> str:
    """All the Markdown text of a page."""
    return "\n".join(str(block.value) for block in demo.blocks.values() if isinstance(block, gr.Markdown))


# ------------------------------------------------------------------------------------------------ README.md
@pytest.mark.parametrize("space", NAMES)
def test_the_readme_is_a_valid_space_card(space):
    card = SpaceCard.load(SPACES / space / "README.md", ignore_metadata_errors=False)
    data = card.data.to_dict()
    assert set(data) <= CONFIG_KEYS, f"unknown Space config keys: {set(data) - CONFIG_KEYS}"
    gradio = next(r for r in read_requirements(space)[1] if r.name == "gradio")
    assert card.data.sdk == "gradio" and card.data.sdk_version == str(gradio.specifier).removeprefix("==")
    assert card.data.sdk_version == constraints()["gradio"]
    # the Space's Python is the one the build test installs and runs it with (the default, 3.10, is too old)
    assert card.data.python_version == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert card.data.app_file == "app.py" and (SPACES / space / card.data.app_file).is_file()
    assert card.data.license == PYPROJECT["license"].lower()
    assert card.data.title and data["emoji"] and {data["colorFrom"], data["colorTo"]} <= COLOURS
    assert 0 < len(data["short_description"]) <= 60 and data["pinned"] is False
    assert card.text.strip().startswith("# "), "the card's text starts with the Space's name"


# ---------------------------------------------------------------------------------------------- requirements
@pytest.mark.parametrize("space", NAMES)
def test_every_requirement_is_pinned_to_the_project_constraints(space):
    options, requirements = read_requirements(space)
    assert options == [TORCH_INDEX], "the only option: PyTorch's CPU index, for torch's CPU build"
    pins = constraints()
    names = [canonicalize_name(r.name) for r in requirements]
    assert len(names) == len(set(names)) and {"torch", "transformers", "gradio"} <= set(names)
    for requirement in requirements:
        name = canonicalize_name(requirement.name)
        if name == "phrasezoo":
            assert requirement.url == wheel_slot(space, PYPROJECT["version"]) and not requirement.specifier
            continue
        assert requirement.url is None and not requirement.extras and not requirement.marker
        specifiers = list(requirement.specifier)
        assert len(specifiers) == 1 and specifiers[0].operator == "==", f"{requirement} is not pinned with =="
        if name == "torch":
            assert specifiers[0].version == f"{TORCH}+cpu", "torch's CPU build: a bare torch pulls CUDA packages"
            assert f"torch=={TORCH}" in PYPROJECT["dependencies"]
        else:
            assert specifiers[0].version == pins.get(name), f"{requirement}: constraints.txt pins {pins.get(name)}"


@functools.cache
def packages_distributions() -> dict[str, list[str]]:
    """``{importable top-level name: [distribution names]}`` of this environment (a scan of every installed package)."""
    return importlib.metadata.packages_distributions()


def imported_modules(tree: ast.AST) -> set[str]:
    """Top-level names of the absolute imports of a module, except those inside ``try ... except ImportError``."""
    optional = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
            h.type is not None and ast.unparse(h.type) in ("ImportError", "ModuleNotFoundError") for h in node.handlers
        ):
            optional |= {id(n) for statement in node.body for n in ast.walk(statement)}
    names = set()
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module != "__future__":
            names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names)


@pytest.mark.parametrize("space", NAMES)
def test_the_requirements_install_everything_app_py_imports(space):
    tree = ast.parse((SPACES / space / "app.py").read_text())
    installed = set(closure(read_requirements(space)[1]))
    providers = packages_distributions()
    for module in sorted(imported_modules(tree)):
        dists = {canonicalize_name(d) for d in providers.get(module, [])}
        assert dists & installed, f"spaces/{space}/app.py imports {module}, which its requirements do not install"


def test_only_the_pearl_demo_needs_phrasezoo():
    """The fuzzy-join tab runs phrasezoo's matcher; every other Space needs only transformers and the model's own
    (remote) code, so it installs no phrasezoo and its many dependencies."""
    needs = {s for s in NAMES if any(r.name == "phrasezoo" for r in read_requirements(s)[1])}
    assert needs == {"pearl-demo"}
    assert "phrasezoo" in imported_modules(ast.parse((SPACES / "pearl-demo" / "app.py").read_text()))


# ------------------------------------------------------------------------------------------ default models
@pytest.mark.parametrize("app", NAMES, indirect=True)
def test_default_models_are_the_zoos_checkpoints(app):
    zoo = {load_recipe(name).repo_id for name in list_recipes()}
    assert app.ZOO_MODELS and set(app.ZOO_MODELS) <= zoo, "every default is a hub_configs/*.yaml repo_id"
    defaults = [getattr(app, name) for name in ("MODEL", "MODEL_K1") if hasattr(app, name)]
    defaults += getattr(app, "MODELS", [])
    assert defaults and set(defaults) <= set(app.ZOO_MODELS)
    extra = []
    if hasattr(app, "PNTM_DIR"):  # the topic model is published beside its encoder
        assert f"{app.MODEL}-pntm" == app.PNTM_DIR
        extra.append(app.PNTM_DIR)
    extra += [MINILM] if MINILM in (SPACES / app.SPACE_NAME / "app.py").read_text() else []
    readme = SpaceCard.load(SPACES / app.SPACE_NAME / "README.md")
    assert readme.data.models == [*app.ZOO_MODELS, *extra], "README models: what the Space downloads by default"


@pytest.mark.parametrize("space", NAMES)
def test_the_unavailable_note_is_a_copy_of_pearl_demos(space):
    source = definitions(ast.parse((SPACES / "pearl-demo" / "app.py").read_text()))["unavailable"]
    own = definitions(ast.parse((SPACES / space / "app.py").read_text()))
    assert "unavailable" in own, f"spaces/{space}/app.py lacks unavailable (copy it from spaces/pearl-demo/app.py)"
    assert ast.unparse(own["unavailable"]) == ast.unparse(source), f"spaces/{space}/app.py: unavailable drifted"


# ------------------------------------------------------------------------------- not published: a note, no crash
@pytest.mark.parametrize("app", ["pearl-demo"], indirect=True)
def test_a_hub_that_cannot_be_reached_gives_a_note(app, monkeypatch, tmp_path):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    model, note = app.load_model("phrasezoo/no-such-checkpoint")
    assert model is None and "could not be downloaded" in note and "`PHRASEZOO_MODEL`" in note
    model, note = app.load_model(str(tmp_path / "missing"))
    assert model is None and "not found" in note


@pytest.mark.parametrize("app", ["pearl-demo"], indirect=True)
def test_a_checkpoint_not_published_yet_gives_a_page_that_says_so(app):
    with hub_without_repositories():
        model, note = app.load_model()
    assert model is None and f"`{app.MODEL}` {NOT_PUBLISHED}" in note and "`PHRASEZOO_MODEL`" in note
    assert note in markdown(app.build_demo(model, note))


@pytest.mark.parametrize("app", ["codebook-facets"], indirect=True)
def test_codebook_facets_not_published(app):
    with hub_without_repositories():
        model, note, model_k1 = app.load_models()
    assert model is None is model_k1 and f"`{app.MODEL}` {NOT_PUBLISHED}" in note
    assert note in markdown(app.build_demo(model, note, model_k1))


@pytest.mark.parametrize("app", ["pntm-explorer"], indirect=True)
def test_pntm_explorer_not_published(app):
    with hub_without_repositories():
        encoder, topic_model, note = app.load_model()
    assert encoder is None is topic_model and f"`{app.MODEL}` {NOT_PUBLISHED}" in note
    assert note in markdown(app.build_demo(encoder, topic_model, note))


@pytest.mark.parametrize("app", ["compare-models"], indirect=True)
def test_compare_models_names_the_models_left_out(app):
    with hub_without_repositories():
        models, notes = app.load_models(None, app.default_baseline())  # the embedded MiniLM copy: no Hub needed
        nothing, all_notes = app.load_models(None, MINILM)
    assert list(models) == ["all-MiniLM-L6-v2 (raw, mean pooling)"]
    assert [re.search(r"`(.+?)`", note).group(1) for note in notes] == list(app.ZOO_MODELS)
    assert all(NOT_PUBLISHED in note for note in notes)
    page = markdown(app.build_demo(models, notes))
    assert "Left out" in page and all(note in page for note in notes)
    assert nothing == {} and len(all_notes) == len(app.ZOO_MODELS) + 1
    assert "No model could be loaded" in markdown(app.build_demo(nothing, all_notes))


@pytest.mark.parametrize("app", ["slice-span-search"], indirect=True)
def test_slice_span_search_not_published(app, monkeypatch):
    with hub_without_repositories():
        base, with_base = app.load_model()  # from the repository: phrasezoo's SLICE pooling on the base encoder
        monkeypatch.setattr(app, "_slice_class", lambda model=None: (_ for _ in ()).throw(ImportError("phrasezoo")))
        model, note = app.load_model()  # the deployed Space: no phrasezoo
    assert base.config.model_type == "phrasezoo_slice" and NOT_PUBLISHED in with_base and "base encoder" in with_base
    assert model is None and f"`{app.MODEL}` {NOT_PUBLISHED}" in note and "base encoder" not in note
    assert note in markdown(app.build_demo(model, note))


@pytest.mark.parametrize("app", ["uctopic-topics"], indirect=True)
def test_uctopic_topics_not_published(app):
    with hub_without_repositories():
        fallback, note = app.load_model()  # the embedded MiniLM copy as the fallback
        model, both = app.load_model(fallback=MINILM)
    assert isinstance(fallback, app.SpanMeanEncoder) and "fallback" in note and NOT_PUBLISHED in note
    assert model is None and f"`{app.MODEL}` {NOT_PUBLISHED}" in both and f"`{MINILM}` {NOT_PUBLISHED}" in both
    assert both in markdown(app.build_demo(model, both))

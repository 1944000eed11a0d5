"""A Gradio Space folder (``spaces/<name>/``) as its Hub repository receives it, with the phrasezoo wheel it installs.

phrasezoo is not on PyPI. A Space that needs it names the wheel in ``requirements.txt`` by a path relative to the
Space folder, ``./wheels/phrasezoo-<version>-py3-none-any.whl`` (a *wheel slot*). ``phrasezoo push`` fills the slot:
it takes the wheel (``--wheel``, a copy already in the folder, or one built from this checkout by
:func:`build_wheel`), uploads it into the Space repository at that path, and writes the line as the URL of that very
file in the same commit, pinned by its sha256 (:func:`staged_requirements`)::

    phrasezoo @ https://huggingface.co/spaces/<owner>/<space>/resolve/main/wheels/phrasezoo-0.1.0-py3-none-any.whl#sha256=...

Why the URL and not the relative path: the Spaces builder runs ``pip install -r`` on ``requirements.txt`` mounted
alone (at ``/tmp/requirements.txt``) before it copies the repository into the image, so during the build a relative
path points at nothing. The URL names only what the push itself publishes, and the hash makes pip refuse any other
file that might later sit at that path.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import SpaceCard
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from phrasezoo.core.files import REPO_ROOT

#: the folder of a Space repository that holds the wheels its requirements install
WHEELS = "wheels"
#: what makes a folder a Space (README.md carries the Spaces YAML header)
SPACE_FILES = ("app.py", "requirements.txt", "README.md")
#: what ``pip wheel`` reads from a checkout (pyproject.toml and setup.py name the rest)
BUILD_FOLDERS = ("src", "hub_configs", "model_cards")
BUILD_FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md")
_SLOT = re.compile(r"^\./(?P<path>[^\s#;]+\.whl)\s*$")


@dataclass(frozen=True)
class WheelSlot:
    """A ``./<path>.whl`` line of a Space's requirements: line ``index``, the wheel's ``path`` (posix, relative to the
    Space folder), and the distribution ``name`` and ``version`` its file name carries."""

    index: int
    path: str
    name: str
    version: str

    @property
    def filename(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def wheel_slots(requirements: str) -> list[WheelSlot]:
    """The wheel slots of a requirements file's text; a ``.whl`` path outside ``wheels/`` is an error."""
    slots = []
    for index, line in enumerate(requirements.splitlines()):
        match = _SLOT.match(line.split(" #", 1)[0].strip())
        if match is None:
            continue
        path = match["path"]
        if not path.startswith(f"{WHEELS}/") or path.count("/") != 1:
            raise ValueError(f"requirements.txt line {index + 1}: a wheel goes in {WHEELS}/ (./{WHEELS}/<file>.whl).")
        try:
            name, version, _, _ = parse_wheel_filename(path.rsplit("/", 1)[-1])
        except InvalidWheelFilename as err:
            raise ValueError(f"requirements.txt line {index + 1}: {err}") from err
        slots.append(WheelSlot(index, path, canonicalize_name(name), str(version)))
    return slots


def space_sdk(folder: str | Path) -> str:
    """The ``sdk`` of a Space folder's card (README.md's YAML header); a clear error when it names none."""
    path = Path(folder) / "README.md"
    try:
        card = SpaceCard.load(path)
    except Exception as err:  # yaml or huggingface_hub's metadata checks: say which file
        raise ValueError(f"{path}: the Space card's metadata does not load ({err}).") from err
    if not card.data.sdk:
        raise ValueError(f"{path} names no `sdk` in its YAML header: not a Space card.")
    return card.data.sdk


def source_checkout(root: Path = REPO_ROOT) -> Path | None:
    """``root`` when it is a phrasezoo source checkout that :func:`build_wheel` can build, else None (an installed
    wheel has no pyproject.toml above the package)."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and re.search(r'(?m)^name = "phrasezoo"$', pyproject.read_text()):
        return root
    return None


def build_wheel(dest: str | Path, root: Path = REPO_ROOT) -> Path:
    """The phrasezoo wheel built from a clean copy of the checkout at ``root`` (no build/ leftovers, nothing written
    into the checkout), offline: ``--no-build-isolation`` uses this environment's setuptools. Returns its path."""
    if source_checkout(root) is None:
        raise FileNotFoundError(f"{root} is not a phrasezoo source checkout: give the wheel to use with --wheel.")
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="phrasezoo-wheel-") as tmp:
        source = Path(tmp) / "source"
        skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
        for folder in BUILD_FOLDERS:
            shutil.copytree(root / folder, source / folder, ignore=skip)
        for file in BUILD_FILES:
            shutil.copy2(root / file, source / file)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q",
             "--disable-pip-version-check", "-w", str(Path(tmp) / "dist")],
            capture_output=True, text=True, cwd=tmp,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"building the phrasezoo wheel failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        built = next((Path(tmp) / "dist").glob("phrasezoo-*.whl"))
        return Path(shutil.copy2(built, dest / built.name))


def slot_wheel(folder: Path, slot: WheelSlot, wheel: str | Path | None, workdir: Path) -> Path:
    """The file that fills ``slot``: ``wheel`` when given, else the copy already in the Space folder, else (for
    phrasezoo) a wheel built from this checkout into ``workdir``. Its file name must be the slot's."""
    if wheel is not None:
        found = Path(wheel)
    elif (folder / slot.path).is_file():
        found = folder / slot.path
    elif slot.name == "phrasezoo":
        found = build_wheel(workdir)
    else:
        raise FileNotFoundError(f"{folder / slot.path} is missing: put the wheel there.")
    if not found.is_file():
        raise FileNotFoundError(f"{found} is not a file.")
    if found.name != slot.filename:
        raise ValueError(
            f"{folder / 'requirements.txt'} installs {slot.filename} but the wheel is {found.name}: build the wheel "
            f"of that version, or name this one in requirements.txt (./{WHEELS}/{found.name})."
        )
    return found


def wheel_url(endpoint: str, repo_id: str, path: str, digest: str, revision: str | None = None) -> str:
    """Where the Space's build downloads a wheel the push uploaded: the file in the Space repository, by revision,
    pinned by its sha256 (pip refuses another file at that URL)."""
    return f"{endpoint.rstrip('/')}/spaces/{repo_id}/resolve/{revision or 'main'}/{path}#sha256={digest}"


def staged_requirements(text: str, urls: dict[int, str], names: dict[int, str]) -> str:
    """``text`` with line ``i`` of each wheel slot replaced by ``<names[i]> @ <urls[i]>``."""
    lines = text.splitlines()
    for index, url in urls.items():
        lines[index] = f"{names[index]} @ {url}"
    return "\n".join(lines) + "\n"


def stage_space(folder: str | Path, files: list[str], out: Path, repo_id: str, endpoint: str,
                wheel: str | Path | None = None, revision: str | None = None) -> list[str]:  # fmt: skip
    """Copy ``files`` of the Space ``folder`` into ``out`` as its repository receives them: each wheel slot filled
    (the wheel at its path) and its requirements line pointing at that file on the Hub. Returns the staged files."""
    folder = Path(folder)
    for name in files:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(folder / name, out / name)
    text = (folder / "requirements.txt").read_text()
    urls, names, staged = {}, {}, list(files)
    for slot in wheel_slots(text):
        found = slot_wheel(folder, slot, wheel, out.parent)
        (out / slot.path).parent.mkdir(parents=True, exist_ok=True)
        if not (out / slot.path).exists():
            shutil.copy2(found, out / slot.path)
        with open(found, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        urls[slot.index] = wheel_url(endpoint, repo_id, slot.path, digest, revision)
        names[slot.index] = slot.name
        staged.append(slot.path)
    (out / "requirements.txt").write_text(staged_requirements(text, urls, names))
    return sorted(set(staged))

"""Small file helpers shared by checkpoints, exports, results files and README tables (stdlib only, cheap to import).

Every file the zoo writes for users goes through a temporary file and ``os.replace``, so an interrupted run never
leaves a half-written file behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from phrasezoo.core.errors import InputError

#: the repository root of a checkout (``src/phrasezoo/core/files.py`` three folders up); in an installed wheel it holds none
#: of the shipped folders, which then come from inside the package (:func:`shipped_folder`)
REPO_ROOT = Path(__file__).resolve().parents[3]
#: the installed package's folder (``phrasezoo/``), where a wheel carries the shipped folders
PACKAGE_DIR = Path(__file__).resolve().parents[1]
#: top-level folders of the repository that a wheel ships inside the package (see ``setup.py``)
SHIPPED_FOLDERS = ("hub_configs", "model_cards")


def shipped_folder(name: str) -> Path:
    """``hub_configs`` (the recipes) or ``model_cards`` (the card templates): the top-level folder of a checkout, or
    the copy that an installed wheel carries inside the package (``phrasezoo/<name>/``)."""
    if name not in SHIPPED_FOLDERS:
        raise ValueError(f"{name!r} is not shipped with phrasezoo; shipped folders: {', '.join(SHIPPED_FOLDERS)}.")
    checkout = REPO_ROOT / name
    return checkout if checkout.is_dir() else PACKAGE_DIR / name


def current_umask() -> int:
    """The process umask (reading it means setting it, so it is set back at once)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask


def readable_replace(tmp: str | os.PathLike, path: str | os.PathLike) -> None:
    """``os.replace`` after giving the temporary file the usual permissions (mkstemp makes it owner-only, 0600)."""
    os.chmod(tmp, 0o666 & ~current_umask())
    os.replace(tmp, path)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    readable_replace(tmp, path)


def write_readme_table(readme: str | os.PathLike, table: str, block: str = "results") -> None:
    """Replace the generated block ``<!-- {block}:start -->`` ... ``<!-- {block}:end -->`` of a README."""
    readme = Path(readme)
    start, end = f"<!-- {block}:start -->", f"<!-- {block}:end -->"
    text = readme.read_text()
    if start not in text or end not in text:
        raise ValueError(f"{readme} has no {start} ... {end} block to fill.")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{start}\n{table}\n{end}{tail}")


def read_user_text(path: str | os.PathLike, what: str = "file") -> str:
    """The text of a user's file as UTF-8 (a byte-order mark is dropped), or :class:`InputError` naming the file, the
    line and the byte that is not UTF-8 (e.g. a Latin-1 or UTF-16 export)."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputError(
            f"{path}: this {what} is not UTF-8 text (line {line}, byte {err.start}: {data[err.start : err.start + 1]!r})."
            " Save it as UTF-8, e.g. `iconv -f latin1 -t utf-8 old > new`."
        ) from None


def read_user_json(path: str | os.PathLike, what: str = "JSON file"):
    """The JSON document in a user's file, or :class:`InputError` naming the file and what is wrong with it: not
    UTF-8, not JSON (line and column), or an object with the same key twice (JSON parsers silently keep the last)."""

    def unique_keys(pairs: list) -> dict:
        keys = [key for key, _ in pairs]
        repeated = sorted({key for key in keys if keys.count(key) > 1})
        if repeated:
            raise InputError(f"{path}: this {what} has the key {repeated[0]!r} twice in one object.")
        return dict(pairs)

    text = read_user_text(path, what)
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as err:
        raise InputError(
            f"{path}: this {what} is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})."
        ) from None

"""What travels to the lent machine and back, and the checks that it fits and arrived whole.

The machine receives at most 64 MiB (the repository's files that travel plus the carried pack) and sends back at most
8 files of at most 16 MiB each. A pack is a folder with a ``manifest.json`` recording every file's size and digest,
so the run refuses a pack that was not carried whole, and unpack refuses returned files that differ from the run's
manifest. Standard library only: the ``phrasezoo device`` commands read these limits before anything heavy loads.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

MiB = 1 << 20
#: the most that travels to the machine (repository + carried pack), and at most how much may come back
TRAVEL_LIMIT_MIB = 64.0
#: files that may come back from a run, each at most RETURN_FILE_MIB
RETURN_FILES = 8
RETURN_FILE_MIB = 16.0
#: files a run writes besides the weight shards: the loss log, the run manifest and the console log (tee)
RETURN_OTHER_FILES = 3
#: largest weight shard a run writes (under RETURN_FILE_MIB, with room for the safetensors header)
SHARD_MIB = 15.0
#: the size limit of a pack, leaving room for the repository within TRAVEL_LIMIT_MIB
DEFAULT_MAX_MIB = 55.0
#: the run call's timeout: a run fits 8 minutes, and a lease of 15 has time to rerun it once
DEFAULT_TIMEOUT_S = 540
#: the safety budget of a run's training, all seeds together, in minutes
DEFAULT_DEVICE_MINUTES = 6.5

PACK_FORMAT = "phrasezoo-device-pack/1"
MANIFEST = "manifest.json"


class PackTooLarge(ValueError):
    """The pack, or what the run would send back, does not fit the machine's transfer limits."""


def sha256_file(path: Path) -> str:
    """The file's sha256, read in blocks of 1 MiB."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(MiB), b""):
            digest.update(block)
    return digest.hexdigest()


def travel_size(repo: Path) -> int:
    """Bytes of the working tree that travels: tracked files plus untracked files git does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout
    total = 0
    for name in filter(None, listed.decode("utf8", "surrogateescape").split("\0")):
        path = repo / name
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
    return total


def folder_size(folder: Path) -> int:
    """Bytes of the files under ``folder``."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def check_fits(pack: Path, max_mib: float, repo: Path | None = None) -> tuple[float, float | None]:
    """``(pack MiB, repository MiB)``; raises :class:`PackTooLarge` when the pack exceeds ``max_mib`` or the two
    together exceed the machine's transfer limit (the repository part only where ``repo`` is a git checkout)."""
    size = folder_size(pack) / MiB
    if size > max_mib:
        raise PackTooLarge(
            f"{pack} is {size:.1f} MiB, over the {max_mib:g} MiB a pack may use (the machine receives at most "
            f"{TRAVEL_LIMIT_MIB:g} MiB with the repository): shrink the recipe's data, or cut vocabulary rows "
            "(--row-cut on)."
        )
    tree = None
    if repo is not None and (repo / ".git").exists():
        tree = travel_size(repo) / MiB
        if tree + size > TRAVEL_LIMIT_MIB:
            raise PackTooLarge(
                f"the repository ({tree:.1f} MiB that travel: tracked and untracked-but-not-ignored files) plus "
                f"{pack} ({size:.1f} MiB) is over the {TRAVEL_LIMIT_MIB:g} MiB that may travel: remove untracked "
                "files, or pack less."
            )
    return size, tree


def file_records(folder: Path) -> dict[str, dict[str, Any]]:
    """``{relative path: {bytes, sha256}}`` of every file under ``folder``: what a manifest records, so the other
    side can check what arrived."""
    return {
        str(p.relative_to(folder)): {"bytes": p.stat().st_size, "sha256": sha256_file(p)}
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def read_manifest(pack: Path) -> dict[str, Any]:
    """The pack's manifest; raises when there is none or it is of another format."""
    path = Path(pack) / MANIFEST
    if not path.exists():
        raise FileNotFoundError(f"{pack} holds no {MANIFEST}: build it with `phrasezoo device pack <recipe>`.")
    manifest = json.loads(path.read_text())
    if manifest.get("format") != PACK_FORMAT:
        raise ValueError(f"{pack} is a {manifest.get('format')!r} pack, not {PACK_FORMAT!r}: rebuild it.")
    return manifest


def verify_files(pack: Path, manifest: dict[str, Any]) -> None:
    """Raise when a file of the pack is missing or differs from what the manifest recorded."""
    for name, info in manifest["files"].items():
        path = Path(pack) / name
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing from the pack: was it carried (the run call's carry list)?")
        if path.stat().st_size != info["bytes"] or sha256_file(path) != info["sha256"]:
            raise ValueError(f"{path} differs from the pack's manifest (corrupted or changed): rebuild the pack.")

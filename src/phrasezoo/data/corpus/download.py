"""Large downloads that resume and are checked: the one way this package fetches a file from an arbitrary URL.

:func:`download` streams ``url`` into ``<target>.part`` through huggingface_hub's HTTP helper
(``huggingface_hub.file_download.http_get``: ``Range`` requests, retries of transient errors within a call), so an
interrupted download resumes from the bytes already in ``.part`` on the next call, and the ``.part`` file is kept
whenever a download stops. The finished file is checked against a ``sha1``/``sha256`` when one is known (given, or,
for a Wikimedia dump, read from the dump directory's ``<wiki>-<date>-sha1sums.txt``) before it is renamed to
``target``; a mismatch is a :class:`ChecksumError` that names both digests and the fix.
"""

from __future__ import annotations

import hashlib
import io
import re
from pathlib import Path

from phrasezoo.core.files import readable_replace

#: ``<wiki>-<date>-<rest>`` of a Wikimedia dump file name, e.g. ``enwiki-latest-pages-articles.xml.bz2``
_WIKIMEDIA_DUMP = re.compile(r"^(?P<wiki>[a-z_]+wiki[a-z]*)-(?P<date>latest|\d{8})-.+")


class ChecksumError(ValueError):
    """A downloaded file's digest differs from the expected one."""


def file_digest(path: str | Path, algorithm: str) -> str:
    """Hex digest of a file, read in 1 MiB blocks."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def wikimedia_sha1sums_url(url: str) -> str | None:
    """The ``<wiki>-<date>-sha1sums.txt`` beside a Wikimedia dump file's URL, or ``None`` for other URLs."""
    base, _, name = url.rstrip("/").rpartition("/")
    match = _WIKIMEDIA_DUMP.match(name)
    if "dumps.wikimedia" not in base or match is None:
        return None
    return f"{base}/{match['wiki']}-{match['date']}-sha1sums.txt"


def _http_get(url: str, handle, **options) -> None:
    """huggingface_hub's HTTP GET into an open file (resume offset, progress bar, proxies and retries as the Hub
    client does them)."""
    from huggingface_hub.file_download import http_get  # lazy: about a second to import, for downloads only

    http_get(url, handle, **options)


def listed_sha1(sums_url: str, name: str) -> str:
    """The sha1 that a Wikimedia ``sha1sums.txt`` (``<sha1>  <file name>`` per line) lists for ``name``."""
    buffer = io.BytesIO()
    _http_get(sums_url, buffer, displayed_filename=sums_url.rsplit("/", 1)[-1])
    for line in buffer.getvalue().decode("utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("*") == name:
            return parts[0].lower()
    raise ChecksumError(f"{sums_url} lists no sha1 for {name}; pass the checksum yourself (sha1=...).")


def download(url: str, target: str | Path, sha1: str | None = None, sha256: str | None = None) -> Path:
    """Download ``url`` to ``target`` once, resumably, and verify it.

    Bytes go to ``<target>.part``; a later call resumes from its size (a ``Range`` request). When the stream ends,
    the file is checked against ``sha256``, else ``sha1``, else the sha1 a Wikimedia dump directory lists for it
    (:func:`wikimedia_sha1sums_url`); other URLs without a digest are taken as they come. On a mismatch the
    ``.part`` file is renamed ``<target>.bad`` (so the next call starts over) and :class:`ChecksumError` is raised.
    """
    target = Path(target)
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    if sha256 is None and sha1 is None and (sums := wikimedia_sha1sums_url(url)) is not None:
        sha1 = listed_sha1(sums, url.rstrip("/").rsplit("/", 1)[-1])
    resume = part.stat().st_size if part.exists() else 0
    with open(part, "ab") as handle:
        _http_get(url, handle, resume_size=resume, displayed_filename=target.name)
    algorithm, expected = ("sha256", sha256) if sha256 else ("sha1", sha1)
    if expected is not None:
        actual = file_digest(part, algorithm)
        if actual != expected.lower():
            bad = target.with_name(target.name + ".bad")
            part.replace(bad)
            raise ChecksumError(
                f"{url}: {algorithm} of the download is {actual}, expected {expected.lower()}. The file is kept as "
                f"{bad}; the next call downloads it again from the start. If the source changed (a 'latest' dump "
                "replaced by a newer one), use the dated dump URL or update the checksum."
            )
    readable_replace(part, target)
    return target

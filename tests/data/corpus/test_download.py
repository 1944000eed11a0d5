"""Resumable, checked downloads (:mod:`phrasezoo.data.corpus.download`) against a local HTTP server thread that answers
``Range`` requests and, on request, cuts its first answer off mid-file. No network."""

from __future__ import annotations

import hashlib
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from phrasezoo.data.corpus import download as dl
from phrasezoo.data.corpus.wiki_links import resolve_wiki_dump

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB


class _Files(BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}
    cut_next: list[int] = []  # byte counts after which the next answers are cut off
    ranges: list[str | None] = []

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        data = self.files.get(self.path)
        if data is None:
            self.send_error(404)
            return
        self.ranges.append(self.headers.get("Range"))
        start = 0
        if (match := re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")) is not None:
            start = int(match[1])
        body = data[start:]
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if self.cut_next:
            self.wfile.write(body[: self.cut_next.pop(0)])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.wfile.write(body)


@pytest.fixture
def server():
    _Files.files, _Files.cut_next, _Files.ranges = {}, [], []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield _Files, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_an_interrupted_download_resumes_and_is_checked(server, tmp_path, monkeypatch):
    files, url = server
    files.files["/dump.xml.bz2"] = PAYLOAD
    files.cut_next.append(300_000)
    monkeypatch.setenv("HF_HUB_DOWNLOAD_TIMEOUT", "5")
    target = tmp_path / "dump.xml.bz2"
    sha1 = hashlib.sha1(PAYLOAD).hexdigest()
    try:  # the cut answer: huggingface_hub resumes within the call, or the call fails and keeps the .part file
        dl.download(f"{url}/dump.xml.bz2", target, sha1=sha1)
    except Exception:  # noqa: BLE001 - whichever error the cut connection gives
        part = tmp_path / "dump.xml.bz2.part"
        assert part.exists() and 0 < part.stat().st_size < len(PAYLOAD)
        dl.download(f"{url}/dump.xml.bz2", target, sha1=sha1)
    assert target.read_bytes() == PAYLOAD and not (tmp_path / "dump.xml.bz2.part").exists()
    # huggingface_hub retries within the call from the bytes it had written (none when the cut fell inside its first
    # 10 MiB read, as here), so the second request starts at 0 or at the cut
    assert files.ranges[0] is None and files.ranges[-1] in (None, "bytes=300000-"), files.ranges
    assert dl.download(f"{url}/dump.xml.bz2", target, sha1="0" * 40) == target  # done: not fetched again
    assert len(files.ranges) == 2


def test_a_kept_part_file_resumes_with_a_range_request(server, tmp_path):
    files, url = server
    files.files["/big.bin"] = PAYLOAD
    (tmp_path / "big.bin.part").write_bytes(PAYLOAD[:123_456])
    dl.download(f"{url}/big.bin", tmp_path / "big.bin", sha256=hashlib.sha256(PAYLOAD).hexdigest())
    assert files.ranges == ["bytes=123456-"] and (tmp_path / "big.bin").read_bytes() == PAYLOAD


def test_a_checksum_mismatch_is_a_clear_error_and_the_next_call_starts_over(server, tmp_path):
    files, url = server
    files.files["/big.bin"] = PAYLOAD
    with pytest.raises(dl.ChecksumError, match=r"sha1 of the download is [0-9a-f]{40}, expected 0{40}.*again"):
        dl.download(f"{url}/big.bin", tmp_path / "big.bin", sha1="0" * 40)
    assert not (tmp_path / "big.bin").exists() and not (tmp_path / "big.bin.part").exists()
    assert (tmp_path / "big.bin.bad").stat().st_size == len(PAYLOAD)
    dl.download(f"{url}/big.bin", tmp_path / "big.bin", sha1=hashlib.sha1(PAYLOAD).hexdigest())
    assert files.ranges == [None, None]


def test_wikimedia_dumps_are_checked_against_the_listed_sha1(server, tmp_path, monkeypatch):
    name = "enwiki-20231101-pages-articles.xml.bz2"
    assert dl.wikimedia_sha1sums_url(f"https://dumps.wikimedia.org/enwiki/20231101/{name}") == (
        "https://dumps.wikimedia.org/enwiki/20231101/enwiki-20231101-sha1sums.txt"
    )
    latest = "https://dumps.wikimedia.org/enwiki/latest/enwiki-latest-pages-articles.xml.bz2"
    assert dl.wikimedia_sha1sums_url(latest).endswith("/enwiki/latest/enwiki-latest-sha1sums.txt")
    assert dl.wikimedia_sha1sums_url("https://example.org/enwiki-latest-pages-articles.xml.bz2") is None
    files, url = server
    sha1 = hashlib.sha1(PAYLOAD).hexdigest()
    files.files["/sums.txt"] = f"{'1' * 40}  enwiki-20231101-abstract.xml.gz\n{sha1}  {name}\n".encode()
    assert dl.listed_sha1(f"{url}/sums.txt", name) == sha1
    with pytest.raises(dl.ChecksumError, match="lists no sha1 for other.bz2"):
        dl.listed_sha1(f"{url}/sums.txt", "other.bz2")
    files.files[f"/{name}"] = PAYLOAD  # resolve_wiki_dump: the URL path, into the cache, checked
    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path / "cache"))
    path = resolve_wiki_dump(f"{url}/{name}", sha1=sha1)
    assert path.read_bytes() == PAYLOAD and path.parent.name == "wikidumps"

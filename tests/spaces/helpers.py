"""Helpers of the Space tests: load a Space's app.py as a module, save a tiny model, serve a demo on a free port."""

from __future__ import annotations

import importlib.util
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SPACES = Path(__file__).resolve().parents[2] / "spaces"


def load_app(space: str):
    """``spaces/<space>/app.py`` imported as a module (Spaces are scripts, not packages)."""
    spec = importlib.util.spec_from_file_location(f"{space.replace('-', '_')}_app", SPACES / space / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    return app


def save_tiny(model, folder: Path) -> str:
    """Save ``model`` with its tokenizer, the way an export does, and return the folder."""
    model.save_pretrained(folder)
    model.tokenizer.save_pretrained(folder)
    return str(folder)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve(demo) -> Iterator[str]:
    """Launch ``demo`` on a free local port and yield its URL; close it afterwards."""
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


def publish_to_cache(hub_cache: Path, repo_id: str, folder: Path | str) -> Path:
    """Put ``folder`` into a Hugging Face hub cache as the ``main`` revision of model ``repo_id``, laid out as
    ``snapshot_download`` leaves it, so that ``from_pretrained(repo_id)`` finds it with ``HF_HUB_OFFLINE=1``."""
    import hashlib

    repo = hub_cache / f"models--{repo_id.replace('/', '--')}"
    commit = hashlib.sha1(repo_id.encode()).hexdigest()
    snapshot = repo / "snapshots" / commit
    for file in sorted(Path(folder).rglob("*")):
        if file.is_file():
            target = snapshot / file.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(file.resolve())
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return snapshot


@contextmanager
def hub_endpoint(url: str, cache: Path | None = None) -> Iterator[str]:
    """``url`` set as huggingface_hub's endpoint for this process, online (and ``cache`` as its Hub cache, when
    given), as ``HF_ENDPOINT`` and ``HF_HUB_CACHE`` would set it; restored afterwards."""
    from huggingface_hub import constants

    saved = constants.ENDPOINT, constants.HUGGINGFACE_CO_URL_TEMPLATE, constants.HF_HUB_OFFLINE, constants.HF_HUB_CACHE
    constants.ENDPOINT, constants.HF_HUB_OFFLINE = url, False
    constants.HUGGINGFACE_CO_URL_TEMPLATE = url + "/{repo_id}/resolve/{revision}/{filename}"
    constants.HF_HUB_CACHE = str(cache) if cache is not None else constants.HF_HUB_CACHE
    try:
        yield url
    finally:
        constants.ENDPOINT, constants.HUGGINGFACE_CO_URL_TEMPLATE, constants.HF_HUB_OFFLINE, constants.HF_HUB_CACHE = (
            saved
        )


@contextmanager
def hub_without_repositories() -> Iterator[str]:
    """A local Hub endpoint that answers every request as the Hub answers for a repository that does not exist
    (404, ``X-Error-Code: RepoNotFound``), set as huggingface_hub's endpoint for this process; yields its URL."""
    import http.server
    import threading

    class NotFound(http.server.BaseHTTPRequestHandler):
        def answer(self) -> None:
            body = b'{"error": "Repository Not Found"}'
            self.send_response(404)
            self.send_header("X-Error-Code", "RepoNotFound")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_HEAD = do_POST = answer

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with hub_endpoint(f"http://127.0.0.1:{server.server_port}") as url:
            yield url
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def hub_serving(folders: dict[str, Path | str], cache: Path) -> Iterator[str]:
    """A local Hub (:class:`tests.recipes_offline.served_hub.ServedHub`) serving each folder as model repository
    ``repo_id`` over HTTP, set as huggingface_hub's endpoint for this process, downloads cached in ``cache``."""
    from tests.recipes_offline.served_hub import ServedHub

    server = ServedHub()
    for repo_id, folder in folders.items():
        files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in Path(folder).rglob("*") if p.is_file()}
        server.add(repo_id, files)
    with server, hub_endpoint(server.url, cache) as url:
        yield url


def closure(requirements) -> dict[str, object]:
    """``{canonical name: installed Distribution}`` of ``requirements`` (``packaging`` Requirements) and everything
    they depend on, read from this environment's metadata (markers evaluated here, extras followed)."""
    import importlib.metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: dict[str, object] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    stack = list(requirements)
    while stack:
        requirement = stack.pop()
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        dist = importlib.metadata.distribution(requirement.name)
        found[key[0]] = dist
        for line in dist.requires or []:
            dependency = Requirement(line)
            extras = requirement.extras or {""}
            if dependency.marker is None or any(dependency.marker.evaluate({"extra": e}) for e in extras):
                stack.append(dependency)
    return found


def read_requirements(space: str) -> tuple[list[str], list]:
    """``(option lines, Requirements)`` of ``spaces/<space>/requirements.txt`` (comments and blank lines dropped); a
    wheel slot (``./wheels/<name>-<version>-...whl``) reads as ``<name> @ file:<the slot's path in the folder>``."""
    from packaging.requirements import Requirement

    from phrasezoo.hub.space import wheel_slots

    text = (SPACES / space / "requirements.txt").read_text()
    slots = {slot.index: slot for slot in wheel_slots(text)}
    options, requirements = [], []
    for index, line in enumerate(text.splitlines()):
        if index in slots:
            path = SPACES / space / slots[index].path
            requirements.append(Requirement(f"{slots[index].name} @ {path.as_uri()}"))
            continue
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            options.append(line)
        else:
            requirements.append(Requirement(line))
    return options, requirements

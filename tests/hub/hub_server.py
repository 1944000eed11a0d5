"""A small in-memory Hugging Face Hub for tests: the HTTP calls huggingface_hub makes to push a model and read it back.

No maintained Hub test server installs offline (huggingface_hub's own tests use the staging Hub,
hub-ci.huggingface.co), so this one answers, on ``http://127.0.0.1:<port>`` (point ``HF_ENDPOINT`` at :attr:`url`):

- ``POST /api/repos/create`` (409 with the URL when the repository exists: ``exist_ok``), creating the repository
  with the Hub's system "initial commit" holding ``.gitattributes``;
- ``POST /api/validate-yaml`` (the card's YAML header must parse to a mapping), ``POST .../preupload/<rev>`` (upload
  mode "lfs" for ``.gitattributes``-tracked types and files of 10 MB or more, "regular" otherwise; the remote oid of
  an existing file, sha256 for LFS and git's blob sha1 otherwise, which lets the client drop unchanged files);
- the LFS basic transfer: ``POST <repo>.git/info/lfs/objects/batch`` (no actions for an object already stored),
  ``PUT`` of the object to a pre-signed URL (no token; its sha256 checked) and ``POST`` verify;
- ``POST .../commit/<rev>``: the NDJSON commit (``file``, ``lfsFile`` whose object must have been uploaded,
  ``deletedFile`` of an existing file, ``deletedFolder``); every accepted commit is recorded, even an empty one;
- ``GET /api/models/<repo>[/revision/<rev>]`` (``sha``, ``siblings``, ``cardData`` parsed from README.md's YAML
  header, as the Hub does), ``.../commits/<rev>``, ``.../tree/<rev>[/<path>]`` (one page, no ``Link`` header);
- ``HEAD``/``GET /<repo>/resolve/<rev>/<path>`` with ``X-Repo-Commit``, ``ETag`` and, for LFS files,
  ``X-Linked-Etag``/``X-Linked-Size`` (what ``hf_hub_download``, hence ``ModelCard.load``, reads).

Space repositories take the same calls under their prefixes (``/api/spaces/<repo>/...``, ``/spaces/<repo>.git/...``,
``/spaces/<repo>/resolve/...``; created with ``"type": "space"``), so a Space is pushed and downloaded as the Hub
does it. Nothing builds or runs it (the Hub's Space builder is not imitated here).

Write calls need ``Authorization: Bearer <token>`` (:attr:`token`); reads do not. :attr:`log` records each request.

What it does NOT check (the real Hub does): the Xet storage protocol (tests set ``HF_HUB_DISABLE_XET=1``, so
huggingface_hub takes its LFS path; with ``hf_xet`` installed the real Hub receives LFS files through Xet), multipart
LFS uploads, branches other than ``main``, pull requests, private-repository visibility and token scopes (any request
carrying the token may write anywhere), namespaces and rate limits, the model-index schema (the Hub rejects a
``model-index`` it cannot read; here only the YAML must parse), ``.gitignore`` handling, pagination, download
redirects to a CDN, and concurrent commits to one branch (``parentCommit`` is ignored).
"""

from __future__ import annotations

import base64
import datetime as dt
import fnmatch
import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

#: what the Hub's default .gitattributes sends to LFS (a subset: the types an export can hold)
LFS_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.pth", "*.ckpt", "*.h5", "*.npy", "*.npz", "*.onnx", "*.model")
LFS_MIN_SIZE = 10 * 1024 * 1024
GITATTRIBUTES = "".join(f"{p} filter=lfs diff=lfs merge=lfs -text\n" for p in LFS_PATTERNS).encode()
REPO = r"(?P<repo>[\w.-]+/[\w.-]+)"


def git_oid(data: bytes) -> str:
    """git's blob id: sha1 of ``blob <size>\\0<data>``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class Blob:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def oid(self) -> str:
        """The oid preupload reports: sha256 for LFS files, git's blob sha1 otherwise (as huggingface_hub compares)."""
        return self.sha256 if self.lfs else git_oid(self.data)


@dataclass
class Commit:
    oid: str
    title: str
    message: str
    date: str
    files: dict[str, Blob]


@dataclass
class Repo:
    repo_id: str
    private: bool
    commits: list[Commit] = field(default_factory=list)

    @property
    def head(self) -> Commit:
        return self.commits[-1]

    def commit(self, title: str, message: str, files: dict[str, Blob]) -> Commit:
        date = dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")
        seed = f"{self.repo_id}\n{len(self.commits)}\n{title}\n" + "\n".join(f"{p}:{b.oid}" for p, b in files.items())
        commit = Commit(hashlib.sha1(seed.encode()).hexdigest(), title, message, date, dict(files))
        self.commits.append(commit)
        return commit


class HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None):
        super().__init__(message)
        self.status, self.code = status, code


class FakeHub:
    """The server; use as a context manager (starts a thread, stops it on exit)."""

    def __init__(self, token: str = "hf_test_token"):
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.spaces: dict[str, Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.log: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ------------------------------------------------------------------------------------------------ routes
    def route(self, method: str, path: str, headers, body: bytes, query: dict | None = None) -> tuple[int, dict, bytes]:
        api, prefix = r"/api/(?P<kind>models|spaces)", r"/(?:(?P<space>spaces)/)?"
        routes = [
            ("POST", r"/api/repos/create", self.create_repo, True),
            ("POST", r"/api/validate-yaml", self.validate_yaml, False),
            ("POST", rf"{api}/{REPO}/preupload/(?P<rev>[^/]+)", self.preupload, True),
            ("POST", rf"{api}/{REPO}/commit/(?P<rev>[^/]+)", self.commit, True),
            ("GET", rf"{api}/{REPO}/commits/(?P<rev>[^/]+)", self.list_commits, False),
            ("GET", rf"{api}/{REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?", self.tree, False),
            ("GET", rf"{api}/{REPO}(?:/revision/(?P<rev>[^/]+))?", self.model_info, False),
            ("POST", rf"{prefix}{REPO}\.git/info/lfs/objects/batch", self.lfs_batch, True),
            ("PUT", r"/lfs-objects/(?P<oid>[0-9a-f]{64})/(?P<signature>[0-9a-f]+)", self.lfs_put, False),
            ("POST", r"/lfs-objects/(?P<oid>[0-9a-f]{64})/verify", self.lfs_verify, True),
            ("GET", rf"{prefix}{REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", self.resolve, False),
            ("HEAD", rf"{prefix}{REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", self.resolve, False),
        ]
        for verb, pattern, handler, write in routes:
            match = re.fullmatch(pattern, path)
            if verb == method and match:
                if write and headers.get("Authorization") != f"Bearer {self.token}":
                    raise HubError(401, "Invalid credentials in Authorization header")
                groups = {k: unquote(v) for k, v in match.groupdict().items() if v is not None}
                if groups.pop("space", None):
                    groups["kind"] = "spaces"
                with self.lock:
                    return handler(body=body, **groups)
        raise HubError(404, f"no route for {method} {path}")

    def _repo(self, repo: str, kind: str = "models") -> Repo:
        store = self.spaces if kind == "spaces" else self.repos
        if repo not in store:
            raise HubError(404, f"Repository {repo} not found", "RepoNotFound")
        return store[repo]

    def _commit_at(self, repo: Repo, rev: str | None) -> Commit:
        for commit in reversed(repo.commits):
            if rev in (None, "main", commit.oid):
                return commit
        raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")

    @staticmethod
    def _json(data, status: int = 200, headers: dict[str, str] | None = None):
        return status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(data).encode()

    def create_repo(self, body: bytes):
        payload = json.loads(body)
        repo_id = f"{payload.get('organization') or 'user'}/{payload['name']}"
        space = payload.get("type") == "space"
        if space and not payload.get("sdk"):
            raise HubError(400, "a Space needs an sdk (gradio, docker or static)")
        store = self.spaces if space else self.repos
        url = f"{self.url}/{'spaces/' if space else ''}{repo_id}"
        if repo_id in store:
            return self._json({"error": f"You already created this {'space' if space else 'model'} repo", "url": url},
                              409)  # fmt: skip
        repo = Repo(repo_id, payload.get("visibility") == "private" or bool(payload.get("private")))
        repo.commit("initial commit", "", {".gitattributes": Blob(GITATTRIBUTES, lfs=False)})
        store[repo_id] = repo
        return self._json({"url": url, "name": repo_id, "id": repo_id})

    def validate_yaml(self, body: bytes):
        content = json.loads(body)["content"]
        match = re.match(r"^---\n(.*?)\n---\n", content, re.S)
        try:
            data = yaml.safe_load(match.group(1)) if match else {}
        except yaml.YAMLError as err:
            return self._json({"errors": [{"message": f"YAML does not parse: {err}"}]}, 400)
        if not isinstance(data, dict):
            return self._json({"errors": [{"message": "metadata must be a YAML mapping"}]}, 400)
        return self._json({"warnings": []})

    def preupload(self, repo: str, rev: str, body: bytes, kind: str = "models"):
        head = self._commit_at(self._repo(repo, kind), rev)
        files = []
        for item in json.loads(body)["files"]:
            lfs = item["size"] >= LFS_MIN_SIZE or any(fnmatch.fnmatch(item["path"], p) for p in LFS_PATTERNS)
            remote = head.files.get(item["path"])
            oid = remote.oid if remote is not None and remote.lfs == lfs else None
            files.append({"path": item["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False,
                          "oid": oid})  # fmt: skip
        return self._json({"files": files, "commitOid": head.oid})

    def lfs_batch(self, repo: str, body: bytes, kind: str = "models"):
        self._repo(repo, kind)
        payload = json.loads(body)
        objects = []
        for obj in payload["objects"]:
            entry = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in self.lfs:
                href = f"{self.url}/lfs-objects/{obj['oid']}"
                upload = f"{href}/{self._signature(obj['oid'])}"  # pre-signed, as the Hub's storage URLs
                entry["actions"] = {"upload": {"href": upload}, "verify": {"href": f"{href}/verify"}}
            objects.append(entry)
        return self._json({"transfer": "basic", "objects": objects, "hash_algo": "sha256"})

    def _signature(self, oid: str) -> str:
        return hashlib.sha256(f"{self.token}:{oid}".encode()).hexdigest()[:16]

    def lfs_put(self, oid: str, signature: str, body: bytes):
        if signature != self._signature(oid):
            raise HubError(403, "bad signature of the upload URL")
        if hashlib.sha256(body).hexdigest() != oid:
            raise HubError(400, "LFS object does not match its sha256")
        self.lfs[oid] = body
        return 200, {}, b""

    def lfs_verify(self, oid: str, body: bytes):
        obj = json.loads(body)
        if oid not in self.lfs or len(self.lfs[oid]) != obj["size"]:
            raise HubError(422, f"LFS object {oid} missing or of another size")
        return self._json({"success": True})

    def commit(self, repo: str, rev: str, body: bytes, kind: str = "models"):
        target = self._repo(repo, kind)
        head = self._commit_at(target, rev)
        files = dict(head.files)
        header = None
        for line in body.decode().splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            key, value = item["key"], item["value"]
            if key == "header":
                header = value
            elif key == "file":
                data = base64.b64decode(value["content"])
                if len(data) >= LFS_MIN_SIZE:
                    raise HubError(400, f"{value['path']}: files of 10 MB or more must go through LFS")
                files[value["path"]] = Blob(data, lfs=False)
            elif key == "lfsFile":
                if value["oid"] not in self.lfs:
                    raise HubError(400, f"{value['path']}: LFS object {value['oid']} was never uploaded")
                files[value["path"]] = Blob(self.lfs[value["oid"]], lfs=True)
            elif key == "deletedFile":
                if value["path"] not in files:
                    raise HubError(404, "A file with this name doesn't exist", "EntryNotFound")
                del files[value["path"]]
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                files = {p: b for p, b in files.items() if not p.startswith(prefix)}
            else:
                raise HubError(400, f"unknown commit operation {key!r}")
        if header is None:
            raise HubError(400, "the commit has no header line")
        commit = target.commit(header["summary"], header.get("description", ""), files)
        return self._json(
            {
                "success": True,
                "commitOid": commit.oid,
                "commitUrl": f"{self.url}/{'spaces/' if kind == 'spaces' else ''}{repo}/commit/{commit.oid}",
            }
        )

    def model_info(self, repo: str, body: bytes, rev: str | None = None, kind: str = "models"):
        target = self._repo(repo, kind)
        head = self._commit_at(target, rev)
        info = {"_id": repo, "id": repo, "modelId": repo, "sha": head.oid, "private": target.private,
                "disabled": False, "gated": False, "downloads": 0, "likes": 0, "lastModified": head.date,
                "createdAt": target.commits[0].date, "siblings": [{"rfilename": p} for p in sorted(head.files)]}  # fmt: skip
        card = head.files.get("README.md")
        match = re.match(r"^---\n(.*?)\n---\n", card.data.decode(), re.S) if card else None
        if match:
            info["cardData"] = yaml.safe_load(match.group(1))
            info["tags"] = info["cardData"].get("tags", [])
        return self._json(info)

    def list_commits(self, repo: str, rev: str, body: bytes, kind: str = "models"):
        target = self._repo(repo, kind)
        head = self._commit_at(target, rev)
        history = target.commits[: target.commits.index(head) + 1]
        return self._json([{"id": c.oid, "title": c.title, "message": c.message, "date": c.date,
                            "authors": [{"user": "system" if i == 0 else "user"}]}
                           for i, c in reversed(list(enumerate(history)))])  # fmt: skip

    def tree(self, repo: str, rev: str, body: bytes, path: str = "", kind: str = "models"):
        head = self._commit_at(self._repo(repo, kind), rev)
        prefix = path.strip("/") + "/" if path.strip("/") else ""
        entries = []
        for name, blob in sorted(head.files.items()):
            if name.startswith(prefix):
                entry = {"type": "file", "oid": git_oid(blob.data), "size": len(blob.data), "path": name}
                if blob.lfs:
                    entry["lfs"] = {"oid": blob.sha256, "size": len(blob.data), "pointerSize": 134}
                entries.append(entry)
        return self._json(entries)

    def resolve(self, repo: str, rev: str, path: str, body: bytes, kind: str = "models"):
        head = self._commit_at(self._repo(repo, kind), rev)
        if path not in head.files:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        blob = head.files[path]
        headers = {"X-Repo-Commit": head.oid, "ETag": f'"{git_oid(blob.data)}"',
                   "Content-Type": "application/octet-stream"}  # fmt: skip
        if blob.lfs:
            headers.update({"X-Linked-Etag": f'"{blob.sha256}"', "X-Linked-Size": str(len(blob.data))})
        return 200, headers, blob.data


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet: the hub keeps its own log
            pass

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    chunk = self.rfile.read(size)
                    self.rfile.readline()
                    if size == 0:
                        return b"".join(chunks)
                    chunks.append(chunk)
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            path = parts.path
            body = self._body() if self.command in ("POST", "PUT") else b""
            hub.log.append((self.command, path))
            try:
                status, headers, payload = hub.route(self.command, path, self.headers, body, parse_qs(parts.query))
            except HubError as err:
                status, headers = err.status, {"Content-Type": "application/json"}
                if err.code:
                    headers["X-Error-Code"] = err.code
                headers["X-Error-Message"] = str(err)
                payload = json.dumps({"error": str(err)}).encode()
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_HEAD = _serve

    return Handler


def hub_env(hub: FakeHub, home: Path) -> dict[str, str]:
    """The environment of a child process that talks to ``hub`` (LFS path: no Xet; a private HF_HOME)."""
    return {**os.environ, "HF_ENDPOINT": hub.url, "HF_TOKEN": hub.token, "HF_HUB_DISABLE_XET": "1",
            "HF_HOME": str(home), "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}  # fmt: skip


def hub_python(hub: FakeHub, home: Path, code: str, env: dict[str, str] | None = None, timeout: float = 120,
               **values) -> dict:  # fmt: skip
    """Run ``code`` (``values`` bound as JSON) in a child process talking to ``hub``; returns its JSON ``out``.

    ``env`` adds to (or, with ``None`` values, removes from) the child's environment, e.g. ``HF_HUB_OFFLINE``.
    """
    script = "import json, sys\n" + "".join(
        f"{k} = json.loads({json.dumps(json.dumps(v))})\n" for k, v in values.items()
    )
    script += textwrap.dedent(code) + "\nprint('RESULT ' + json.dumps(out))\n"
    child_env = {**hub_env(hub, home), **(env or {})}
    child_env = {k: v for k, v in child_env.items() if v is not None}
    done = subprocess.run([sys.executable, "-c", script], env=child_env, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.split("RESULT ", 1)[1])

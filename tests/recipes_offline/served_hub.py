"""The local Hub of :mod:`tests.hub.hub_server`, extended to serve downloads of model AND dataset repositories.

``datasets.load_dataset(<hub id>, streaming=True)`` cannot read a dataset repository from a filled Hub cache under
``HF_HUB_OFFLINE=1`` (tried with datasets 5.2: ``ConnectionError: Couldn't reach 'wikimedia/wikipedia' on the Hub
(OfflineModeIsEnabled)``; its offline mode reads only its own prepared Arrow cache, never streaming data files). So
the recipes' runs talk to this server through ``HF_ENDPOINT`` instead: every download (models, tokenizers, GloVe
KeyedVectors, dataset parquet files) goes through the real huggingface_hub / datasets client code into a fresh
``HF_HUB_CACHE``, which then holds the real layout (``models--org--name/snapshots/<commit>/...``, ``refs/main``).

Added to the push server's routes (reads only): ``GET /api/datasets/<repo>[/revision/<rev>]``, ``GET
/api/{models,datasets}/<repo>/tree/<rev>[/<path>]`` with ``recursive`` and folder entries, ``POST
/api/{models,datasets}/<repo>/paths-info/<rev>``, and ``GET``/``HEAD /datasets/<repo>/resolve/<rev>/<path>`` and
``/<repo>/resolve/...`` answering ``Range`` requests (206), as HfFileSystem reads parquet files in ranges.
"""

from __future__ import annotations

import re

from tests.hub.hub_server import Blob, FakeHub, HubError, Repo, git_oid

#: ``owner/name`` or a legacy id without an owner (``bert-base-uncased``)
REPO = r"(?P<repo>(?:[\w.-]+/)?[\w.-]+)"


class ServedHub(FakeHub):
    """A read-only Hub of prepared repositories: :meth:`add` one, then point ``HF_ENDPOINT`` at :attr:`url`."""

    def __init__(self):
        super().__init__()
        self.datasets: dict[str, Repo] = {}

    def add(self, repo_id: str, files: dict[str, bytes], repo_type: str = "model") -> None:
        repo = Repo(repo_id, private=False)
        lfs = {
            p: len(d) >= 1 << 20 or p.endswith((".safetensors", ".parquet", ".model", ".npy")) for p, d in files.items()
        }
        repo.commit("initial commit", "", {p: Blob(d, lfs=lfs[p]) for p, d in files.items()})
        (self.datasets if repo_type == "dataset" else self.repos)[repo_id] = repo

    def route(self, method: str, path: str, headers, body: bytes, query: dict | None = None):
        query = query or {}
        kinds = {"models": self.repos, "datasets": self.datasets}
        routes = [
            (("GET", "HEAD"), rf"/datasets/{REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", "datasets", self._resolve),
            (("GET", "HEAD"), rf"/{REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", "models", self._resolve),
            (("GET",), rf"/api/(?P<kind>models|datasets)/{REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?", None, self._tree),
            (("POST",), rf"/api/(?P<kind>models|datasets)/{REPO}/paths-info/(?P<rev>[^/]+)", None, self._paths_info),
            (("GET",), rf"/api/datasets/{REPO}(?:/revision/(?P<rev>[^/]+))?", "datasets", self._dataset_info),
            (("GET",), rf"/api/models/{REPO}(?:/revision/(?P<rev>[^/]+))?", "models", self._model_info),
        ]  # fmt: skip
        for verbs, pattern, kind, handler in routes:
            match = re.fullmatch(pattern, path)
            if method in verbs and match:
                groups = {k: v for k, v in match.groupdict().items() if v is not None}
                store = kinds[groups.pop("kind", kind)]
                if groups["repo"] not in store:
                    raise HubError(404, f"Repository {groups['repo']} not found", "RepoNotFound")
                head = self._commit_at(store[groups.pop("repo")], groups.pop("rev", None))
                with self.lock:
                    return handler(head, headers=headers, body=body, query=query, **groups)
        return super().route(method, path, headers, body, query)

    def _resolve(self, head, path: str, headers, **_):
        if path not in head.files:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        blob = head.files[path]
        answer = {"X-Repo-Commit": head.oid, "ETag": f'"{git_oid(blob.data)}"', "Accept-Ranges": "bytes",
                  "Content-Type": "application/octet-stream"}  # fmt: skip
        if blob.lfs:
            answer.update({"X-Linked-Etag": f'"{blob.sha256}"', "X-Linked-Size": str(len(blob.data))})
        wanted = re.fullmatch(r"bytes=(\d+)-(\d*)", headers.get("Range") or "")
        if wanted is None:
            return 200, answer, blob.data
        start = int(wanted[1])
        end = min(int(wanted[2]) if wanted[2] else len(blob.data) - 1, len(blob.data) - 1)
        answer["Content-Range"] = f"bytes {start}-{end}/{len(blob.data)}"
        return 206, answer, blob.data[start : end + 1]

    @staticmethod
    def _entry(name: str, blob: Blob) -> dict:
        entry = {"type": "file", "oid": git_oid(blob.data), "size": len(blob.data), "path": name}
        if blob.lfs:
            entry["lfs"] = {"oid": blob.sha256, "size": len(blob.data), "pointerSize": 134}
        return entry

    def _listing(self, head, prefix: str, recursive: bool) -> list[dict]:
        entries, folders = [], set()
        for name, blob in sorted(head.files.items()):
            if not name.startswith(prefix):
                continue
            parts = name[len(prefix) :].split("/")
            for depth in range(1, len(parts) if recursive else min(2, len(parts))):
                folders.add(prefix + "/".join(parts[:depth]))
            if recursive or len(parts) == 1:
                entries.append(self._entry(name, blob))
        return [{"type": "directory", "oid": "0" * 40, "size": 0, "path": f} for f in sorted(folders)] + entries

    def _tree(self, head, query: dict, path: str = "", **_):
        prefix = path.strip("/") + "/" if path.strip("/") else ""
        recursive = (query.get("recursive") or ["false"])[0].lower() in ("true", "1")
        if prefix and not any(name.startswith(prefix) for name in head.files):
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        return self._json(self._listing(head, prefix, recursive))

    def _paths_info(self, head, body: bytes, **_):
        from urllib.parse import parse_qs

        text = body.decode()
        wanted = parse_qs(text).get("paths") if "=" in text and not text.startswith("{") else None
        if wanted is None:
            import json

            wanted = json.loads(text).get("paths", [])
        out = []
        for path in wanted:
            path = path.strip("/")
            if path in head.files:
                out.append(self._entry(path, head.files[path]))
            elif any(name.startswith(path + "/") for name in head.files) or path == "":
                out.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": path})
        return self._json(out)

    def _model_info(self, head, **_):
        repo = next(r for r in self.repos.values() if head in r.commits)
        return self.model_info(repo.repo_id, b"", head.oid)

    def _dataset_info(self, head, **_):
        repo = next(r for r in self.datasets.values() if head in r.commits)
        info = {"_id": repo.repo_id, "id": repo.repo_id, "sha": head.oid, "private": False, "disabled": False,
                "gated": False, "downloads": 0, "likes": 0, "lastModified": head.date, "tags": [],
                "createdAt": repo.commits[0].date, "siblings": [{"rfilename": p} for p in sorted(head.files)]}  # fmt: skip
        card = head.files.get("README.md")
        match = re.match(r"^---\n(.*?)\n---\n", card.data.decode(), re.S) if card else None
        if match:
            import yaml

            info["cardData"] = yaml.safe_load(match.group(1))
        return self._json(info)

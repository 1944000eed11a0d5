"""Screenshots of a running Space in headless Debian chromium, after its outputs have rendered (stdlib only).

``chromium --screenshot`` shoots at the load event, before a Gradio app's queued events answer, so this drives
chromium through its DevTools protocol instead: open the page, wait (in real time) until a JavaScript condition
holds, then capture the page. Loopback only; no extra Python packages (a minimal WebSocket client).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


def available() -> bool:
    return Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is not None


class _WebSocket:
    """Just enough of RFC 6455 for DevTools: masked text frames out, (possibly fragmented) frames in."""

    def __init__(self, url: str) -> None:
        host_port, path = url[len("ws://") :].split("/", 1)
        host, port = host_port.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        response = b""
        while b"\r\n\r\n" not in response:
            response += self.sock.recv(1)
        if b" 101 " not in response.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"WebSocket handshake failed: {response[:200]!r}")

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("DevTools connection closed")
            data += chunk
        return data

    def send(self, text: str) -> None:
        payload, mask = text.encode(), os.urandom(4)
        n = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                  bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                                  bytes([0x80 | 127]) + struct.pack(">Q", n))  # fmt: skip
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def receive(self) -> str:
        message = b""
        while True:
            first, second = self._read(2)
            n = second & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            message += self._read(n)
            if first & 0x80:
                return message.decode()


def screenshot(
    url: str,
    path: str | os.PathLike,
    ready_js: str,
    timeout: float = 120.0,
    size=(1280, 1600),
    action_js: str | None = None,
) -> bool:
    """Open ``url``, wait until ``ready_js`` evaluates true (or ``timeout``), save a PNG; returns whether it was ready.

    ``action_js`` runs once the page has a button (e.g. a click on one) before waiting for ``ready_js``.
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    profile = tempfile.mkdtemp(prefix="chromium-")
    proc = subprocess.Popen(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--remote-debugging-port={port}",
         f"--window-size={size[0]},{size[1]}", url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=5) as response:
                    pages = [t for t in json.load(response) if t.get("type") == "page"]
                if pages:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not open its DevTools port")
            time.sleep(0.5)
        ws = _WebSocket(pages[0]["webSocketDebuggerUrl"])
        counter = 0

        def call(method: str, **params):
            nonlocal counter
            counter += 1
            ws.send(json.dumps({"id": counter, "method": method, "params": params}))
            while True:
                reply = json.loads(ws.receive())
                if reply.get("id") == counter:
                    return reply.get("result", {})

        ready = False
        deadline = time.monotonic() + timeout
        if action_js:
            while time.monotonic() < deadline:
                found = call("Runtime.evaluate", expression="document.querySelectorAll('button').length > 0",
                             returnByValue=True)  # fmt: skip
                if found.get("result", {}).get("value") is True:
                    break
                time.sleep(0.5)
            time.sleep(3.0)  # let the app connect its event handlers
            call("Runtime.evaluate", expression=action_js)
        while time.monotonic() < deadline:
            value = call("Runtime.evaluate", expression=f"Boolean({ready_js})", returnByValue=True)
            if value.get("result", {}).get("value") is True:
                ready = True
                break
            time.sleep(1.0)
        time.sleep(1.0)  # let the last outputs paint
        shot = call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        Path(path).write_bytes(base64.b64decode(shot["data"]))
        return ready
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)

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


@contextmanager
def serve(demo) -> Iterator[str]:
    """Launch ``demo`` on a free local port and yield its URL; close it afterwards."""
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()

"""Take the Spaces page's screenshots: each Space started as users start it, shown in headless Debian chromium.

    .venv/bin/python docs/screenshots.py [SPACE ...]        # writes docs/assets/space-<name>.png (small PNGs)

Each Space gets the models its load test serves (``benchmarks/space_load.py``: the exported ``outputs/<recipe>``
when there is one, else the recipe's architecture on the embedded pretrained weights, untrained), its example is run
by a click on its first button, and the page is captured once the answer has rendered (or after ``--wait`` seconds).
The PNG is downscaled and quantised to stay small in git.

A Space shows the id it loaded its model by. The load test hands out local folders, so each model folder is first
placed in a private Hugging Face cache under the repo id its recipe publishes (:func:`as_hub_models`; the folder name
when it is no recipe) and the Space loads it by that id, offline: the page names the model as the deployed Space
does (``phrasezoo/pearl-mini``), never a path on this machine.
"""

from __future__ import annotations

import argparse
import io
import os
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the environment variables through which the load test hands a Space its model folders
MODEL_VARIABLES = ("PHRASEZOO_MODEL", "PHRASEZOO_MODEL_K1")
SNAPSHOT = "0" * 40  # the one revision of each staged repository
ASSETS = ROOT / "docs" / "assets"
#: the app's action button: the primary one, else the first large button (tabs and icon buttons are not "lg")
CLICK = (
    "(document.querySelector('button.primary') || [...document.querySelectorAll('button')]"
    ".find(b => b.classList.contains('lg'))).click()"
)
#: rendered once a Gradio app has answered: no pending output and some table, image, highlight or JSON shown
READY = (
    "document.querySelectorAll('.pending, .eta-bar, .progress-text').length === 0 && "
    "([...document.querySelectorAll('table td')].filter(td => td.innerText.trim()).length >= 8 || "
    "document.querySelectorAll('.importance span, canvas, img[src^=\"data:\"]').length > 0)"
)


def small_png(data: bytes, width: int = 1000, colours: int = 96) -> bytes:
    from PIL import Image

    image = Image.open(io.BytesIO(data)).convert("RGB")
    if image.width > width:
        image = image.resize((width, round(image.height * width / image.width)), Image.LANCZOS)
    out = io.BytesIO()
    image.quantize(colors=colours, method=Image.Quantize.MEDIANCUT).save(out, format="PNG", optimize=True)
    return out.getvalue()


def repo_id_of(folder: Path) -> str:
    """The Hub id a model folder is published under: its recipe's ``repo_id`` when the folder is named after a
    recipe (``outputs/<recipe>``), else ``phrasezoo/<folder name>``."""
    from phrasezoo.core.recipes import list_recipes, load_recipe

    return load_recipe(folder.name).repo_id if folder.name in list_recipes() else f"phrasezoo/{folder.name}"


def as_hub_models(env_vars: dict[str, str], cache: Path) -> dict[str, str]:
    """``env_vars`` with each local model folder of :data:`MODEL_VARIABLES` replaced by its Hub id, the folder's
    files linked into ``cache`` (a Hugging Face hub cache: ``models--<org>--<name>/snapshots/<rev>/``, ``refs/main``)
    so that ``from_pretrained(<id>)`` finds them with ``HF_HUB_OFFLINE=1`` and ``HF_HUB_CACHE=cache``."""
    out = dict(env_vars)
    for name in MODEL_VARIABLES:
        folder = Path(env_vars.get(name, ""))
        if not env_vars.get(name) or not (folder / "config.json").is_file():
            continue
        repo_id = repo_id_of(folder.resolve())
        repo = cache / f"models--{repo_id.replace('/', '--')}"
        snapshot = repo / "snapshots" / SNAPSHOT
        snapshot.mkdir(parents=True, exist_ok=True)
        for file in folder.resolve().iterdir():
            if file.is_file() and not (snapshot / file.name).exists():
                (snapshot / file.name).symlink_to(file)
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / "main").write_text(SNAPSHOT)
        out[name] = repo_id
    return out


def main(argv: list[str] | None = None) -> None:
    load = runpy.run_path(str(ROOT / "benchmarks" / "space_load.py"), run_name="phrasezoo_space_load")
    shots = runpy.run_path(str(ROOT / "tests" / "spaces" / "chromium.py"), run_name="phrasezoo_chromium")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spaces", nargs="*", default=sorted(load["SPACES"]), help="Space folders (default: all)")
    parser.add_argument("--wait", type=float, default=120, help="longest wait for an answer, seconds (default 120)")
    args = parser.parse_args(argv)
    ASSETS.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="space-shots-"))
    for space in args.spaces:
        env_vars, models = load["SPACES"][space].setup(workdir, None)
        env_vars = as_hub_models(env_vars, workdir / "hub-cache")
        port = load["free_port"]()
        url = f"http://127.0.0.1:{port}/"
        env = dict(os.environ, GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port),
                   GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", PHRASEZOO_NO_PROGRESS="1",
                   HF_HUB_CACHE=str(workdir / "hub-cache"), **env_vars)  # fmt: skip
        with open(workdir / f"{space}.log", "w") as log:
            server = subprocess.Popen([sys.executable, str(ROOT / "spaces" / space / "app.py")], env=env,
                                      stdout=log, stderr=subprocess.STDOUT, cwd=workdir)  # fmt: skip
            try:
                load["wait_until_up"](url, server)
                raw = workdir / f"{space}.png"
                ready = shots["screenshot"](url, raw, READY, timeout=args.wait, size=(1280, 1400), action_js=CLICK)
                target = ASSETS / f"space-{space}.png"
                target.write_bytes(small_png(raw.read_bytes()))
                print(f"{space}: {target.relative_to(ROOT)} ({target.stat().st_size // 1024} KB; answer shown: "
                      f"{ready}; models: {models})", flush=True)  # fmt: skip
            finally:
                server.terminate()
                server.wait(timeout=30)


if __name__ == "__main__":
    main()

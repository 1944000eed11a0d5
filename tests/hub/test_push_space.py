"""``phrasezoo push`` of a Space folder against the local Hub (:mod:`tests.hub.hub_server`): a Space repository with
the folder's files, the wheel its requirements name uploaded at that path, and the requirements line pointing at
that very file, pinned by its sha256 (:mod:`phrasezoo.hub.space`). ``tests/spaces/test_space_build.py`` installs
what these pushes publish, the real wheel included, the way the Spaces builder does, and starts each app.
"""

from __future__ import annotations

import hashlib
import shutil
import urllib.request
from pathlib import Path

import pytest

from phrasezoo.hub.push import plan_push
from phrasezoo.hub.space import WHEELS, stage_space, wheel_slots

from .hub_server import FakeHub, hub_python

SPACES = Path(__file__).resolve().parents[2] / "spaces"
#: a Space whose requirements install phrasezoo from a wheel slot, and one that installs none
SPACE = next(p.parent.name for p in sorted(SPACES.glob("*/requirements.txt")) if wheel_slots(p.read_text()))
PLAIN = next(p.parent.name for p in sorted(SPACES.glob("*/requirements.txt")) if not wheel_slots(p.read_text()))
WHEEL = wheel_slots((SPACES / SPACE / "requirements.txt").read_text())[0].filename
PUSH = """
from phrasezoo.hub.push import push_folder
result = push_folder(folder, repo_id, wheel=wheel)
out = {"committed": result.committed, "commit": result.commit_oid, "files": result.files, "url": result.repo_url}
"""


@pytest.fixture(scope="module")
def hub():
    with FakeHub() as server:
        yield server


@pytest.fixture
def wheel(tmp_path) -> Path:
    """A stand-in of the phrasezoo wheel (these tests upload it, never install it)."""
    path = tmp_path / "dist" / WHEEL
    path.parent.mkdir()
    path.write_bytes(b"PK\x03\x04 a stand-in wheel " + bytes(range(256)))
    return path


def test_a_space_folder_plans_its_files_and_the_wheel_slot():
    plan = plan_push(SPACES / SPACE)
    assert plan.kind.name == "Gradio Space" and plan.kind.repo_type == "space"
    assert plan.files == ["README.md", "app.py", "requirements.txt"]
    assert plan.wheels == [f"{WHEELS}/{WHEEL}"] and WHEEL.startswith("phrasezoo-")
    assert plan_push(SPACES / PLAIN).wheels == []


def test_push_uploads_the_wheel_into_the_space_and_points_the_requirements_at_it(hub, wheel, tmp_path):
    repo_id = f"phrasezoo-test/{SPACE}"
    first = hub_python(hub, tmp_path / "hf", PUSH, folder=str(SPACES / SPACE), repo_id=repo_id,
                       wheel=str(wheel))  # fmt: skip
    assert first["committed"] and first["url"] == f"{hub.url}/spaces/{repo_id}" and repo_id not in hub.repos
    files = hub.spaces[repo_id].head.files
    assert set(files) == {".gitattributes", "README.md", "app.py", f"{WHEELS}/{WHEEL}", "requirements.txt"}
    assert (
        files[f"{WHEELS}/{WHEEL}"].data == wheel.read_bytes()
        and files["app.py"].data == (SPACES / SPACE / "app.py").read_bytes()
    )
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    url = f"{hub.url}/spaces/{repo_id}/resolve/main/{WHEELS}/{WHEEL}"
    committed = (SPACES / SPACE / "requirements.txt").read_text().splitlines()
    pushed = files["requirements.txt"].data.decode().splitlines()
    changed = [(a, b) for a, b in zip(committed, pushed, strict=True) if a != b]
    assert changed == [(f"./{WHEELS}/{WHEEL}", f"phrasezoo @ {url}#sha256={digest}")]  # the one slot line, filled
    with urllib.request.urlopen(url, timeout=30) as response:  # what the Space's build downloads
        assert hashlib.sha256(response.read()).hexdigest() == digest
    again = hub_python(hub, tmp_path / "hf", PUSH, folder=str(SPACES / SPACE), repo_id=repo_id,
                       wheel=str(wheel))  # fmt: skip
    assert not again["committed"] and len(hub.spaces[repo_id].commits) == 2


def test_a_space_without_a_wheel_slot_uploads_its_files_unchanged(hub, tmp_path):
    repo_id = f"phrasezoo-test/{PLAIN}"
    hub_python(hub, tmp_path / "hf", PUSH, folder=str(SPACES / PLAIN), repo_id=repo_id, wheel=None)
    files = hub.spaces[repo_id].head.files
    assert set(files) == {".gitattributes", "README.md", "app.py", "requirements.txt"}
    assert all(files[f].data == (SPACES / PLAIN / f).read_bytes() for f in files if f != ".gitattributes")


def test_the_wheel_in_the_folder_fills_the_slot_and_a_wheel_of_another_version_is_refused(wheel, tmp_path):
    folder = Path(shutil.copytree(SPACES / SPACE, tmp_path / "space"))
    (folder / WHEELS).mkdir()
    shutil.copy2(wheel, folder / WHEELS / WHEEL)
    plan = plan_push(folder)
    assert plan.files == ["README.md", "app.py", "requirements.txt"]  # the slot is uploaded once, as the slot
    out = tmp_path / "staged"
    staged = stage_space(folder, plan.files, out, "me/space", "https://hub.example")
    assert staged == ["README.md", "app.py", "requirements.txt", f"{WHEELS}/{WHEEL}"]
    assert "https://hub.example/spaces/me/space/resolve/main/" in (out / "requirements.txt").read_text()
    other = tmp_path / "phrasezoo-9.9.9-py3-none-any.whl"
    other.write_bytes(b"PK")
    with pytest.raises(ValueError, match="phrasezoo-9.9.9-py3-none-any.whl"):
        stage_space(folder, plan.files, tmp_path / "staged-2", "me/space", "https://hub.example", wheel=other)


@pytest.mark.parametrize(
    ("line", "message"),
    [("./dist/phrasezoo-0.1.0-py3-none-any.whl", "a wheel goes in wheels/"), ("./wheels/phrasezoo.whl", "wheel")],
)
def test_a_wheel_slot_outside_wheels_or_with_a_bad_name_is_an_error(line, message):
    with pytest.raises(ValueError, match=message):
        wheel_slots(f"torch==2.13.0\n{line}\n")


def test_a_space_card_without_an_sdk_is_refused(tmp_path):
    for name in ("app.py", "requirements.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "README.md").write_text("---\ntitle: x\n---\n# x\n")
    with pytest.raises(ValueError, match="names no `sdk`"):
        plan_push(tmp_path)


def test_cli_dry_run_of_a_space_names_the_wheel_it_would_build(capsys):
    from phrasezoo.cli import main

    assert main(["push", str(SPACES / SPACE), "--repo-id", f"me/{SPACE}", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "Gradio Space, 3 files" in out and f"upload  {WHEELS}/{WHEEL}  (built from this checkout;" in out


def test_cli_push_of_a_space_with_a_wheel_of_another_version_is_one_error_line(tmp_path, capsys):
    from phrasezoo.cli import main

    other = tmp_path / "phrasezoo-9.9.9-py3-none-any.whl"
    other.write_bytes(b"PK")
    code = main(["push", str(SPACES / SPACE), "--repo-id", f"me/{SPACE}", "--wheel", str(other)])
    err = capsys.readouterr().err
    assert code == 2 and "phrasezoo-9.9.9-py3-none-any.whl" in err and "Traceback" not in err  # before any upload

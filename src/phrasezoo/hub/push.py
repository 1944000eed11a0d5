"""Upload an exported folder to the Hub (training state left out)."""

from __future__ import annotations

from pathlib import Path

IGNORE_PATTERNS = ["checkpoints/*", "train_log.jsonl", ".export-*", "*.tmp", ".*"]


def push_folder(folder: str | Path, repo_id: str, private: bool = False, revision: str | None = None) -> str:
    """Create ``repo_id`` if needed and upload ``folder`` with ``huggingface_hub.upload_folder``; returns the URL."""
    from huggingface_hub import create_repo, upload_folder

    folder = Path(folder)
    if not (folder / "config.json").exists():
        raise FileNotFoundError(f"{folder} is not an exported model (no config.json); run `phrasezoo export` first.")
    create_repo(repo_id, private=private, exist_ok=True)
    info = upload_folder(
        repo_id=repo_id,
        folder_path=str(folder),
        ignore_patterns=IGNORE_PATTERNS,
        revision=revision,
        commit_message="Upload phrasezoo model",
    )
    return str(info)

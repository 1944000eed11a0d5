"""uctopic-base's Wikipedia dump is checked against the recipe's ``data.wiki_dump_sha1`` (a local Range server:
tests/data/corpus/test_download.py's fixture)."""

from __future__ import annotations

import pytest

from phrasezoo.data.corpus import download as dl
from tests.data.corpus.test_download import PAYLOAD, server  # noqa: F401  (the fixture)


def test_uctopic_data_checks_the_dump_against_the_recipe_sha1(server, tmp_path, monkeypatch):  # noqa: F811
    from phrasezoo.methods.uctopic.data import build_uctopic_dataset

    files, url = server
    files.files["/enwiki-x.xml.bz2"] = PAYLOAD
    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path / "cache"))
    with pytest.raises(dl.ChecksumError, match="expected 0{40}"):
        build_uctopic_dataset(sources=["hyperlinks"], wiki_dump=f"{url}/enwiki-x.xml.bz2", wiki_dump_sha1="0" * 40,
                              cache=False, progress=False)  # fmt: skip

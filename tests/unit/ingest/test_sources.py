from __future__ import annotations

import bz2
from pathlib import Path

import pytest

from kg_agent.cli import SAMPLE_DUMP
from kg_agent.exceptions import SourceError, UnknownFormatError
from kg_agent.ingest.sources import detect_format, fingerprint


def test_detects_mediawiki_plain_and_bz2_whatever_the_name(tmp_path: Path) -> None:
    assert detect_format(SAMPLE_DUMP) == "mediawiki"
    renamed = tmp_path / "dump.part"
    renamed.write_bytes(bz2.compress(SAMPLE_DUMP.read_bytes()))
    assert detect_format(renamed) == "mediawiki"


def test_detects_passage_formats(tmp_path: Path) -> None:
    p = tmp_path / "c.json"
    p.write_text('[{"title": "A", "text": "x"}]', "utf-8")
    assert detect_format(p) == "passages"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"<html><body>hi</body></html>", "not a MediaWiki export"),
        (b"\x89PNG\r\n\x1a\nbinary", "not a MediaWiki XML dump"),
    ],
)
def test_unknown_formats_are_refused(tmp_path: Path, content: bytes, message: str) -> None:
    p = tmp_path / "thing.bin"
    p.write_bytes(content)
    with pytest.raises(UnknownFormatError, match=message) as info:
        detect_format(p)
    assert "thing.bin" in str(info.value) and "\n" not in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file"):
        detect_format(tmp_path / "absent.xml")


def test_fingerprint_changes_with_content_and_options(tmp_path: Path) -> None:
    p = tmp_path / "a.json"
    p.write_text("[1]", "utf-8")
    fp = fingerprint(p, "passages")
    assert fingerprint(p, "passages") == fp
    assert fingerprint(p, "passages", "limit=5") != fp
    p.write_text("[2]", "utf-8")
    assert fingerprint(p, "passages") != fp

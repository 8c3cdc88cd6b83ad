"""What ``kg-agent update`` compares: each page's revision and digest, and whether a
source is a full dump (so the pages it lacks were deleted)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from kg_agent.ingest.mediawiki import iter_dump_pages
from kg_agent.ingest.passages import iter_passage_pages
from kg_agent.ingest.update import is_full_dump

PAGE = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">
  <page>
    <title>Albedo</title>
    <ns>0</ns>
    <id>39</id>
    <revision>
      <id>715952044</id>
      {sha1}
      <text xml:space="preserve">'''Albedo''' is the reflecting power of a surface.</text>
    </revision>
  </page>
</mediawiki>
"""


def _page(tmp_path: Path, sha1: str) -> object:
    path = tmp_path / "a.xml"
    path.write_text(PAGE.format(sha1=sha1), encoding="utf-8")
    (page,) = iter_dump_pages(path)
    return page


def test_a_page_carries_its_revision_and_the_dumps_sha1(tmp_path: Path) -> None:
    page = _page(tmp_path, "<sha1>2o71pezgb3tyi4t6wk2ftuf6j632uyn</sha1>")
    assert page.revision == 715952044  # type: ignore[attr-defined]
    assert page.digest == "2o71pezgb3tyi4t6wk2ftuf6j632uyn"  # type: ignore[attr-defined]


def test_without_a_sha1_the_digest_hashes_the_text(tmp_path: Path) -> None:
    page = _page(tmp_path, "")
    text = "'''Albedo''' is the reflecting power of a surface."
    expected = "b2:" + hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
    assert page.digest == expected  # type: ignore[attr-defined]


def test_a_passage_digest_changes_with_its_text(tmp_path: Path) -> None:
    def digests(text: str) -> dict[str, str]:
        path = tmp_path / "c.json"
        path.write_text(f'[{{"title": "A", "text": "{text}"}}, {{"title": "B", "text": "b"}}]')
        return {p.title: p.digest for p in iter_passage_pages(path)}

    one, two = digests("first"), digests("second")
    assert one["A"] != two["A"] and one["B"] == two["B"] and one["A"].startswith("b2:")


def test_full_dumps_by_name_and_corpora_always() -> None:
    assert is_full_dump("/d/enwiki-20261201-pages-articles.xml.bz2", "mediawiki")
    assert is_full_dump("enwiki-20261201-pages-articles-multistream.xml.bz2", "mediawiki")
    assert not is_full_dump("enwiki-20261201-pages-articles1.xml-p1p41242.bz2", "mediawiki")
    assert is_full_dump("simplewiki-20261201-pages-meta-current.xml.bz2", "mediawiki")
    assert not is_full_dump("Wikipedia-20261125120000.xml", "mediawiki")  # Special:Export
    assert not is_full_dump("/dumps/pages-articles/export.xml", "mediawiki")  # name, not folder
    assert is_full_dump("corpus.json", "passages")

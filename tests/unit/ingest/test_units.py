"""Cutting dumps into work units, and parsing a unit's pages (real bz2/XML files, small)."""

from __future__ import annotations

import bz2
from pathlib import Path

import pytest

from kg_agent.exceptions import SourceError
from kg_agent.ingest.mediawiki import iter_dump_pages, iter_fragment_pages
from kg_agent.ingest.units import plan_dump, read_unit, stream_units

HEADER = (
    '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" xml:lang="en">\n'
    "  <siteinfo>\n    <namespaces>\n"
    '      <namespace key="0" case="first-letter" />\n'
    '      <namespace key="14" case="first-letter">Kategorie</namespace>\n'
    "    </namespaces>\n  </siteinfo>\n"
)
FOOTER = "</mediawiki>\n"


def page(i: int, body: str = "") -> str:
    text = (
        body or f"Page {i} links to [[Page {i + 1}]] and [[Kategorie:Things]].\n\n== Part ==\nMore."
    )
    return (
        f"  <page>\n    <title>Page {i}</title>\n    <ns>0</ns>\n    <id>{i}</id>\n"
        f'    <revision>\n      <id>{1000 + i}</id>\n      <text xml:space="preserve">{text}'
        "</text>\n    </revision>\n  </page>\n"
    )


def dump(n: int) -> str:
    return HEADER + "".join(page(i) for i in range(n)) + FOOTER


def multistream(path: Path, n: int, per: int) -> list[int]:
    """Write a multistream .bz2 (header stream, ``per`` pages a stream, footer); offsets."""
    pages = [page(i) for i in range(n)]
    chunks = [HEADER] + ["".join(pages[i : i + per]) for i in range(0, n, per)] + [FOOTER]
    offsets, data = [], b""
    for c in chunks:
        offsets.append(len(data))
        data += bz2.compress(c.encode())
    path.write_bytes(data)
    return offsets


def test_plain_xml_units_start_at_pages_and_cover_every_page(tmp_path: Path) -> None:
    src = tmp_path / "d.xml"
    src.write_text(dump(300), "utf-8")
    plan = plan_dump(src, chunk_bytes=4096)
    assert plan.layout == "plain" and len(plan.units) > 5
    assert plan.namespaces == {"Kategorie": 14}
    data = src.read_bytes()
    titles = []
    for u in plan.units:
        assert data[u.start : u.start + 6] == b"<page>"
        last = u.index == len(plan.units) - 1
        pages = iter_fragment_pages(
            read_unit(plan, u), plan.namespaces, source="d", where="x", last=last
        )
        titles += [p.title for p in pages]
    assert titles == [p.title for p in iter_dump_pages(src)]
    assert titles == [f"Page {i}" for i in range(300)]


def test_localised_category_namespace_is_read_from_the_header(tmp_path: Path) -> None:
    src = tmp_path / "d.xml"
    src.write_text(dump(3), "utf-8")
    plan = plan_dump(src)
    (unit,) = plan.units
    pages = list(
        iter_fragment_pages(
            read_unit(plan, unit), plan.namespaces, source="d", where="x", last=True
        )
    )
    assert pages[0].categories == ("Things",)


def test_multistream_index_and_scan_agree(tmp_path: Path) -> None:
    src = tmp_path / "d-multistream.xml.bz2"
    offsets = multistream(src, 250, per=10)
    index = tmp_path / "d-multistream-index.txt.bz2"
    lines = [f"{offsets[1 + i // 10]}:{i}:Page {i}\n" for i in range(250)]
    index.write_bytes(bz2.compress("".join(lines).encode()))
    by_index = plan_dump(src, chunk_bytes=600)
    src2 = tmp_path / "other" / src.name
    src2.parent.mkdir()
    src2.write_bytes(src.read_bytes())
    by_scan = plan_dump(src2, chunk_bytes=600)
    assert by_index.index_path == str(index) and by_scan.index_path is None
    assert [(u.start, u.end) for u in by_index.units] == [(u.start, u.end) for u in by_scan.units]
    assert by_index.units[0].start == offsets[1]  # the header stream is no unit
    assert by_index.units[-1].end == src.stat().st_size  # the footer is in the last one
    assert by_index.namespaces == {"Kategorie": 14}


def test_truncated_multistream_names_the_stream(tmp_path: Path) -> None:
    src = tmp_path / "d-multistream.xml.bz2"
    multistream(src, 100, per=10)
    data = src.read_bytes()
    src.write_bytes(data[: len(data) - 200])
    with pytest.raises(SourceError, match="truncated") as err:
        plan = plan_dump(src, chunk_bytes=1 << 20)
        for u in plan.units:
            read_unit(plan, u)
    assert "byte" in str(err.value)


def test_stream_units_end_at_pages_and_the_last_holds_the_footer(tmp_path: Path) -> None:
    src = tmp_path / "d.xml.bz2"
    src.write_bytes(bz2.compress(dump(200).encode()))
    plan = plan_dump(src)
    assert plan.layout == "stream"
    units = list(stream_units(plan, chunk_bytes=2048))
    assert len(units) > 5
    for _u, data, last in units[:-1]:
        assert data.lstrip().startswith(b"<page>") and data.endswith(b"</page>") and not last
    assert units[-1][2] and units[-1][1].rstrip().endswith(b"</mediawiki>")
    assert b"".join(d for _u, d, _l in units) in dump(200).encode()


def test_truncated_single_stream_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KG_AGENT_NO_PARALLEL_BZ2", "1")
    src = tmp_path / "d.xml.bz2"
    data = bz2.compress(dump(20000).encode())  # several bz2 blocks: the start is whole
    src.write_bytes(data[: len(data) // 2])
    plan = plan_dump(src)
    with pytest.raises(SourceError, match="truncated"):
        list(stream_units(plan, chunk_bytes=2048))


@pytest.mark.parametrize(
    ("data", "last", "message"),
    [
        (b"junk <page></page>", False, "text outside any <page>"),
        (page(1).encode() + b"  <page>\n    <title>Cut", False, "not closed"),
        (page(1).encode(), True, "without </mediawiki>"),
        (page(1).encode().replace(b"</title>", b"</titel>"), False, "malformed XML"),
    ],
)
def test_a_broken_unit_is_a_source_error(data: bytes, last: bool, message: str) -> None:
    with pytest.raises(SourceError, match=message):
        list(iter_fragment_pages(data, {}, source="d.xml", where="part 3", last=last))


def test_truncated_plain_xml_is_an_error(tmp_path: Path) -> None:
    src = tmp_path / "d.xml"
    text = dump(50)
    src.write_text(text[: len(text) - 300], "utf-8")
    plan = plan_dump(src, chunk_bytes=2048)
    last = plan.units[-1]
    with pytest.raises(SourceError):
        list(
            iter_fragment_pages(
                read_unit(plan, last), plan.namespaces, source="d", where="x", last=True
            )
        )


@pytest.mark.parametrize("layout", ["plain", "multistream"])
def test_a_page_is_read_again_alone_from_the_offset_its_first_read_gave(
    tmp_path: Path, layout: str
) -> None:
    """What an update's reparse relies on: each page's offset leads back to that page
    (in a multistream file, to the one stream holding it)."""
    from kg_agent.ingest.units import read_pages_at, read_unit_located

    src = tmp_path / ("d.xml" if layout == "plain" else "d.xml.bz2")
    if layout == "plain":
        src.write_text(dump(120), "utf-8")
    else:
        multistream(src, 120, per=7)
    plan = plan_dump(src, chunk_bytes=2048 if layout == "plain" else 512)
    assert plan.layout == layout and len(plan.units) > 3
    offsets: dict[str, int] = {}
    for u in plan.units:
        data, locate = read_unit_located(plan, u)
        last = u.index == len(plan.units) - 1
        for p in iter_fragment_pages(
            data, plan.namespaces, source="d", where="x", last=last, locate=locate
        ):
            assert p.offset is not None
            offsets[p.title] = p.offset
    assert len(offsets) == 120
    for title in ("Page 0", "Page 6", "Page 7", "Page 64", "Page 119"):
        again = read_pages_at(plan, [offsets[title]])
        pages = list(iter_fragment_pages(again, plan.namespaces, source="d", where="x", last=False))
        assert title in [p.title for p in pages]
        assert len(pages) == 1 if layout == "plain" else 1 <= len(pages) <= 7  # a stream
    both = read_pages_at(plan, [offsets["Page 3"], offsets["Page 100"]])
    got = [
        p.title
        for p in iter_fragment_pages(both, plan.namespaces, source="d", where="x", last=False)
    ]
    assert "Page 3" in got and "Page 100" in got and "Page 50" not in got

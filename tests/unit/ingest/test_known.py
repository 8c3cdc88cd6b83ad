"""An update's parse keeps the pages the graph already has without parsing them, and a
reparse reads back only the pages it is asked for (``kg_agent.ingest.known``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kg_agent.ingest.known import KnownPages, PageFilter, link_targets, page_key, write_keys
from kg_agent.ingest.mediawiki import _LEFT_OUT, _skimmed, iter_dump_pages, iter_fragment_pages
from kg_agent.ingest.records import ParsedPage
from kg_agent.ingest.shards import ShardBuilder

DUMP = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">
  <page>
    <title>Albedo</title><ns>0</ns><id>39</id>
    <revision><id>715952044</id><sha1>aaa</sha1>
      <text xml:space="preserve">'''Albedo''' is the reflecting power of a [[surface]].
[[Category:Climate]]</text>
    </revision>
  </page>
  <page>
    <title>Anarchism</title><ns>0</ns><id>12</id>
    <revision><id>700000001</id><sha1>bbb</sha1>
      <text xml:space="preserve">'''Anarchism''' is a [[political philosophy]].</text>
    </revision>
  </page>
  <page>
    <title>Reflectivity</title><ns>0</ns><id>40</id><redirect title="Albedo" />
    <revision><id>5</id><text xml:space="preserve">#REDIRECT [[Albedo]]</text></revision>
  </page>
</mediawiki>
"""


def _dump(tmp_path: Path) -> Path:
    path = tmp_path / "d.xml"
    path.write_text(DUMP, encoding="utf-8")
    return path


def test_a_known_page_is_kept_without_its_text_and_the_rest_is_parsed(tmp_path: Path) -> None:
    known = tmp_path / "known.npy"
    write_keys(known, [page_key("Albedo", 39, 715952044, "aaa")])
    pages = {p.title: p for p in iter_dump_pages(_dump(tmp_path), pages=PageFilter(str(known)))}
    albedo = pages["Albedo"]
    assert albedo.kept and albedo.sections == () and albedo.categories == ()
    assert (albedo.page_id, albedo.revision, albedo.digest) == (39, 715952044, "aaa")
    assert not pages["Anarchism"].kept and pages["Anarchism"].sections
    assert pages["Reflectivity"].redirect_to == "Albedo"  # redirects are always read


def test_another_revision_of_a_known_title_is_parsed(tmp_path: Path) -> None:
    known = tmp_path / "known.npy"
    write_keys(known, [page_key("Albedo", 39, 715952043, "aaa"), page_key("Albedo", 39, 1, "x")])
    (albedo, *_) = iter_dump_pages(_dump(tmp_path), pages=PageFilter(str(known)))
    assert not albedo.kept and albedo.categories == ("Climate",)


def test_a_reparse_reads_only_the_pages_asked_for(tmp_path: Path) -> None:
    only = tmp_path / "only.npy"
    write_keys(only, [page_key("Anarchism", 12, 700000001, "bbb")])
    pages = list(iter_dump_pages(_dump(tmp_path), pages=PageFilter(only=str(only))))
    assert [p.title for p in pages] == ["Anarchism"]
    assert pages[0].sections[0].links == ("Political philosophy",)


def test_keys_are_looked_up_exactly(tmp_path: Path) -> None:
    path = tmp_path / "k.npy"
    keys = [page_key(f"T{i}", i, i, "d") for i in range(1000)]
    assert write_keys(path, keys + keys[:10]) == 1000  # stored once each
    found = KnownPages(str(path))
    assert all(k in found for k in keys)
    assert page_key("T1", 1, 2, "d") not in found and page_key("T1", None, 1, "d") not in found
    write_keys(path, [])
    assert keys[0] not in KnownPages(str(path))


def test_a_kept_page_is_one_article_row_marked_kept(tmp_path: Path) -> None:
    known = tmp_path / "known.npy"
    write_keys(known, [page_key("Albedo", 39, 715952044, "aaa")])
    builder = ShardBuilder(0)
    for page in iter_dump_pages(_dump(tmp_path), pages=PageFilter(str(known))):
        builder.add(page)
    rows = {r["title"]: r for r in builder.rows("articles")}
    assert rows["Albedo"]["kept"] and rows["Albedo"]["n_sections"] == 0
    assert not rows["Anarchism"]["kept"] and rows["Anarchism"]["n_sections"] == 1
    assert [r["article"] for r in builder.rows("sections")] == ["Anarchism"]
    assert [r["from"] for r in builder.rows("categories")] == []
    assert builder.counts["kept"] == 1 and builder.counts["articles"] == 2


def _raw_texts(path: Path) -> dict[str, str]:
    """Title → wikitext of every page of a dump, read without the parser."""
    import bz2
    import xml.etree.ElementTree as ET

    from kg_agent.ingest.titles import normalize_title

    opener = bz2.open if path.suffix == ".bz2" else open
    out: dict[str, str] = {}
    with opener(path, "rb") as fh:
        for _event, elem in ET.iterparse(fh):
            if elem.tag.rpartition("}")[2] != "page":
                continue
            title = text = ""
            for node in elem.iter():
                name = node.tag.rpartition("}")[2]
                if name == "title":
                    title = node.text or ""
                elif name == "text":
                    text = node.text or ""
            out[normalize_title(title)] = text
            elem.clear()
    return out


def _dumps(shared: Path, tmp_path: Path) -> list[Path]:
    from tests.support.synth import generate

    wiki = sorted(p for p in (shared / "wiki").iterdir() if p.name.endswith((".xml", ".xml.bz2")))
    return [*wiki, Path(generate(300, tmp_path, seed=11)["xml"])]


def test_link_targets_hold_every_link_the_parser_reads(
    shared_data_dir: Path, tmp_path: Path
) -> None:
    """The superset an update's reparse relies on (a link it missed would leave an
    article linked to what a redirect used to mean), on every page of every shared dump
    and of a synthetic one."""
    checked = links = 0
    for dump in _dumps(shared_data_dir, tmp_path):
        texts = _raw_texts(dump)
        for page in iter_dump_pages(dump, keep_link_only_sections=True):
            if page.is_redirect:
                continue
            parsed = {t for sec in page.sections for t in sec.links}
            missing = parsed - link_targets(texts[page.title])
            assert not missing, f"{dump.name} {page.title!r}: {sorted(missing)[:5]}"
            checked += 1
            links += len(parsed)
    assert checked > 1000 and links > 15000


def test_link_targets_cases() -> None:
    text = (
        "See [[ paris_France#History |the city]], [[:Category:X]], [[AT&amp;T]], "
        "[[Caf%C3%A9]] and <!-- [[Hidden]] --> {{Main|Louvre|l1=the museum}} "
        "{{see also|Portal:Seine{{!}}river|Seine}} [[Bad{{x}}]]"
    )
    found = link_targets(text)
    assert {"Paris France", "Category:X", "AT&T", "Café", "Louvre", "The museum"} <= found
    assert "Seine" in found and "Hidden" not in found


# ------------------------------------------------- kept pages recognised from their bytes
def _unit(text: str | bytes) -> bytes:
    """A dump's pages as a parse unit holds them (from the first ``<page>`` on)."""
    data = text.encode() if isinstance(text, str) else text
    return data[data.find(b"<page>") :]


def _fragment_pages(data: bytes, pages: PageFilter | None, *, fast: bool) -> list[Any]:
    import pytest

    with pytest.MonkeyPatch.context() as mp:
        if not fast:
            mp.setattr(PageFilter, "keeps_from_bytes", property(lambda self: False))
        return list(
            iter_fragment_pages(
                data,
                {},
                source="d",
                where="unit 0",
                last=b"</mediawiki>" in data[-64:],
                pages=pages,
                locate=lambda i: i,
            )
        )


def _plain_dumps(shared: Path, tmp_path: Path) -> list[Path]:
    from kg_agent.cli import SAMPLE_DUMP

    return [p for p in _dumps(shared, tmp_path) if p.suffix == ".xml"] + [Path(SAMPLE_DUMP)]


def test_pages_kept_from_their_bytes_are_the_pages_the_tree_keeps(
    shared_data_dir: Path, tmp_path: Path
) -> None:
    """On every plain shared dump, the shipped sample and a synthetic dump, with every
    article's key known: the same pages, in the same order, with the same fields, as
    when each page's element tree decides; the bytes recognise every kept page that has
    a ``<sha1>`` (exports without one are parsed as before), and redirects and pages of
    other namespaces from their heads."""
    kept = skimmed = 0
    for dump in _plain_dumps(shared_data_dir, tmp_path):
        data = _unit(dump.read_bytes())
        parsed = _fragment_pages(data, None, fast=False)
        known = tmp_path / f"{dump.name}.npy"
        write_keys(
            known,
            [page_key(p.title, p.page_id, p.revision, p.digest) for p in parsed if p.digest],
        )
        flt = PageFilter(str(known))
        slow = _fragment_pages(data, flt, fast=False)
        fast = _fragment_pages(data, flt, fast=True)
        assert fast == slow, dump.name
        skimmed += sum(_skimmed(data, at) is not None for at in _page_starts(data))
        for p in slow:  # a page with the dump's <sha1> is recognised from its bytes
            if p.kept and not p.digest.startswith("b2:"):
                assert p.offset is not None
                stop = data.find(b"<page>", p.offset + 1)
                found = flt.kept_at(data, p.offset, stop if stop > 0 else len(data))
                assert found == (p.title, p.page_id, p.revision, p.digest), p.title
                kept += 1
    assert kept > 300
    assert skimmed > 1000  # smallwiki's redirects and other namespaces, the synthetic's


def test_only_the_plain_shape_of_a_known_page_is_kept_from_its_bytes(tmp_path: Path) -> None:
    page = (
        "<page>\n <title>{title}</title>\n <ns>{ns}</ns>\n <id>7</id>{extra}\n"
        " <revision>\n  <id>70</id>\n  <text>x</text>\n  {sha}\n </revision>{rev2}\n</page>\n"
    )

    def shape(
        title: str = "Albedo",
        ns: int = 0,
        extra: str = "",
        sha: str = "<sha1>abc</sha1>",
        rev2: str = "",
    ) -> bytes:
        return page.format(title=title, ns=ns, extra=extra, sha=sha, rev2=rev2).encode()

    known = tmp_path / "k.npy"
    write_keys(known, [page_key("Albedo", 7, 70, "abc"), page_key("A&B", 7, 70, "abc")])
    flt = PageFilter(str(known))
    plain = shape()
    assert flt.kept_at(plain, 0, len(plain)) == ("Albedo", 7, 70, "abc")
    for other in (
        shape(title="Other"),  # not known
        shape(ns=1),
        shape(extra='<redirect title="X" />'),
        shape(sha="<sha1/>"),
        shape(sha=""),
        shape(title="A&amp;B"),  # entities: the tree decodes them
        shape(rev2="<revision><id>71</id></revision>"),  # a history export
    ):
        assert flt.kept_at(other, 0, len(other)) is None, other
    bad_utf8 = plain.replace(b"Albedo", b"Alb\xffedo")
    assert flt.kept_at(bad_utf8, 0, len(bad_utf8)) is None
    cut = plain[: plain.find(b"</page>")]
    assert flt.kept_at(cut, 0, len(cut)) is None
    assert PageFilter(only=str(known)).keeps_from_bytes is False


def _page_starts(data: bytes) -> list[int]:
    starts, at = [], data.find(b"<page>")
    while at >= 0:
        starts.append(at)
        at = data.find(b"<page>", at + 1)
    return starts


def test_redirects_and_other_namespaces_are_read_from_their_heads() -> None:
    """What the head alone says; anything else (entities, a redirect told only by its
    text, another shape) is left to the XML parser."""
    page = (
        "<page>\n <title>{title}</title>\n <ns>{ns}</ns>\n <id>7</id>\n {redirect}"
        "<revision>\n  <id>70</id>\n  <text>#REDIRECT [[Albedo]]</text>\n </revision>\n</page>\n"
    )

    def skim(title: str = "Reflectivity", ns: str = "0", target: str | None = "Albedo") -> Any:
        redirect = f'<redirect title="{target}" />\n ' if target is not None else ""
        return _skimmed(page.format(title=title, ns=ns, redirect=redirect).encode(), 0)

    assert skim() == ParsedPage(title="Reflectivity", page_id=7, redirect_to="Albedo")
    assert skim(title="solar_reflectivity", target="albedo  effect") == ParsedPage(
        title="Solar reflectivity", page_id=7, redirect_to="Albedo effect"
    )
    assert skim(ns="10") is _LEFT_OUT and skim(ns="-1", target=None) is _LEFT_OUT
    assert skim(target="#Section") is _LEFT_OUT  # a redirect to an anchor: nothing to load
    for other in (
        skim(target=None),  # a redirect only its text tells (old exports)
        skim(title="A&amp;B"),
        skim(target="A&amp;B"),
        _skimmed(b"<page><title>X</title><id>7</id><revision>", 0),  # no <ns>
        _skimmed(b"<page><title>X</title><ns>0</ns><id>7</id><redirect />", 0),
        _skimmed(
            b'<page><title>X\xff</title><ns>0</ns><id>7</id><redirect title="Y" /><revision>', 0
        ),
    ):
        assert other is None, other


def test_malformed_xml_after_kept_pages_is_reported_where_it_is(tmp_path: Path) -> None:
    from kg_agent.exceptions import SourceError

    bad = DUMP.replace("<title>Anarchism</title>", "<title>Anarchism</titel>")
    known = tmp_path / "k.npy"
    write_keys(known, [page_key("Albedo", 39, 715952044, "aaa")])
    flt = PageFilter(str(known))
    messages = []
    for fast in (False, True):
        try:
            _fragment_pages(_unit(bad), flt, fast=fast)
        except SourceError as exc:
            messages.append(str(exc))
    assert len(messages) == 2 and messages[0] == messages[1]
    assert "line 9, column 22" in messages[0]  # Anarchism's title, 9th line of the unit

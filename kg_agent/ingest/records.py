"""Value objects that the source readers yield and the load pipeline consumes.

Readers (MediaWiki dumps, passage corpora) know nothing about Kùzu; they turn a
source into :class:`ParsedPage` objects. The pipeline chunks, embeds and writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kg_agent.ingest.facts import Fact


@dataclass(frozen=True, slots=True)
class ParsedSection:
    """One section of a page, in document order.

    ``heading_path`` is the chain of headings from the top of the page down to
    this section (empty for the lead). ``level`` is the MediaWiki heading level
    (``==`` is 2, ``===`` is 3, ...); the lead section has level 1. ``links`` are
    normalised link targets (see :func:`kg_agent.ingest.titles.normalize_title`)
    in order of appearance, repeats kept so counts can be taken.
    """

    heading: str
    heading_path: tuple[str, ...]
    level: int
    text: str
    links: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedPage:
    """A namespace-0 page: an article, or a redirect when ``redirect_to`` is set."""

    title: str
    page_id: int | None = None
    sections: tuple[ParsedSection, ...] = ()
    categories: tuple[str, ...] = ()
    redirect_to: str | None = None
    is_disambiguation: bool = False
    # True for passage corpora: links are not written by authors and must be
    # inferred from title mentions by the pipeline.
    infer_mentions: bool = False
    #: The source's revision of the page (a dump's ``<revision><id>``), and a digest of
    #: its content (the dump's ``<sha1>``, else a hash of the text): what ``kg-agent
    #: update`` compares to tell a changed page from an unchanged one.
    revision: int | None = None
    digest: str = ""
    #: An update's parse kept the page without parsing its wikitext (the graph has this
    #: revision): no sections, categories or links (see :mod:`kg_agent.ingest.known`).
    kept: bool = False
    #: Where the page can be read again alone (see ``units.read_unit_located``).
    offset: int | None = None
    extra: dict[str, str] = field(default_factory=dict)
    #: The facts of its infoboxes, in page order (:mod:`kg_agent.ingest.infobox`).
    facts: tuple[Fact, ...] = ()
    #: What it is about: person, place, organisation, work, event, taxon or other
    #: (:mod:`kg_agent.ingest.kinds`; "" when not read, as for a kept page).
    kind: str = ""

    @property
    def is_redirect(self) -> bool:
        return self.redirect_to is not None

"""BM25 full-text search over sections and article titles, on tantivy.

Why not Kùzu's own full-text index: measured on this project's 2-core, 24 GiB
machine (``docs/notes/retrieval.md``), building Kùzu 0.11.3's FTS over
1M sections of 160 words took 310 s, 15.9 GB of RSS and 6.6 GB of disk, and a
query took 80-380 ms; a graph of 1M articles has ~6M sections, which it cannot
index in 24 GiB at all (the 100k-article load failed with "buffer pool is full").
tantivy (a Rust search library in the Lucene mould, used by LanceDB and
Quickwit) indexed the same 1M sections in 49 s into 323 MB and answers in
18-34 ms, with the same BM25 (k1 1.2, b 0.75); on the 2WikiMultihopQA pool its
Recall@5 is 63.7 against 62.0 for Kùzu's FTS.

The index is a derived copy of the graph's text, kept in a folder beside the
database (see :mod:`kg_agent.store`): it holds only what search needs (section
ids, their article, the analysed text; titles) and the graph stays the source of
truth, so a hit whose section is gone from the graph is simply dropped.

Text is analysed as Kùzu's FTS did: split on non-alphanumerics, lower-cased,
English stop words removed, Snowball English stemming. Queries are built from
the same analyser's terms (an OR of term queries), never parsed, so no user
text can be read as query syntax.
"""

from __future__ import annotations

import contextlib
import math
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tantivy

__all__ = ["TextIndex", "TextIndexWriter"]

_ANALYZER = "kg_en"
_SECTIONS = "sections"
_TITLES = "titles"
_MAX_TOKEN = 40  # longer "words" are base64 blobs and URLs: dropped, as Lucene does


def _analyzer() -> Any:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(_MAX_TOKEN))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _section_schema() -> Any:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("article", stored=False, tokenizer_name="raw", index_option="basic")
    # term frequencies but no positions: BM25 needs no more, and it halves the index
    sb.add_text_field("body", stored=False, tokenizer_name=_ANALYZER, index_option="freq")
    return sb.build()


def _title_schema() -> Any:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("title", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("words", stored=False, tokenizer_name=_ANALYZER, index_option="freq")
    return sb.build()


def _open(path: Path, schema: Any, *, create: bool) -> Any:
    if create:
        path.mkdir(parents=True, exist_ok=True)
    index = tantivy.Index(schema, path=str(path), reuse=True)
    index.register_tokenizer(_ANALYZER, _analyzer())
    return index


class TextIndex:
    """The section and title indexes in one folder; readers open it any number of times."""

    def __init__(self, root: str | Path, *, create: bool = False) -> None:
        self.root = Path(root)
        if not create and not self.exists(self.root):
            raise FileNotFoundError(f"no text index in {self.root}")
        self._analyzer = _analyzer()
        self._sections = _open(self.root / _SECTIONS, _section_schema(), create=create)
        self._titles = _open(self.root / _TITLES, _title_schema(), create=create)
        self._section_schema = self._sections.schema
        self._title_schema = self._titles.schema

    @staticmethod
    def exists(root: str | Path) -> bool:
        r = Path(root)
        return (r / _SECTIONS / "meta.json").exists() and (r / _TITLES / "meta.json").exists()

    @staticmethod
    def remove(root: str | Path) -> None:
        shutil.rmtree(root, ignore_errors=True)

    # ------------------------------------------------------------------ reading
    def terms(self, text: str) -> list[str]:
        """The analysed terms of ``text`` (what is matched against the index)."""
        return [str(t) for t in self._analyzer.analyze(text)]

    def _query(self, schema: Any, field: str, text: str) -> Any | None:
        terms = self.terms(text)
        if not terms:
            return None
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(schema, field, t)) for t in terms]
        )

    def search_sections(self, text: str, k: int) -> list[tuple[str, float]]:
        """(section id, BM25 score), best first; ties in index order."""
        query = self._query(self._section_schema, "body", text)
        if query is None or k < 1:
            return []
        searcher = self._sections.searcher()
        hits = searcher.search(query, k).hits
        return [(str(searcher.doc(addr)["id"][0]), float(score)) for score, addr in hits]

    def search_sections_of(
        self, text: str, articles: Sequence[str], k: int
    ) -> list[tuple[str, float]]:
        """(section id, BM25 score) among the sections of ``articles`` only, best first."""
        query = self._query(self._section_schema, "body", text)
        if query is None or k < 1 or not articles:
            return []
        only = tantivy.Query.term_set_query(self._section_schema, "article", list(articles))
        both = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, query), (tantivy.Occur.Must, only)]
        )
        searcher = self._sections.searcher()
        hits = searcher.search(both, k).hits
        return [(str(searcher.doc(addr)["id"][0]), float(score)) for score, addr in hits]

    def search_titles(self, text: str, k: int) -> list[tuple[str, float]]:
        """(article title, BM25 score of its words), best first."""
        query = self._query(self._title_schema, "words", text)
        if query is None or k < 1:
            return []
        searcher = self._titles.searcher()
        hits = searcher.search(query, k).hits
        return [(str(searcher.doc(addr)["title"][0]), float(score)) for score, addr in hits]

    def rarity(self, words: Sequence[str]) -> list[float]:
        """How rare each word is among the sections: its inverse document frequency
        over that of a word no section writes (1: none writes it, near 0: all do; 0
        for a word the analyser drops)."""
        searcher = self._sections.searcher()
        n = int(searcher.num_docs)
        top = math.log(n + 1.0)
        out = []
        for w in words:
            terms = self.terms(w)
            if not terms or top <= 0:
                out.append(0.0)
                continue
            df = int(searcher.doc_freq("body", terms[0]))
            out.append(math.log((n + 1.0) / (df + 1.0)) / top)
        return out

    def counts(self) -> tuple[int, int]:
        """Documents in the (section, title) indexes."""
        return int(self._sections.searcher().num_docs), int(self._titles.searcher().num_docs)

    def reload(self) -> None:
        """See the latest commit (a long-lived reader after a writer committed)."""
        self._sections.reload()
        self._titles.reload()

    # ------------------------------------------------------------------ writing
    def writer(self, *, threads: int = 1, heap_mb: int = 256) -> TextIndexWriter:
        return TextIndexWriter(self, threads=threads, heap_mb=heap_mb)


class TextIndexWriter:
    """Adds and deletes documents; nothing is visible until :meth:`commit`.

    tantivy's commit swaps its segment list atomically: a process killed before
    it leaves the index as it was, and readers never see half a batch.
    """

    def __init__(self, index: TextIndex, *, threads: int, heap_mb: int) -> None:
        self.index = index
        # tantivy wants at least 15 MB of heap per indexing thread
        heap = max(heap_mb, 16 * threads) << 20
        self._sections = index._sections.writer(heap_size=heap, num_threads=threads)
        self._titles = index._titles.writer(heap_size=max(16 << 20, heap // 4), num_threads=1)

    def add_sections(
        self,
        ids: Sequence[str],
        articles: Sequence[str],
        headings: Sequence[str],
        texts: Sequence[str],
    ) -> None:
        for sid, art, head, text in zip(ids, articles, headings, texts, strict=True):
            body = f"{head}\n{text}" if head else text
            self._sections.add_document(tantivy.Document(id=sid, article=art, body=body))

    def delete_article_sections(self, titles: Sequence[str]) -> None:
        for t in titles:
            self._sections.delete_documents_by_term("article", t)

    def add_titles(self, titles: Sequence[str]) -> None:
        for t in titles:
            self._titles.add_document(tantivy.Document(title=t, words=t))

    def delete_titles(self, titles: Sequence[str]) -> None:
        for t in titles:
            self._titles.delete_documents_by_term("title", t)

    def commit(self) -> None:
        self._sections.commit()
        self._titles.commit()

    def close(self) -> None:
        """Wait for background merges, so the folder can be renamed or copied."""
        for w in (self._sections, self._titles):
            with contextlib.suppress(Exception):
                w.wait_merging_threads()

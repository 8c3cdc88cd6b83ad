"""Question entity linking: which articles does a question name?

Multi-hop questions name their first hop ("Who is the mother of the director
of *Polish-Russian War*?"). Finding that article by its title is far more
reliable than hoping its text is similar to the question, and its links lead
to the second hop. The linker reuses the ingest-time :class:`MentionMatcher`
(whole words, longest match, case-tolerant for title-cased questions,
parenthetical base names, redirect aliases), with ``ambiguous="all"``: a
question that says "Dark River" seeds every "Dark River (…)" article, and the
similarity ranking downstream picks among them.

Building the automaton reads every title once (``scripts/bench_linker.py``,
realistic titles with 0.9 redirects each: 1M in ~25 s and ~0.65 GiB, 5M in
~170 s and ~3.1 GiB; a question then takes ~0.05-0.15 ms at any size). Above
``max_titles`` (a whole Wikipedia) the linker falls back to the title full-text
index: its ten best articles (no stubs), and the articles the question's names
are titles or redirects of (looked up by key), go through a matcher built per
question (~0.1 ms) with the automaton's own rules: case, whole words, the
longest match, a name that goes on, base names, years and kind words, and the
guards (no "Who", "The", "Film", "2006": without them ~40% of questions linked
such a page at 1M titles). On the eval graphs it ranks every dev question as
the automaton does (docs/BENCHMARKS.md, "Entity linker at Wikipedia scale").

A built linker can be saved (:meth:`QuestionEntityLinker.save`) and given to
a later process as ``saved=``: loading it skips both reading every title from
the graph and building the trie (1M: ~2.6 s instead of ~25 s; 5M: ~20 s
instead of ~170 s). The file records what it was built from (title and
redirect counts and the graph's load ids, the source of the matching rules, the
pyahocorasick version); a file that does not match the open graph is ignored
and the linker builds as without one. An update that changed no title and no
redirect (edits only) re-labels the file for the graph's new key
(:func:`carry_over`) rather than building it again; one that changed a few names
saves an overlay of them beside the file (:meth:`QuestionEntityLinker.save_changes`,
:mod:`kg_agent.entities.overlay`), and a query process loads the two together.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import importlib.metadata
import json
import os
import pickle
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, overload

from kg_agent.entities import matcher as mentions
from kg_agent.entities import overlay as overlay_rules
from kg_agent.entities.matcher import (
    COMMON_WORDS,
    MentionMatcher,
    base_name,
    eligible_form,
    kind_word,
)
from kg_agent.entities.overlay import Overlay, apply_overlay, make_overlay
from kg_agent.language.names import cased_spans, is_lower_case, lookup_spans, question_names
from kg_agent.language.tokens import fold, words
from kg_agent.store import GraphReader
from kg_agent.store.section_ids import is_lead

__all__ = ["QuestionEntityLinker", "acronym_title", "alias_title"]

MAX_AUTOMATON_TITLES = 2_000_000
_OFFERED = 10  # titles the full-text fallback reads a question against
_FORMAT = 2  # 2: names offered sorted, offers recorded (overlays)
_MIN_LENGTH = 4  # MentionMatcher's default


class QuestionEntityLinker:
    """Article titles named in a question, in order of first appearance.

    ``saved`` is a file written by :meth:`save`: used when it matches the
    graph (and ``max_titles`` allows an automaton), else the linker builds.
    """

    def __init__(
        self,
        store: GraphReader,
        *,
        max_titles: int = MAX_AUTOMATON_TITLES,
        saved: str | os.PathLike[str] | None = None,
    ) -> None:
        self.store = store
        self.max_titles = max_titles
        self.saved = Path(saved) if saved is not None else None
        self.loaded_from: Path | None = None  # set when ``saved`` was used
        self._matcher: MentionMatcher | None = None
        self._use_fts = False
        self._lock = threading.Lock()

    def _ensure(self) -> None:
        with self._lock:
            if self._matcher is not None or self._use_fts:
                return
            n = self.store.count_articles()
            if n > self.max_titles:
                self._use_fts = True
                return
            if self.saved is not None:
                self._matcher = _read_saved(self.saved, self._key(n))
                if self._matcher is not None:
                    self.loaded_from = self.saved
                    return
            self._matcher = _build(*self.store.entity_names())

    def _key(self, n_titles: int | None = None) -> str:
        """What a saved matcher must have been built from to serve this graph."""
        if n_titles is None:
            n_titles = self.store.count_articles()
        # load ids, not their status: a load saves its linker while it finishes
        loads = sorted(str(r.get("id")) for r in self.store.loads())
        parts = {
            "format": _FORMAT,
            "rules": _rules_digest(),
            "pyahocorasick": _ahocorasick_version(),
            "titles": n_titles,
            "redirects": self.store.count_redirects(),
            "loads": loads,
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def key(self, n_titles: int | None = None) -> str:
        """What a saved matcher must have been built from to serve the graph as it is
        (``n_titles``: its article count, when the caller has it)."""
        return self._key(n_titles)

    def uses_automaton(self) -> bool:
        """Whether the graph is small enough for the automaton (else full-text fallback)."""
        return self.store.count_articles() <= self.max_titles

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the built matcher to the file ``path`` (replaced atomically).

        Builds first if needed; a linker on the full-text fallback has nothing
        to save (ValueError).
        """
        self._ensure()
        if self._matcher is None:
            raise ValueError("this linker uses the full-text fallback: no automaton to save")
        # the old file's overlay goes first: left beside the new file by a crash, it could
        # carry the key the new file is written for
        with contextlib.suppress(FileNotFoundError):
            _overlay_path(Path(path)).unlink()
        _write(Path(path), self._matcher, self._key())

    def save_changes(self, path: str | os.PathLike[str]) -> bool:
        """Bring the linker saved at ``path`` up to the graph: only what changed in its
        names, as an overlay file beside it, when the saved matcher can take one (built
        ``patchable`` and at most a tenth of its names changed); else build and
        :meth:`save`. Returns whether it saved an overlay.

        The overlay is made against the saved matcher as built (never against an older
        overlay), so it holds the whole difference; the key it is written for is the
        graph's now, and a query process loads both (:func:`_read_saved`).
        """
        path = Path(path)
        if not self.uses_automaton():
            raise ValueError("this linker uses the full-text fallback: no automaton to save")
        titles, aliases = self.store.entity_names()
        if _save_overlay(path, self._key(), titles, aliases):
            return True
        with self._lock:
            self._matcher = _build(titles, aliases)
        self.save(path)
        return False

    def link_any_case(self, question: str) -> list[str]:
        """:meth:`link`, and when it finds nothing, :meth:`topics_otherwise`."""
        return self.link(question) or self.topics_otherwise(question)

    def topics_otherwise(self, question: str) -> list[str]:
        """The articles a question is about when :meth:`link` finds none (a question
        typed in lower case, "who wrote animal farm", or a name written in lower case,
        "Is aikido a Chinese martial art?"): the articles its runs of words are titles or
        redirects of, written as titles are (longest first; a shorter run inside a name
        found is left out); then the close titles of its names (:meth:`close_titles`)."""
        out: list[str] = []
        taken: list[set[str]] = []
        for span in cased_spans(question):
            words = set(fold(span).split())
            if any(words <= t for t in taken) or not _eligible(span):
                continue
            target = self.store.resolve_title(span, with_text=True)
            if target is not None:
                target = self._of_kind(span, question) or target
            if target is not None and target not in out:
                out.append(target)
                taken.append(words)
        if out:
            return out
        if not is_lower_case(question):
            return self.close_titles(list(question_names(question)))
        return self.close_titles([s for s in cased_spans(question) if " " not in s])

    def _of_kind(self, span: str, question: str) -> str | None:
        """The article "name (kind)" whose name the question writes, starting with ``span``
        (the title a run of its words was found as), and whose kind it writes too: "the
        journal algorithms" is "Algorithms (journal)", not "Algorithm"; as the matcher
        picks by a kind word next to a capitalised name."""
        asked = set(words(fold(question)))
        base = fold(span)
        for title, _ in self.store.search_article_titles(span, k=_OFFERED, with_text=True):
            name, kind = base_name(title), kind_word(title)
            if name is None or kind not in asked:
                continue
            # the name as written, or as its plural ("algorithms" was looked up singular)
            named = fold(name)
            if named.startswith(base) and set(words(named)) <= asked:
                return title
        return None

    def close_titles(self, names: list[str]) -> list[str]:
        """The articles a name is the end of, as a surname is of a person's title
        ("Einstein" → "Albert Einstein"): the best title match of the full-text index
        that ends with the name's words, has at most three words (its parenthesis
        aside) and no comma (not "Aberdeen, Arkansas" for Arkansas); for an acronym
        or other name that is no title, the article it is another name of
        (:func:`alias_title`)."""
        out: list[str] = []
        for name in names:
            words = fold(name).split()
            if not words or not _eligible(name):
                continue
            expanded = alias_title(self.store, name)
            if expanded is not None:
                if expanded not in out:
                    out.append(expanded)
                continue
            for title, _ in self.store.search_article_titles(name, k=5, with_text=True):
                base = fold(title.split(" (")[0])
                twords = base.split()
                if "," in base or len(twords) > 3 or twords[-len(words) :] != words:
                    continue
                if title not in out:
                    out.append(title)
                break
        return out

    def link(self, question: str) -> list[str]:
        self._ensure()
        if self._matcher is not None:
            found = self._matcher.find(question)
            # order of first appearance in the question
            lowered = question.lower()
            return sorted(found, key=lambda t: _position(lowered, t))
        # the automaton's rules (case, whole words, longest match, a name that goes on,
        # base names, years and kind words) over the articles the full-text index offers
        # and those the question's names are titles or redirects of, looked up by key
        # (stubs left out, as the automaton leaves them out: they have no text to seed)
        found_titles = self.store.search_article_titles(question, k=_OFFERED, with_text=True)
        offered = [title for title, _ in found_titles]
        aliases: list[tuple[str, str]] = []
        for span in lookup_spans(question, _eligible):
            target = self.store.resolve_title(span, with_text=True)
            if target is None:
                continue
            if target != span:
                aliases.append((span, target))
            if target not in offered:
                offered.append(target)
        if not offered:
            return []
        found = MentionMatcher(offered, aliases, ambiguous="all").find(question)
        lowered = question.lower()
        return sorted(found, key=lambda t: _position(lowered, t))


def _eligible(form: str) -> bool:
    """Whether the automaton could ever match ``form`` (never "What", "New")."""
    return eligible_form(form, _MIN_LENGTH, COMMON_WORDS)


def _build(titles: list[str], aliases: list[tuple[str, str]]) -> MentionMatcher:
    """The matcher of the graph's names, once each, offered in sorted order so that a
    later change of names can be laid over it (:mod:`kg_agent.entities.overlay`)."""
    with _no_gc():
        return MentionMatcher(
            sorted({t.strip() for t in titles}),
            sorted({(a.strip(), t.strip()) for a, t in aliases}),
            ambiguous="all",
            patchable=True,
        )


def _position(lowered_question: str, title: str) -> int:
    base = title.split(" (")[0].lower()
    i = lowered_question.find(base)
    return i if i >= 0 else len(lowered_question)


# ---------------------------------------------------------------------- saved form


@functools.cache
def _rules_digest() -> str:
    """Digest of the matching rules (matcher.py, and overlay.py which repeats them): a
    change to either invalidates saved files and their overlays."""
    digest = hashlib.sha256()
    for module in (mentions, overlay_rules):
        src = module.__file__
        digest.update(Path(src).read_bytes() if src else b"")
    return digest.hexdigest()[:16]


@functools.cache
def _build_identity() -> str:
    """What a saved matcher's code must be for an update to lay an overlay over it: the
    graph's part of the key aside (the format, the rules, pyahocorasick)."""
    parts = {"format": _FORMAT, "rules": _rules_digest(), "pyahocorasick": _ahocorasick_version()}
    return json.dumps(parts, sort_keys=True)


def _ahocorasick_version() -> str:
    try:
        return importlib.metadata.version("pyahocorasick")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _write(path: Path, matcher: MentionMatcher, key: str) -> None:
    """Pickle key, trie, rest of the matcher to a temporary file, then rename it into place.

    Pickle, not ``Automaton.save``: loads ~4x faster (``ahocorasick.load`` looks
    up every pointer by binary search), for a peak of about one file size more
    while saving and loading (the trie goes through bytes). The trie comes before
    the titles, so those bytes are freed before the titles are read. The offers a
    patchable matcher recorded come last, read only to make an overlay: a query
    process stops before them (1M titles: 45 MB, ~1.3 s to read).
    """
    state = dict(vars(matcher))
    trie = state.pop("_automaton")
    offers = state.pop("_offers")
    _dump(path, key, _build_identity(), trie, state, offers)


def _dump(path: Path, *parts: object) -> None:
    """Pickle ``parts`` one after another to a temporary file renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    try:
        with open(tmp, "wb") as fh:
            for part in parts:
                pickle.dump(part, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _save_overlay(path: Path, key: str, titles: list[str], aliases: list[tuple[str, str]]) -> bool:
    """Save, for ``key``, the overlay that makes the matcher saved at ``path`` match
    ``titles`` and ``aliases``; False (nothing written) when there is no such matcher
    or it cannot take one (see :func:`make_overlay`)."""
    saved = _read_base(path)
    if saved is None:
        return False
    base_key, base = saved
    del saved
    with _no_gc():
        made = make_overlay(base, titles, aliases)
    del base  # before the caller builds, so that the two are never both in memory
    if made is None:
        return False
    _write_overlay(path, key, base_key, made)
    return True


def _write_overlay(path: Path, key: str, base_key: str, overlay: Overlay) -> None:
    """Save ``overlay`` beside the matcher at ``path`` (saved for ``base_key``) for
    ``key``, with a digest of its bytes: a damaged overlay is never laid over a matcher."""
    payload = pickle.dumps(overlay, protocol=pickle.HIGHEST_PROTOCOL)
    _dump(_overlay_path(path), key, base_key, hashlib.sha256(payload).hexdigest(), payload)


def _overlay_path(path: Path) -> Path:
    """Where the overlay of the matcher saved at ``path`` is kept."""
    return path.with_name(f"{path.stem}.overlay{path.suffix}")


def carry_over(path: Path, was: str, now: str) -> bool:
    """Re-label the matcher saved at ``path`` for the key ``was`` with ``now``.

    A write that changed no title and no redirect leaves the matcher a build would
    make as it was; only the load ids of its key changed. So the file is copied
    under the new key, a read and a write of its bytes, instead of a build (100k
    titles: ~3 s; 1M: ~25 s); when an overlay serves ``was``, only the overlay's file.
    False, and the files untouched, when neither was saved for ``was``.
    """
    head = _overlay_head(path)
    if head is not None and head[0] == was and _key_of(path) == head[1]:
        return _relabel(_overlay_path(path), was, now)
    if not _relabel(path, was, now):
        return False
    with contextlib.suppress(FileNotFoundError):
        _overlay_path(path).unlink()
    return True


def _key_of(path: Path) -> str | None:
    """The key the file at ``path`` was saved for (None: unreadable)."""
    try:
        with open(path, "rb") as fh:
            key: Any = pickle.load(fh)
    except _UNREADABLE:
        return None
    return key if isinstance(key, str) else None


def _overlay_head(path: Path) -> tuple[str, str] | None:
    """The key the overlay beside ``path`` serves and the key of the file it is laid
    over (None: no readable overlay)."""
    try:
        with open(_overlay_path(path), "rb") as fh:
            key: Any = pickle.load(fh)
            base_key: Any = pickle.load(fh)
    except _UNREADABLE:
        return None
    return (key, base_key) if isinstance(key, str) and isinstance(base_key, str) else None


def _relabel(path: Path, was: str, now: str) -> bool:
    """Copy the file at ``path`` with its first pickle ``was`` replaced by ``now``."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    try:
        with open(path, "rb") as src:
            if pickle.load(src) != was:
                return False
            with open(tmp, "wb") as dst:
                pickle.dump(now, dst, protocol=pickle.HIGHEST_PROTOCOL)
                shutil.copyfileobj(src, dst, 1 << 20)
        os.replace(tmp, path)
    except _UNREADABLE:
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return True


#: What reading a damaged file may raise (a flipped byte can make pickle ask for any
#: amount of memory or any type): each means "not saved", and the linker builds.
_UNREADABLE = (Exception,)


def _read_saved(path: Path, key: str) -> MentionMatcher | None:
    """The matcher saved at ``path`` for ``key``: the file under the overlay saved
    beside it for ``key`` (when that overlay is whole and was made for that file), else
    the file itself; None when neither serves ``key``."""
    overlay = _read_overlay(path, key)
    if overlay is not None:
        base = _read(path, overlay[0])
        if base is not None:
            with _no_gc():
                return apply_overlay(base, overlay[1])
    return _read(path, key)


def _read_overlay(path: Path, key: str) -> tuple[str, Overlay] | None:
    """The key of the file the overlay beside ``path`` is laid over, and the overlay,
    if it serves ``key`` and its bytes are the ones written."""
    try:
        with open(_overlay_path(path), "rb") as fh:
            if pickle.load(fh) != key:
                return None
            base_key: Any = pickle.load(fh)
            digest: Any = pickle.load(fh)
            payload: Any = pickle.load(fh)
        if not isinstance(payload, bytes) or hashlib.sha256(payload).hexdigest() != digest:
            return None
        overlay: Any = pickle.loads(payload)
    except _UNREADABLE:
        return None
    return (base_key, overlay) if isinstance(overlay, Overlay) else None


def _read_base(path: Path) -> tuple[str, MentionMatcher] | None:
    """The key and matcher saved at ``path`` whatever its key, with the offers it
    recorded (None: no readable file, or one built by other code)."""
    return _read(path, None)


@overload
def _read(path: Path, key: str) -> MentionMatcher | None: ...
@overload
def _read(path: Path, key: None) -> tuple[str, MentionMatcher] | None: ...
def _read(path: Path, key: str | None) -> MentionMatcher | tuple[str, MentionMatcher] | None:
    """The matcher saved at ``path`` if it was built for ``key``, else None (``key``
    None: any key, returned with the matcher and the offers it recorded).

    The key is read first, so a stale file costs no trie. Pickle runs code:
    only files this module wrote belong here.
    """
    try:
        with open(path, "rb") as fh, _no_gc():
            saved_key: Any = pickle.load(fh)
            if key is not None and saved_key != key:
                return None
            if pickle.load(fh) != _build_identity() and key is None:
                return None  # built by other rules: no base for today's overlay
            trie: Any = pickle.load(fh)
            state: Any = pickle.load(fh)
            offers: Any = pickle.load(fh) if key is None else None
    except _UNREADABLE:
        return None
    if not isinstance(state, dict) or set(state) | {"_automaton", "_offers"} != _matcher_fields():
        return None
    if offers is not None and not isinstance(offers, dict):
        return None
    matcher = MentionMatcher.__new__(MentionMatcher)
    vars(matcher).update(state)
    matcher._automaton = trie
    matcher._offers = offers
    return matcher if key is not None else (str(saved_key), matcher)


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector paused: a matcher holds millions of small tuples and
    lists and no cycle, and the collector's passes over them while they are made were
    most of a load's time (1M titles: the matcher's state read in 0.4 s, not 2.6 s)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@functools.cache
def _matcher_fields() -> frozenset[str]:
    return frozenset(vars(MentionMatcher(())))


#: An acronym: three to six capitals ("ANSI", "NASA"; two, "US" or "UK", say too little).
_ACRONYM = re.compile(r"^[A-Z]{3,6}$")
#: Small words an acronym skips ("International System *of* Units" is not "ISOU").
_ACRONYM_SKIPS = frozenset({"of", "the", "and", "for", "in", "on", "to", "a", "an", "&"})


#: Where a lead sentence stops naming its subject and starts saying what it is.
_COPULA = re.compile(r"\s(?:is|was|are|were|refers to)\s")


def alias_title(store: GraphReader, name: str, *, k: int = 10) -> str | None:
    """The article a name that is no title is another name of: an acronym it abbreviates
    (:func:`acronym_title`), or an article whose first sentence gives the name before
    saying what it is ("The Academy Awards, or the Oscars, are…"; "Ayn Rand (born Alisa
    Zinovyevna Rosenbaum; …) was…"), as Wikipedia's leads write other names."""
    if store.resolve_title(name, with_text=True) is not None:
        return None
    found = acronym_title(store, name, k=k)
    if found is not None:
        return found
    name_words = re.findall(r"[\w'’-]+", fold(name))
    if not name_words or not _eligible(name):
        return None
    for hit in store.fts_search(name, k):
        if not is_lead(hit.section_id):
            continue
        first = hit.text.split(". ")[0]
        subject = _COPULA.split(first, maxsplit=1)[0]
        said = re.findall(r"[\w'’-]+", fold(subject))
        own = re.findall(r"[\w'’-]+", fold(hit.title.split(" (")[0]))
        # the sentence is its article's own ("The Academy Awards, …"), and the name is
        # written in it as a name is, its words in order at most two words apart
        if len(said) > 30 or (said[: len(own)] != own and said[1 : len(own) + 1] != own):
            continue
        if _in_order(name_words, said[len(own) :]):
            return hit.title
    return None


def _in_order(name: list[str], words: list[str], gap: int = 2) -> bool:
    """Whether ``name``'s words are in ``words`` in order, at most ``gap`` words apart."""
    for start, w in enumerate(words):
        if w != name[0]:
            continue
        at = start
        for part in name[1:]:
            nxt = next(
                (j for j in range(at + 1, min(len(words), at + 2 + gap)) if words[j] == part), None
            )
            if nxt is None:
                break
            at = nxt
        else:
            return True
    return False


def acronym_title(store: GraphReader, name: str, *, k: int = 10) -> str | None:
    """The article an acronym abbreviates ("ANSI" → "American National Standards
    Institute"), when it is no title itself: among the articles whose text writes it
    (the full-text index's best ``k`` sections; an article spells its acronym out in
    its lead), the one whose title's initials it is."""
    if not _ACRONYM.match(name) or store.resolve_title(name, with_text=True) is not None:
        return None
    for hit in store.fts_search(name, k):
        initials = "".join(
            w[0] for w in hit.title.split(" (")[0].split() if w.lower() not in _ACRONYM_SKIPS
        )
        if initials.upper() == name:
            return hit.title
    return None

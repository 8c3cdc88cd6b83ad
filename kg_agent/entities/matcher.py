"""Infer "mentions" links in passage corpora that have no hyperlinks.

A :class:`MentionMatcher` holds every article title (and optional aliases) in one
Aho-Corasick automaton and finds which titles a text mentions. The section →
article edges it yields are what PageRank and multi-hop bridging walk on in the
benchmark corpora, so it trades a little recall for precision (each rule below
was kept because it removed wrong edges on the benchmark pools without losing
gold connections; ``scripts/eval_mentions.py`` measures it):

* whole words only ("Ada" never matches inside "Canada"); a hyphen or apostrophe
  glued to a letter joins words ("Franco" not in "Franco-Prussian"), but a
  lower-case suffix does not ("Paris-based" mentions Paris);
* overlapping matches: the longest wins, then the leftmost ("New York City" beats
  "New York" and "York"; "The Pledge of Allegiance" is "Pledge of Allegiance",
  not "The Pledge");
* titles match case-sensitively. A multi-word title also matches a span that
  differs only in case, provided some word after the first keeps its capital
  ("battle of Hastings" → "Battle of Hastings", but "the dream" ↛ "The Dream");
* guards against junk: titles shorter than ``min_length`` (4) characters are
  skipped unless they are capital acronyms of three or more ("BBC", "X&Y") or
  mix letters and digits ("U2"); forms with no letter (years, numbers) and
  single-word forms that are common English words (:data:`COMMON_WORDS`) or all
  lower-case are skipped;
* a match followed by a capitalised word is part of a longer name ("Stephen" in
  "Stephen King", "Juan Carlos" in "Juan Carlos Onetti"); a one-word match after
  a capitalised word too ("Lloyd" in "Harold Lloyd"), unless that word is a title
  such as "King" ("King Mongkut") or a common word ("In Seville");
* a trailing parenthetical is disambiguation: "Henriette of France (1727–1752)"
  is also found by its base name when the base passes the guards. A base shared
  by several titles is still matched (so a shorter title inside it does not fire)
  but links to none of them unless a nearby year (``"Dark River"( 1990)``, "the
  1990 film Dark River") or kind word ("the duo Love and Theft" → "Love and Theft
  (duo)") picks one, or ``ambiguous="all"``; a year that fits no candidate links
  nothing. "(disambiguation)" pages get no base name;
* a text never mentions its own page (``source_title``), including through a base
  name it shares with other pages, by a one-word base name that is a word of its
  own title ("Lewis" in "Dan Lewis (footballer)"), or by the rest of its subject's
  full name ("Terry Richardson" in "Kenton Terry Richardson");
* spelling variants: HTML entities left in titles ("X&amp;Y") and the
  detokenisation artefacts of 2WikiMultihopQA ("Jean- Baptiste", "Sweat& Tears").

Memory: the automaton stores one 32-bit int per surface form, which encodes the
index of the title it came from; titles are kept as the caller's own ``str``
objects (one list slot each). Forms shared by several titles (rare) go to a
small side table. Measured on synthetic titles: 0.9M build in ~13 s and take
~0.5 GiB, 5.1M (5.9M forms, the size of English Wikipedia) in ~110 s and ~2.9 GiB,
nearly all of it the automaton's trie nodes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Literal

import ahocorasick

__all__ = ["COMMON_WORDS", "MentionMatcher", "base_name", "eligible_form", "kind_word"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Single words that are capitalised at the start of a sentence or in a heading far
# more often than they name the article of that title. Lower-case; matched on
# ``form.lower()``. Kept short on purpose: proper nouns are never listed.
COMMON_WORDS: frozenset[str] = _words(
    """
    a about above according across act action actor actress after afterwards again
    against age ago air album all almost alone along already also although always
    am among an and another answer any anyone anything are area around art as at
    attack author away back bad band base battle be beauty became because become
    been before began behind being below best better between beyond big bird birth
    black blood blue board body book born both boy break bridge brother brothers
    brown building business but by call called came can cannot capital car care
    case castle cause center central century change chapter character chief child
    children church city class club cold college come comedy coming community
    company control could country county course court cover crime cross culture
    cup current dance dark daughter day days dead dear death deep design despite
    development did die died different director district do does dog doing done
    door down drama dream drive during each early earth east eight either election
    else empire end energy english enough even evening event events ever every
    everything evil evolution example eye eyes face fact fall family farewell far
    farm father fear feature fever few field fifth fifty film final finally fire
    first five flight floor for force forest form former forty found four fourth
    free friend friends from front full game games garden general girl girls give
    glory god going gold golden good government great green ground group growth
    had half hand happy hard has have he head health heart heaven hell her here
    hero hers herself high highway him himself his history home hope horse hospital
    hot hotel house how however human hundred husband i if illusions in including
    independence inside instead into is island it its itself journey just justice
    keep key kid kids kill killer king kingdom know lady lake land language large
    last late later law leader least left legend less let life light like line
    list little live living local long lord lost love low lucky machine made main
    major make man many march market master may me member memory men middle might
    mind miss modern money month more morning most mother mountain movie mr mrs
    ms much murder museum music must my myself name national nation natural nature
    near never new news next night nine no none nor north not nothing novel now
    number ocean of off office official often oh old on once one only open or order
    other others our out outside over own page paradise park part party passion
    past peace people perfect period person place plan play player please poetry
    point police political popular possession power president press prince
    princess prison private project public queen race radio rain real record red
    reserve rest return reunion reverse revolution right river road rock room rose
    round royal rule run safe saint same school sea season second secret see self
    series seven several shadow she ship short should show side silence silver
    since single sister six sixth sky small so society some someone something son
    song songs sound south space special spirit sport spring star start state
    station still stone story street strong student studio such summer sun support
    sure system take team ten than that the their them themselves then there
    therefore these they thing things third this those though thousand three
    through thus time to today together tomorrow too top tower town trade train
    travel tree trial trouble true truth twelve twenty two under union unit united
    university until up upon us use used very victory view village voice voices
    wait walk war was water way we wedding week well were west what when where
    whether which while white who whole whom whose why wife wild will wind winter
    with within without woman women wonder word words work world would write
    writer year years yellow yes yet you young your yours yourself youth zero
    monday tuesday wednesday thursday friday saturday sunday january february april
    june july august september october november december
    african american arabic asian australian austrian belgian brazilian british
    canadian chinese czech danish dutch egyptian european finnish french german
    greek hungarian indian irish italian japanese jewish korean latin mexican
    norwegian persian polish portuguese roman russian scottish spanish swedish
    swiss turkish welsh
    """
)

# Capitalised words that may stand right before a one-word name without being part
# of it ("King Mongkut", "Saint Ambrose", "Mount Kailash").
_PREFIX_WORDS: frozenset[str] = _words(
    """
    king queen prince princess emperor empress pope saint st st. sir lord lady dame
    duke duchess count countess baron baroness earl marquess sultan shah tsar czar
    caliph pharaoh president general bishop archbishop cardinal father mother
    brother sister mr mr. mrs mrs. ms ms. dr dr. professor prof. captain admiral
    colonel major lieutenant sergeant chief rabbi imam sheikh chancellor governor
    senator judge justice mount lake river cape fort port
    """
)

_PAREN = re.compile(r"^(.*?\S)\s+\(([^()]*)\)$")
_TITLE, _ALIAS, _BASE = 3, 2, 1  # priority when two forms read the same

Ambiguity = Literal["none", "all"]
Entry = tuple[str, int, tuple[int, ...]]  # (form, priority, canonical title ids)


def _lower(s: str) -> str:
    """Lower-case without changing the length, so automaton offsets index the text."""
    low = s.lower()
    if len(low) == len(s):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in s)


def kind_word(title: str) -> str | None:
    """The head noun of a title's disambiguator, lower-cased: "duo" of "Love and Theft
    (duo)", "album" of "X (Love and Theft album)", "footballer" of "X (footballer, born
    1912)"; None without one."""
    m = _PAREN.match(title)
    head = _WORD.findall(m.group(2).split(",", 1)[0].lower()) if m else []
    return head[-1] if head else None


def base_name(title: str) -> str | None:
    """``"Mother (1926 film)"`` → ``"Mother"``; ``None`` without a trailing parenthetical."""
    m = _PAREN.match(title)
    if m is None or m.group(2).strip().lower() == "disambiguation":
        return None
    return m.group(1)


_YEAR = re.compile(r"\b\d{4}\b")
# "Macbeth"( 1971) / Macbeth (born 1950): a year in brackets right after a match.
_YEAR_AFTER = re.compile(r"[\"”’']?\s?\(\s*(?:born\s+|b\.\s*)?(\d{4})\b")
# "the 1971 film Macbeth": a year a few words before it.
_YEAR_BEFORE = re.compile(
    r"\b(\d{4}) (?:[A-Za-z-]+ ){0,2}(?:film|movie|song|single|album|novel|play|series)[\s\"“‘']*$"
)
_WORD = re.compile(r"[^\W\d_]+")
_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")


def _variants(form: str) -> list[str]:
    """Other spellings a text may use for ``form``.

    HTML entities left in titles ("X&amp;Y") and the detokenisation artefacts of
    2WikiMultihopQA texts, which put a space after an inner hyphen ("Jean- Baptiste")
    and drop the one before "&" ("Blood, Sweat& Tears").
    """
    out: list[str] = []
    if "&" in form:
        plain = html.unescape(form)
        if plain != form:
            out.append(plain)
            form = plain
        if " & " in form:
            out.append(form.replace(" & ", "& "))
    if "-" in form:
        spaced = _HYPHEN.sub("- ", form)
        if spaced != form:
            out.append(spaced)
    return out


def _joined_left(text: str, i: int) -> bool:
    """True when ``text[i]`` (just left of a match) glues the match into a bigger word."""
    c = text[i]
    if c.isalnum():
        return True
    # "Anglo-French", "O'Brien": a hyphen or apostrophe with a letter before it.
    return c in "-'’" and i > 0 and text[i - 1].isalnum()


def _joined_right(text: str, j: int) -> bool:
    """True when ``text[j]`` (just right of a match) glues the match into a bigger word."""
    c = text[j]
    if c.isalnum():
        return True
    # "Franco-Prussian", "Coca-Cola" join; "Paris-based", "France's" do not.
    if c == "-" and j + 1 < len(text):
        nxt = text[j + 1]
        return nxt.isdigit() or nxt.isupper()
    return False


def eligible_form(form: str, min_length: int, common: Collection[str]) -> bool:
    """Whether a surface form is specific enough to be matched at all (see module doc)."""
    if not form or len(form) > 512 or not any(c.isalpha() for c in form):
        return False
    if len(form) < min_length:
        letters = sum(c.isalpha() for c in form)
        # "BBC", "X&Y": capitals, maybe an ampersand.
        acronym = letters >= 2 and len(form) >= 3 and all(c.isupper() or c == "&" for c in form)
        alnum_code = len(form) >= 2 and any(c.isdigit() for c in form)
        if not (acronym or alnum_code):
            return False
    return " " in form or not (form.islower() or form.lower() in common)


def _case_ok(span: str, form: str) -> bool:
    """Accept a span equal to ``form`` up to case (the automaton already checked that)."""
    if span == form:
        return True
    words = form.split(" ")
    if len(words) < 2:
        return False
    # Some word after the first must still carry the title's capital: "battle of
    # Hastings" is the battle, "the dream" is not "The Dream".
    for sw, fw in zip(span.split(" ")[1:], words[1:], strict=False):
        if sw and sw == fw and sw[0].isupper():
            return True
    return False


class MentionMatcher:
    """Find which article titles a text mentions (see the module docstring for the rules).

    ``titles`` are article titles, used as given apart from stripping whitespace
    (titles are not case-normalised). ``aliases`` maps another surface form to a
    title (a redirect, say); an alias whose target is not among ``titles`` is
    ignored. ``ambiguous`` says what a form shared by several titles links to:
    ``"none"`` (default: on 2WikiMultihopQA, ``"all"`` added ~100 edges, nearly
    all to the wrong film or song, and joined no more gold pairs) or ``"all"``.
    ``base_names``, ``case_insensitive`` and ``spelling_variants`` switch those
    rules off; ``common_words`` replaces the stop list of one-word titles.
    """

    def __init__(
        self,
        titles: Iterable[str],
        aliases: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        *,
        min_length: int = 4,
        base_names: bool = True,
        ambiguous: Ambiguity = "none",
        case_insensitive: bool = True,
        spelling_variants: bool = True,
        common_words: Collection[str] = COMMON_WORDS,
        patchable: bool = False,
    ) -> None:
        if ambiguous not in ("none", "all"):
            raise ValueError(f"ambiguous must be 'none' or 'all', not {ambiguous!r}")
        self._titles: list[str] = [t.strip() for t in titles]
        self._alias_forms: list[str] = []
        self._alias_target: list[int] = []
        self._ambiguous_all = ambiguous == "all"
        self._case_insensitive = case_insensitive
        self._min_length = min_length
        self._own_words = True  # private knobs, for measurement
        self._longest_first = True
        self._by_kind_words = True
        self._common = common_words
        # Side table: forms that several titles (or spellings) share one key.
        # Each entry: tuple of (form, priority, canonical title ids).
        self._side: list[list[Entry]] = []
        self._automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
        # ``patchable``: every form each key was offered, where a key was offered more
        # than one (form, priority, title id, redirect index or -1), so that a later
        # change of names can recompute that key (kg_agent.entities.overlay)
        self._offers: dict[str, list[tuple[str, int, int, int]]] | None = {} if patchable else None
        # aliases that came from ``aliases`` (the rest are spelling variants); until
        # those are all in, every alias is one
        self._n_redirects = 1 << 62
        self._rules = base_names and spelling_variants  # the rules an overlay repeats
        # keys an overlay decides instead (kg_agent.entities.overlay), its automaton of
        # those it gives entries, and the entries (the automaton's values index them)
        self._overlay: frozenset[str] = frozenset()
        self._overlaid = False
        self._delta: ahocorasick.Automaton | None = None
        self._delta_entries: list[list[Entry]] = []

        # values past the built titles are aliases (an overlay appends titles after)
        n = self._n_built = len(self._titles)
        if n >= 1 << 28:
            raise ValueError("too many titles for one matcher (limit 268M)")
        for i, title in enumerate(self._titles):
            self._add(title, _TITLE, i, i << 2)
        if aliases is not None:
            index: dict[str, int] = {t: i for i, t in enumerate(self._titles)}
            pairs = aliases.items() if isinstance(aliases, Mapping) else aliases
            for alias, target in pairs:
                tid = index.get(target.strip())
                if tid is not None:
                    self._add_alias(alias.strip(), tid)
            del index
        self._n_redirects = len(self._alias_forms)
        for i, title in enumerate(self._titles):
            base = base_name(title) if base_names else None
            if base is not None:
                self._add(base, _BASE, i, (i << 2) | 2)
            if spelling_variants:
                for form in (title, base):
                    if form is not None:
                        for variant in _variants(form):
                            self._add_alias(variant, i)
        self._size = len(self._automaton)
        if self._size:
            self._automaton.make_automaton()

    # ------------------------------------------------------------------ build

    def _add_alias(self, alias: str, tid: int) -> None:
        if alias == self._titles[tid] or not eligible_form(alias, self._min_length, self._common):
            return
        j = self._n_built + len(self._alias_forms)
        self._alias_forms.append(alias)
        self._alias_target.append(tid)
        self._add(alias, _ALIAS, tid, j << 2)

    def _add(self, form: str, prio: int, target: int, simple: int) -> None:
        if not eligible_form(form, self._min_length, self._common):
            return
        key = _lower(form)
        old = self._automaton.get(key, None)
        if old is None:
            self._automaton.add_word(key, simple)
            return
        if self._offers is not None:
            offers = self._offers.get(key)
            if offers is None:
                offers = self._offers[key] = [self._offer_of(old)]
            offers.append((form, prio, target, self._redirect_of(simple)))
        entries = self._entries(old)
        merge_offer(entries, form, prio, target, self._titles)
        if old & 1:
            self._side[old >> 2] = entries
        elif len(entries) == 1 and entries[0][2] == (target,) and entries[0][1] == prio:
            self._automaton.add_word(key, simple)  # the newcomer outranked the old form
        elif len(entries) == 1 and len(entries[0][2]) == 1:
            pass  # the old simple entry stands
        else:
            self._side.append(entries)
            self._automaton.add_word(key, ((len(self._side) - 1) << 2) | 1)

    def _redirect_of(self, simple: int) -> int:
        """The redirect index of a simple value's alias, or -1 (a title, base or variant)."""
        j = (simple >> 2) - self._n_built
        return j if 0 <= j < self._n_redirects else -1

    def _offer_of(self, simple: int) -> tuple[str, int, int, int]:
        """The one offer a key held before a second came (its value is simple)."""
        form, tid, prio = self._decode(simple)
        return (form, prio, tid, self._redirect_of(simple))

    def _entries(self, value: int) -> list[Entry]:
        if value & 1:
            return list(self._side[value >> 2])
        form, tid, prio = self._decode(value)
        return [(form, prio, (tid,))]

    def _decode(self, value: int) -> tuple[str, int, int]:
        """(form, canonical title id, priority) of a simple automaton value."""
        idx = value >> 2
        n = self._n_built
        if idx >= n:
            return self._alias_forms[idx - n], self._alias_target[idx - n], _ALIAS
        title = self._titles[idx]
        if value & 2:
            base = base_name(title)
            assert base is not None
            return base, idx, _BASE
        return title, idx, _TITLE

    # ------------------------------------------------------------------ query

    def __len__(self) -> int:
        """Number of distinct (lower-cased) surface forms in the automaton."""
        return self._size

    @property
    def titles(self) -> list[str]:
        return self._titles

    def find(self, text: str, *, source_title: str | None = None) -> dict[str, int]:
        """Canonical title → number of mentions in ``text``, never ``source_title`` itself."""
        if not self._size or not text:
            return {}
        source = source_title.strip() if source_title is not None else None
        spans = self._candidates(text, source)
        if not spans:
            return {}
        # Words of the page's own title: a one-word base name among them is the page
        # naming its subject ("Lewis" in "Dan Lewis (footballer)" is not "Lewis
        # (satellite)"; full titles still count: "Warsaw" in "Polonia Warsaw"), and a
        # match right after one is the rest of the subject's full name ("Terry
        # Richardson" in "Kenton Terry Richardson", the page "Kenton Richardson").
        own_words: frozenset[str] = frozenset()
        if source and self._own_words:
            own_words = frozenset(w for w in (base_name(source) or source).split(" ") if w)
        counts: dict[str, int] = {}
        for start, stop, targets, prio in self._select(spans, len(text)):
            if own_words:
                if prio == _BASE and text[start:stop] in own_words:
                    continue
                if start >= 2 and text[start - 1] == " ":
                    prev = text[text.rfind(" ", 0, start - 1) + 1 : start - 1]
                    if prev in own_words and prev[:1].isupper():
                        continue
            if not targets:
                continue  # matched, but which title is meant cannot be told
            names = [self._titles[t] for t in targets]
            if source is not None and source in names:
                continue  # a self-mention, possibly through a shared base name
            if len(names) > 1 and not self._ambiguous_all:
                continue
            for name in names:
                counts[name] = counts.get(name, 0) + 1
        return counts

    def _candidates(
        self, text: str, source: str | None
    ) -> list[tuple[int, int, tuple[int, ...], int]]:
        """Every whole-word, case-valid match: (start, stop, title ids, priority)."""
        low = _lower(text)
        size = len(text)
        spans: list[tuple[int, int, tuple[int, ...], int]] = []
        for end, entries, form, tid, prio in self._hits(low):
            length = len(entries[0][0]) if entries else len(form)
            start = end - length + 1
            stop = end + 1
            if (start > 0 and _joined_left(text, start - 1)) or (
                stop < size and _joined_right(text, stop)
            ):
                continue
            span = text[start:stop]
            if entries:
                targets, prio = self._resolve(span, entries)
                if not targets:
                    continue
            else:
                if span != form and not (self._case_insensitive and _case_ok(span, form)):
                    continue
                targets = (tid,)
            if _name_goes_on(text, stop) or (" " not in span and self._inside_name(text, start)):
                continue
            if prio == _BASE:
                if len(targets) > 1 and any(self._titles[t] == source for t in targets):
                    targets = ()  # the page itself is a candidate: a self-mention
                targets = self._by_year(text, start, stop, targets)
                if len(targets) > 1 and self._by_kind_words:
                    targets = self._by_kind(text, start, stop, targets)
            spans.append((start, stop, targets, prio))
        return spans

    def _hits(self, low: str) -> Iterator[tuple[int, list[Entry] | None, str, int, int]]:
        """(end, entries or None, form, title id, priority) of every key found in
        the lower-cased text: a side key gives its entries, a simple one its form; keys an
        overlay decides come from its automaton instead (always as entries)."""
        overlay = self._overlay
        # a matcher built with no eligible form never made its automaton (an overlay may
        # still give it keys): there is nothing to iterate
        base = self._automaton.iter(low) if self._automaton.kind == ahocorasick.AHOCORASICK else ()
        for end, value in base:
            if value & 1:
                entries = self._side[value >> 2]
                if overlay and low[end - len(entries[0][0]) + 1 : end + 1] in overlay:
                    continue
                yield end, entries, "", -1, 0
            else:
                form, tid, prio = self._decode(value)
                if overlay and low[end - len(form) + 1 : end + 1] in overlay:
                    continue
                yield end, None, form, tid, prio
        if self._delta is not None:
            for end, index in self._delta.iter(low):
                yield end, self._delta_entries[index], "", -1, 0

    def _select(
        self, spans: list[tuple[int, int, tuple[int, ...], int]], size: int
    ) -> list[tuple[int, int, tuple[int, ...], int]]:
        """Non-overlapping matches, longest first (leftmost among equals)."""
        if len(spans) == 1:
            return spans
        if not self._longest_first:
            spans.sort(key=lambda s: (s[0], -s[1]))
            out = []
            covered = 0
            for span in spans:
                if span[0] >= covered:
                    out.append(span)
                    covered = span[1]
            return out
        spans.sort(key=lambda s: (s[0] - s[1], s[0]))
        used = bytearray(size)
        out = []
        for span in spans:
            start, stop = span[0], span[1]
            if used.find(1, start, stop) < 0:
                used[start:stop] = b"\x01" * (stop - start)
                out.append(span)
        return out

    def _by_year(
        self, text: str, start: int, stop: int, targets: tuple[int, ...]
    ) -> tuple[int, ...]:
        """Pick among "X (1945 film)", "X (1976 film)" by a year the text gives.

        ``"Macbeth"( 1971)`` or ``the 1971 film Macbeth`` keeps only titles whose
        disambiguator has that year, and links nothing if every candidate carries
        another year (the film meant is not in the corpus).
        """
        m = _YEAR_AFTER.match(text, stop)
        if m is None:
            m = _YEAR_BEFORE.search(text, max(0, start - 40), start)
        if m is None:
            return targets
        year = m.group(1)
        keep: list[int] = []
        dated = False
        for t in targets:
            p = _PAREN.match(self._titles[t])
            qualifier = p.group(2) if p else ""
            if year in qualifier:
                keep.append(t)
            elif _YEAR.search(qualifier):
                dated = True
        if keep:
            return tuple(keep)
        return () if dated else targets

    def _by_kind(
        self, text: str, start: int, stop: int, targets: tuple[int, ...]
    ) -> tuple[int, ...]:
        """Pick among "X (duo)", "X (album)" by a kind word next to the mention.

        The head noun of each disambiguator ("duo", "album" of "Love and Theft
        album", "footballer" of "footballer, born 1912") is looked for among the
        three words before and after the mention ("the duo Love and Theft", "their
        album, "Love and Theft""); the candidate whose word is nearest wins, and
        a tie picks none.
        """
        before = _WORD.findall(text[max(0, start - 40) : start].lower())[-3:]
        after = _WORD.findall(text[stop : stop + 30].lower())[:3]
        distance: dict[str, int] = {}
        for d, w in enumerate(after, start=1):
            distance.setdefault(w, d)
        for d, w in enumerate(reversed(before), start=1):
            distance[w] = min(d, distance.get(w, d))
        if not distance:
            return targets
        scored: list[tuple[int, int]] = []
        for t in targets:
            kind = kind_word(self._titles[t])
            if kind is not None and kind in distance:
                scored.append((distance[kind], t))
        scored.sort()
        if scored and (len(scored) == 1 or scored[0][0] < scored[1][0]):
            return (scored[0][1],)
        return targets

    def _resolve(
        self, span: str, entries: list[tuple[str, int, tuple[int, ...]]]
    ) -> tuple[tuple[int, ...], int]:
        """Titles (and priority) a span of a shared key stands for; exact spelling wins."""
        for form, prio, targets in entries:
            if span == form:
                return targets, prio
        found: list[int] = []
        best = 0
        if self._case_insensitive:
            for form, prio, targets in entries:
                if _case_ok(span, form):
                    found.extend(t for t in targets if t not in found)
                    best = max(best, prio)
        return tuple(found), best

    def _inside_name(self, text: str, start: int) -> bool:
        """A one-word match right after a capitalised word is part of a name ("Harold Lloyd")."""
        if start >= 2 and text[start - 1] == " " and text[start - 2].isalpha():
            word_start = text.rfind(" ", 0, start - 1) + 1
            prev = text[word_start : start - 1]
            if prev[:1].isupper() and not prev.endswith(("'s", "’s")):  # "Apple's Macintosh"
                low = prev.lower()
                if low not in self._common and low not in _PREFIX_WORDS:
                    return True
        return False


def merge_offer(entries: list[Entry], form: str, prio: int, target: int, titles: list[str]) -> None:
    """Offer ``form`` (of title id ``target``) to a key's entries, in place: a form
    already there keeps its higher priority or, at the same one, gains the title; a
    new form is appended. The build and an overlay's recomputed keys both go through
    here, in the same order of offers, so they agree."""
    for k, (f, p, targets) in enumerate(entries):
        if f != form:
            continue
        if prio > p:
            entries[k] = (form, prio, (target,))
        elif prio == p and all(titles[t] != titles[target] for t in targets):
            entries[k] = (form, p, (*targets, target))
        return
    entries.append((form, prio, (target,)))


def _name_goes_on(text: str, stop: int) -> bool:
    """The match is followed by a capitalised word ("Stephen King", "Juan Carlos Onetti")."""
    return (
        stop + 1 < len(text)
        and text[stop] == " "
        and text[stop + 1].isupper()
        and not (text[stop + 1] == "I" and text[stop + 2 : stop + 3] in ("", " "))
    )

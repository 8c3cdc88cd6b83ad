"""Change a built :class:`MentionMatcher`'s names without building it again.

An update that adds, deletes or moves a few articles changes a few of the names the
question linker matches, and building its automaton again reads every name (100k
titles: ~1.5 s, 1M: ~25 s). An :class:`Overlay` holds only what changed: the keys
(lower-cased forms) that a removed or added title or redirect offers a form to,
each recomputed from the offers it has now, and an automaton of those keys. The
base matcher skips the keys an overlay decides, so the two together find what a
matcher built from the new names finds (``tests/unit/entities/test_overlay.py``).

Recomputing a key needs every form it was offered, also those its entries no
longer show (a title's form outranks a base name of the same spelling, and comes
back when that title goes), so the base is built ``patchable`` (it records the
offers of every key offered more than one), and names are offered in one order a
patch can repeat: titles sorted, then redirects sorted, then base names and
spelling variants by sorted title (the linker sorts before it builds). An overlay
is always made against the base as built, never against another overlay, so its
size is the difference between the base's names and the graph's, and the linker
builds a new base when that grows past a share of the base
(:data:`MAX_CHANGED_SHARE`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import ahocorasick

from kg_agent.entities.matcher import (
    _ALIAS,
    _BASE,
    _TITLE,
    Entry,
    MentionMatcher,
    _lower,
    _variants,
    base_name,
    eligible_form,
    merge_offer,
)

__all__ = ["MAX_CHANGED_SHARE", "Overlay", "apply_overlay", "make_overlay"]

#: Past this share of the base's names changed, the linker builds a new base.
MAX_CHANGED_SHARE = 0.10

# (form, priority, title id, redirect index or -1), as MentionMatcher records offers
_Offer = tuple[str, int, int, int]


@dataclass(frozen=True)
class Overlay:
    """What a base matcher needs to match a newer set of names.

    ``titles``: titles the base lacks, given ids after its own; ``keys``: the keys
    recomputed; ``entries``: each key's entries (empty: the key matches nothing now).
    ``changed``: titles and redirects added or removed, against the base.
    """

    titles: tuple[str, ...]
    keys: tuple[str, ...]
    entries: tuple[tuple[Entry, ...], ...]
    changed: int


def make_overlay(
    base: MentionMatcher,
    titles: Iterable[str],
    aliases: Iterable[tuple[str, str]],
    *,
    max_share: float | None = None,
) -> Overlay | None:
    """The overlay that makes ``base`` match ``titles`` and ``aliases`` (the names a new
    build would take); None when ``base`` was not built ``patchable``, has an overlay
    already, or more than ``max_share`` (default :data:`MAX_CHANGED_SHARE`) of its
    names changed (build a new one). ``base`` must have been built as the linker builds
    (``linker._build``: names stripped, each once, sorted): the overlay repeats that
    build's order, and a name given twice would be removed once."""
    if base._offers is None or base._overlaid or not base._rules:
        return None
    # set operations on the names as given, so that the unchanged millions cost C loops
    # only; what a build would strip or drop is looked at among the differences alone
    old_titles = base._titles
    have = dict(zip(old_titles, range(len(old_titles)), strict=True))
    now = set(titles)
    if any(t != t.strip() for t in now - have.keys()):
        now = {t.strip() for t in now}
    removed_titles = have.keys() - now
    added = sorted(now - have.keys())
    nr = base._n_redirects
    old_pairs = dict(
        zip(
            zip(
                base._alias_forms[:nr],
                map(old_titles.__getitem__, base._alias_target[:nr]),
                strict=True,
            ),
            range(nr),
            strict=True,
        )
    )
    given = set(aliases)
    new_pairs = set()
    for alias, target in given - old_pairs.keys():
        a, t = alias.strip(), target.strip()
        if t in now and a != t and eligible_form(a, base._min_length, base._common):
            new_pairs.add((a, t))
    removed_pairs = {old_pairs[p] for p in old_pairs.keys() - given - new_pairs}
    gone = {have[t] for t in removed_titles}
    if gone:  # a redirect to a title that went offers nothing, even when still given
        targets = base._alias_target
        removed_pairs.update(j for j in range(nr) if targets[j] in gone)
    added_pairs = sorted(new_pairs - old_pairs.keys())
    changed = len(removed_titles) + len(added) + len(removed_pairs) + len(added_pairs)
    share = MAX_CHANGED_SHARE if max_share is None else max_share
    if changed > share * max(1, len(old_titles) + len(old_pairs)):
        return None

    ids = {t: len(old_titles) + k for k, t in enumerate(added)}
    all_titles = [*old_titles, *added]
    # every key a removed or added name offers a form to, with the added names' offers
    new_offers: dict[str, list[_Offer]] = {}
    dirty: set[str] = set()
    for title in removed_titles:
        dirty.update(_lower(form) for form, _ in _forms(base, title))
    for j in removed_pairs:
        dirty.add(_lower(base._alias_forms[j]))
    for title in added:
        for form, prio in _forms(base, title):
            new_offers.setdefault(_lower(form), []).append((form, prio, ids[title], -1))
    for k, (alias, target) in enumerate(added_pairs):
        # a redirect index past the base's: it sorts by its names, and no removal names it
        tid = ids[target] if target in ids else have[target]
        offer = (alias, _ALIAS, tid, base._n_redirects + k)
        new_offers.setdefault(_lower(alias), []).append(offer)
    dirty.update(new_offers)

    new_pair_names = dict(enumerate(added_pairs, start=base._n_redirects))
    keys = sorted(dirty)
    entries: list[tuple[Entry, ...]] = []
    for key in keys:
        offers = [
            o
            for o in _offers_of(base, key)
            if o[2] not in gone and not (o[3] >= 0 and o[3] in removed_pairs)
        ]
        offers.extend(new_offers.get(key, ()))
        offers.sort(key=lambda o: _order(base, all_titles, new_pair_names, o))
        merged: list[Entry] = []
        for form, prio, tid, _ in offers:
            merge_offer(merged, form, prio, tid, all_titles)
        entries.append(tuple(merged))
    return Overlay(tuple(added), tuple(keys), tuple(entries), changed)


def apply_overlay(base: MentionMatcher, overlay: Overlay) -> MentionMatcher:
    """Give ``base`` (a matcher as built, in place) the overlay's names; returns it."""
    if base._overlaid:
        raise ValueError("this matcher has an overlay already")
    base._overlaid = True
    n_keys = len(base._automaton)
    base._titles.extend(overlay.titles)
    base._overlay = frozenset(overlay.keys)
    base._delta_entries = [list(e) for e in overlay.entries if e]
    delta = ahocorasick.Automaton(ahocorasick.STORE_INTS)
    index = 0
    for key, entries in zip(overlay.keys, overlay.entries, strict=True):
        if entries:
            delta.add_word(key, index)
            index += 1
    in_base = sum(1 for key in overlay.keys if base._automaton.exists(key))
    base._size = n_keys - in_base + index
    if index:
        delta.make_automaton()
        base._delta = delta
    return base


def _forms(base: MentionMatcher, title: str) -> list[tuple[str, int]]:
    """The (form, priority) offers a title makes, in the build's order: the title, then
    its base name and the spelling variants of both (redirects come between)."""
    out = [(title, _TITLE)] if eligible_form(title, base._min_length, base._common) else []
    return out + _later_forms(base, title)


def _later_forms(base: MentionMatcher, title: str) -> list[tuple[str, int]]:
    """A title's offers after the redirects' (base name, spelling variants), in order."""
    out: list[tuple[str, int]] = []
    short = base_name(title)
    if short is not None and eligible_form(short, base._min_length, base._common):
        out.append((short, _BASE))
    for form in (title, short):
        if form is None:
            continue
        for variant in _variants(form):
            if variant != title and eligible_form(variant, base._min_length, base._common):
                out.append((variant, _ALIAS))
    return out


def _offers_of(base: MentionMatcher, key: str) -> list[_Offer]:
    """Every offer the base's build made to ``key``."""
    assert base._offers is not None
    recorded = base._offers.get(key)
    if recorded is not None:
        return list(recorded)
    value = base._automaton.get(key, None)
    return [] if value is None else [base._offer_of(value)]


def _order(
    base: MentionMatcher,
    titles: list[str],
    new_pairs: dict[int, tuple[str, str]],
    offer: _Offer,
) -> tuple[int, str, str, int]:
    """Where the build would have made this offer: titles first (sorted), redirects
    (sorted by name and target), then base names and variants (by sorted title)."""
    form, prio, tid, redirect = offer
    if redirect >= 0:
        if redirect < base._n_redirects:
            return (1, base._alias_forms[redirect], base._titles[base._alias_target[redirect]], 0)
        alias, target = new_pairs[redirect]
        return (1, alias, target, 0)
    title = titles[tid]
    if prio == _TITLE and form == title:
        return (0, title, "", 0)
    later = _later_forms(base, title)
    return (2, title, "", later.index((form, prio)) if (form, prio) in later else len(later))

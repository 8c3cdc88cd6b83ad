"""A base matcher with an overlay finds what a matcher built from the new names finds."""

from __future__ import annotations

import random

import pytest

from kg_agent.entities import linker
from kg_agent.entities.matcher import MentionMatcher
from kg_agent.entities.overlay import apply_overlay, make_overlay

Names = tuple[list[str], list[tuple[str, str]]]

# Names that share spellings every way the build merges them: a title and another's
# base name ("Macbeth", "Macbeth (1926 film)"), two base names, case ("MACBETH"), a
# redirect spelled as a title or a base name, HTML entities and hyphens (variants).
_WORDS = ["Macbeth", "Dark River", "Love and Theft", "X&amp;Y", "Jean-Baptiste", "Paris"]
_KINDS = ["", " (film)", " (1926 film)", " (1990 film)", " (novel)", " (duo)", " (album)"]


def _pool() -> list[str]:
    out = [w + k for w in _WORDS for k in _KINDS]
    out += [w.upper() for w in _WORDS] + [w.lower() for w in _WORDS]
    out += ["X&Y", "Jean- Baptiste", "Darker River", "The Macbeth", "Macbeth River"]
    return out


def _build(names: Names) -> MentionMatcher:
    return linker._build(*names)  # as the linker builds: names stripped, once each, sorted


def _texts() -> list[str]:
    out = []
    for w in [*_WORDS, "X&Y", "Jean- Baptiste", "Darker River", "The Macbeth", "MACBETH"]:
        out += [
            f"Who directed {w}?",
            f"Was the 1990 film {w} a novel?",
            f"The duo {w} released an album.",
            f"{w.lower()} and {w.upper()} in {w} (1926).",
        ]
    return out


def _assert_same(patched: MentionMatcher, fresh: MentionMatcher) -> None:
    for text in _texts():
        assert list(patched.find(text).items()) == list(fresh.find(text).items()), text
    assert len(patched) == len(fresh)


def _patched(old: Names, new: Names) -> MentionMatcher:
    overlay = make_overlay(_build(old), *new, max_share=100.0)
    assert overlay is not None
    return apply_overlay(_build(old), overlay)


def _random_names(rng: random.Random, pool: list[str]) -> Names:
    titles = rng.sample(pool, rng.randint(1, len(pool)))
    aliases = [(rng.choice(pool), rng.choice(titles)) for _ in range(rng.randint(0, 12))]
    return titles, sorted(set(aliases))


@pytest.mark.parametrize("seed", range(60))
def test_an_overlay_matches_a_fresh_build_of_the_new_names(seed: int) -> None:
    rng = random.Random(seed)
    pool = _pool()
    old = _random_names(rng, pool)
    titles = [t for t in old[0] if rng.random() > 0.3] + rng.sample(pool, 5)
    titles = sorted(set(titles)) or ["Paris"]
    aliases = [a for a in old[1] if rng.random() > 0.3 and a[1] in titles]
    aliases += [(rng.choice(pool), rng.choice(titles)) for _ in range(4)]
    # redirects to no title (one still given after its title went), and names with
    # spaces around, as a build takes them
    aliases += [a for a in old[1] if a[1] not in titles][:2]
    aliases += [(rng.choice(pool), rng.choice(pool)), (f" {rng.choice(pool)}", rng.choice(titles))]
    titles += [f"{rng.choice(pool)} "]
    new = (titles, sorted(set(aliases)))
    overlay = make_overlay(_build(old), *new, max_share=100.0)
    assert overlay is not None
    _assert_same(apply_overlay(_build(old), overlay), _build(new))


def test_a_title_s_form_comes_back_to_the_base_name_it_outranked() -> None:
    old = (["Macbeth", "Macbeth (1971 film)"], [])
    new = (["Macbeth (1971 film)"], [])
    patched = _patched(old, new)
    assert _build(old).find("Who directed Macbeth?") == {"Macbeth": 1}
    assert patched.find("Who directed Macbeth?") == {"Macbeth (1971 film)": 1}
    _assert_same(patched, _build(new))


def test_a_removed_redirect_stops_matching_and_an_added_one_starts() -> None:
    old = (["Małgorzata Braunek", "Andrzej Żuławski"], [("Braunek", "Małgorzata Braunek")])
    new = (["Małgorzata Braunek", "Andrzej Żuławski"], [("Zulawski", "Andrzej Żuławski")])
    overlay = make_overlay(_build(old), *new, max_share=100.0)
    assert overlay is not None and overlay.changed == 2
    patched = apply_overlay(_build(old), overlay)
    assert patched.find("Braunek met Zulawski.") == {"Andrzej Żuławski": 1}
    _assert_same(patched, _build(new))


def test_an_added_title_joins_the_titles_its_base_name_shares() -> None:
    old = (["Dark River (1990 film)", "Dark River (novel)"], [])
    new = (["Dark River (1990 film)", "Dark River (novel)", "Dark River (2005 film)"], [])
    patched = _patched(old, new)
    assert list(patched.find("Who wrote Dark River?")) == [
        "Dark River (1990 film)",
        "Dark River (2005 film)",
        "Dark River (novel)",
    ]
    _assert_same(patched, _build(new))


def test_too_many_changes_ask_for_a_new_build() -> None:
    old = ([f"Title {i}" for i in range(100)], [])
    new = ([f"Title {i}" for i in range(89)], [])
    assert make_overlay(_build(old), *new) is None  # 11% of the names changed
    assert make_overlay(_build(old), *new, max_share=0.2) is not None


def test_only_a_patchable_matcher_without_an_overlay_takes_one() -> None:
    names = (["Paris"], [])
    plain = MentionMatcher(["Paris"], ambiguous="all")
    assert make_overlay(plain, *names) is None
    patched = _patched(names, names)
    assert make_overlay(patched, *names) is None
    overlay = make_overlay(_build(names), *names)
    assert overlay is not None and overlay.changed == 0 and not overlay.keys
    with pytest.raises(ValueError, match="overlay already"):
        apply_overlay(patched, overlay)


def test_a_base_with_no_eligible_form_takes_an_overlay() -> None:
    # "The", "Mother": no form the automaton takes, so the base never made it
    old: Names = (["The", "Mother", "Love"], [])
    new: Names = (["The", "Mother", "Love", "Paris"], [])
    patched = _patched(old, new)
    assert patched.find("Who lives in Paris?") == {"Paris": 1}
    _assert_same(patched, _build(new))


def test_names_given_twice_or_with_spaces_are_one_name() -> None:
    old: Names = (["Paris", "Paris "], [("Lutetia", "Paris"), ("Lutetia ", "Paris")])
    new: Names = (["Lyon"], [])
    patched = _patched(old, new)
    assert patched.find("Is Lutetia Paris?") == {}
    _assert_same(patched, _build(new))

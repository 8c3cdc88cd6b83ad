#!/usr/bin/env python3
"""Check the hand-written question set against the English Wikipedia sample.

Usage (from the project root):

    python tests/questions/check_questions.py [DUMP] [--questions PATH]

DUMP defaults to ``../shared/data/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-
shortened.bz2`` relative to the project root. When the dump is absent the script prints
"skipped: sample not found" and exits 0.

What it verifies, per question:

* the record has the expected fields, a known ``kind``, a unique ``id``, and ``answerable``
  matches the kind (only ``unanswerable`` questions are unanswerable, with ``answers == []``);
* every title in ``articles`` is a non-redirect page of the sample;
* answerable questions other than yes/no: ``answers[0]`` or one of ``aliases`` occurs in the
  wikitext of at least one listed article (for ``connection``: one and the same form in every
  listed article, since the answer is a title both sides link to). Matching is case-insensitive over
  whitespace-normalised text, against the raw wikitext and against the wikitext with links
  reduced to their label (``[[x|y]]`` -> ``y``, ``[[x]]`` -> ``x``);
* yes/no questions: the answer is ``yes`` or ``no``;
* unanswerable questions: the ``topic`` is neither a title nor a redirect (source or target) of
  the sample, compared ignoring case, spaces and punctuation.

It prints a per-kind count table and exits 1 listing every failing question.
Standard library only.
"""

from __future__ import annotations

import argparse
import bz2
import html
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DUMP = (
    PROJECT_ROOT.parent
    / "shared"
    / "data"
    / "wiki"
    / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)
DEFAULT_QUESTIONS = Path(__file__).resolve().parent / "enwiki_sample.json"

KINDS = (
    "infobox",
    "text",
    "two_hop",
    "comparison",
    "yes_no",
    "connection",
    "unanswerable",
)
FIELDS = (
    "id",
    "question",
    "kind",
    "answerable",
    "answers",
    "aliases",
    "topic",
    "articles",
    "source",
    "note",
)

_PIPED_LINK = re.compile(r"\[\[([^\[\]|]*)\|([^\[\]]*)\]\]")
_PLAIN_LINK = re.compile(r"\[\[([^\[\]|]*)\]\]")
_SPACE = re.compile(r"\s+")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def read_sample(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Return (articles: title -> wikitext, redirects: title -> target)."""
    articles: dict[str, str] = {}
    redirects: dict[str, str] = {}
    opener = bz2.open if path.suffix == ".bz2" else open
    with opener(path, "rb") as fh:
        for _event, elem in ET.iterparse(fh, events=("end",)):
            if _local(elem.tag) != "page":
                continue
            title = ""
            target = None
            text = ""
            for child in elem.iter():
                name = _local(child.tag)
                if name == "title":
                    title = child.text or ""
                elif name == "redirect":
                    target = child.get("title", "")
                elif name == "text":
                    text = child.text or ""
            if target is not None:
                redirects[title] = target
            else:
                articles[title] = text
            elem.clear()
    return articles, redirects


def normalise(text: str) -> str:
    text = html.unescape(text.replace("&nbsp;", " "))
    return _SPACE.sub(" ", text.replace("\u00a0", " ")).strip().casefold()


def title_key(title: str) -> str:
    return "".join(ch for ch in title.casefold() if ch.isalnum())


def reduce_links(text: str) -> str:
    # Repeat: a link label may itself sit inside another construct.
    for _ in range(3):
        new = _PLAIN_LINK.sub(r"\1", _PIPED_LINK.sub(r"\2", text))
        if new == text:
            break
        text = new
    return text


class Haystacks:
    """Normalised raw and link-reduced wikitext per article, built lazily."""

    def __init__(self, articles: dict[str, str]) -> None:
        self._articles = articles
        self._cache: dict[str, tuple[str, str, str]] = {}

    def get(self, title: str) -> tuple[str, str, str]:
        if title not in self._cache:
            raw = self._articles[title]
            reduced = reduce_links(raw)
            # also without wiki bold/italic quote runs, which split phrases such as ''Eagle''
            plain = re.sub(r"'{2,}", "", reduced)
            self._cache[title] = (normalise(raw), normalise(reduced), normalise(plain))
        return self._cache[title]

    def contains(self, title: str, needle: str) -> bool:
        n = normalise(needle)
        return bool(n) and any(n in hay for hay in self.get(title))


def check(
    questions: list[dict[str, object]],
    articles: dict[str, str],
    redirects: dict[str, str],
) -> tuple[list[str], Counter[str], list[str]]:
    failures: list[str] = []
    notes: list[str] = []
    counts: Counter[str] = Counter()
    hay = Haystacks(articles)
    # titles, redirect titles and redirect targets, compared loosely ("AdolfHitler" ==
    # "Adolf Hitler"): a name the sample redirects to counts as known to the sample
    known = {title_key(t) for t in (*articles, *redirects, *redirects.values())}
    seen: set[str] = set()
    for q in questions:
        qid = str(q.get("id", "?"))
        problems: list[str] = []
        missing = [f for f in FIELDS if f not in q]
        if missing:
            failures.append(f"{qid}: missing fields {missing}")
            continue
        if qid in seen:
            problems.append("duplicate id")
        seen.add(qid)
        kind = str(q["kind"])
        counts[kind] += 1
        answers = [str(a) for a in q["answers"]]  # type: ignore[attr-defined]
        aliases = [str(a) for a in q["aliases"]]  # type: ignore[attr-defined]
        arts = [str(a) for a in q["articles"]]  # type: ignore[attr-defined]
        if kind not in KINDS:
            problems.append(f"unknown kind {kind!r}")
        if not str(q["question"]).strip():
            problems.append("empty question")
        if kind == "unanswerable":
            if q["answerable"] is not False:
                problems.append("unanswerable question marked answerable")
            if answers:
                problems.append("unanswerable question has answers")
            topic = str(q["topic"])
            if title_key(topic) in known:
                problems.append(f"topic {topic!r} is a title or redirect of the sample")
            else:
                mentioned = [t for t in articles if hay.contains(t, topic)]
                if mentioned:
                    notes.append(f"{qid}: topic {topic!r} occurs in {len(mentioned)} article(s)")
        else:
            if q["answerable"] is not True:
                problems.append("answerable kind marked unanswerable")
            if not answers:
                problems.append("no answers")
            if not arts:
                problems.append("no articles")
            for a in arts:
                if a not in articles:
                    what = "a redirect" if a in redirects else "not in the sample"
                    problems.append(f"article {a!r} is {what}")
            if kind == "yes_no":
                if answers and answers[0].casefold() not in ("yes", "no"):
                    problems.append(f"yes/no answer is {answers[0]!r}")
            elif answers and not problems:
                forms = [answers[0], *aliases]
                if kind == "connection":
                    # one and the same bridge title must occur on every side
                    if not any(all(hay.contains(a, f) for a in arts) for f in forms):
                        problems.append(f"no answer form occurs in every one of {arts}")
                elif not any(hay.contains(a, f) for a in arts for f in forms):
                    problems.append(f"answer {answers[0]!r} (or an alias) not found in {arts}")
        if problems:
            failures.append(f"{qid} [{kind}] {q['question']!r}: " + "; ".join(problems))
    return failures, counts, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump", nargs="?", default=str(DEFAULT_DUMP))
    parser.add_argument("--questions", default=str(DEFAULT_QUESTIONS))
    parser.add_argument("-v", "--verbose", action="store_true", help="list passing notes")
    args = parser.parse_args(argv)

    dump = Path(args.dump)
    if not dump.is_file():
        print(f"skipped: sample not found ({dump})")
        return 0
    questions = json.loads(Path(args.questions).read_text(encoding="utf-8"))
    articles, redirects = read_sample(dump)
    failures, counts, notes = check(questions, articles, redirects)

    print(f"sample: {len(articles)} articles, {len(redirects)} redirects")
    print(f"{'kind':<14}{'count':>6}")
    for kind in KINDS:
        print(f"{kind:<14}{counts.get(kind, 0):>6}")
    for kind in sorted(set(counts) - set(KINDS)):
        print(f"{kind:<14}{counts[kind]:>6}")
    print(f"{'total':<14}{sum(counts.values()):>6}")
    per_article = Counter(a for q in questions for a in q.get("articles", []))
    print(f"articles used: {len(per_article)}")
    if notes:
        print(f"unanswerable topics mentioned in passing: {len(notes)}")
        if args.verbose:
            for n in notes:
                print("  " + n)
    if failures:
        print(f"\n{len(failures)} failing question(s):")
        for f in failures:
            print("  " + f)
        return 1
    print("all questions pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())

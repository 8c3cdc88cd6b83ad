"""Can a person trust the answer they read? Plain questions over a real dump, per kind.

The multi-hop sets measure retrieval; this measures the answer: on questions written the
way people ask (``tests/questions/enwiki_sample.json``: infobox facts, text, two hops,
comparisons, yes/no, connections, and questions the graph cannot answer), for each kind:

* **right**: the short answer (the reader's best) matches a gold answer;
* **shown** / **shown right**: the short answer was confident enough to be shown in bold,
  and how often a shown one is right (the precision a reader sees);
* **refused**: answered "not in the graph" (right for an unanswerable question, wrong
  for an answerable one);
* **sentence**: the answer a person reads holds a gold answer (yes/no questions left out:
  "yes" and "no" are no words of a text, as in the dev sets' Contains).

The same figures per **source**, how the reader found its short answer (a fact, the span
model, two values compared, …: the synthesis stage's ``found_by``), say which ways of
answering a bold answer can be trusted from, and which are never shown.

A short answer matches a gold one (:func:`matches`) when, normalised as SQuAD does, they
are equal, one holds the other whole on word boundaries with at most three words more
("Montgomery, Alabama" for "Montgomery"), or they share the same words in another order
("20 July 1969" for "July 20, 1969"); yes/no only match themselves.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from kg_agent.evaluation.metrics import answer_in_text, normalize_answer
from kg_agent.exceptions import SourceError

__all__ = [
    "GOALS",
    "PlainQuestion",
    "Reply",
    "TrustResult",
    "load_plain",
    "matches",
    "run_plain",
    "summarise_plain",
    "write_plain_report",
]

KINDS = ("infobox", "text", "two_hop", "comparison", "yes_no", "connection", "unanswerable")
#: The goals (issue 53): (metric, at least/at most, value in percent). "Right in bold" is
#: the figure a person meets: the answer was shown in bold, and is right.
GOALS = {
    "answerable right in bold": (">=", 60.0),
    "answerable right": (">=", 75.0),
    "shown right": (">=", 90.0),
    "unanswerable refused": (">=", 95.0),
    "answerable refused": ("<=", 3.0),
    "answerable sentence": (">=", 80.0),
}


@dataclass(frozen=True, slots=True)
class PlainQuestion:
    qid: str
    question: str
    kind: str
    answerable: bool
    answers: tuple[str, ...]  # the gold answer, then its aliases
    articles: tuple[str, ...]
    topic: str = ""  # what it asks about (for an unanswerable one: not in the graph)


@dataclass(slots=True)
class TrustResult:
    """One question's outcome (see the module docstring)."""

    qid: str
    kind: str
    answerable: bool
    short_answer: str | None  # the reader's best, shown or not
    shown: bool  # the short answer was shown in bold
    confidence: float
    refused: bool
    right: bool
    #: None for a yes/no question (its gold, "yes" or "no", is no words of the text; the
    #: dev sets' Contains leaves those out alike) and for an unanswerable one
    sentence: bool | None
    answer: str
    latency_ms: float
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: how the reader found its short answer ("fact", "ranked", "compared", …; "" none)
    found_by: str = ""


def load_plain(path: str | Path) -> list[PlainQuestion]:
    """The questions of a plain set (a JSON list with ``kind`` and ``answerable``)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SourceError(str(p), f"cannot read the question set ({exc})") from exc
    if not isinstance(data, list):
        raise SourceError(str(p), "expected a JSON list of questions")
    out = []
    for i, rec in enumerate(data):
        if not isinstance(rec, dict) or "question" not in rec or "kind" not in rec:
            raise SourceError(str(p), f"record {i + 1} has no question or kind")
        answers = tuple(str(a) for a in [*rec.get("answers", ()), *rec.get("aliases", ())] if a)
        out.append(
            PlainQuestion(
                qid=str(rec.get("id", i)),
                question=str(rec["question"]),
                kind=str(rec["kind"]),
                answerable=bool(rec.get("answerable", True)),
                answers=answers,
                articles=tuple(str(t) for t in rec.get("articles", ())),
                topic=str(rec.get("topic", "")),
            )
        )
    return out


def matches(short: str | None, answers: Sequence[str]) -> bool:
    """Whether ``short`` names a gold answer (see the module docstring)."""
    if not short:
        return False
    s = normalize_answer(short)
    s_words = s.split()
    for gold in answers:
        g = normalize_answer(gold)
        if not g:
            continue
        if g in ("yes", "no") or s in ("yes", "no"):
            if s == g:
                return True
            continue
        g_words = g.split()
        if s == g or sorted(s_words) == sorted(g_words):
            return True
        if f" {g} " in f" {s} " and len(s_words) <= len(g_words) + 3:
            return True
        if f" {s} " in f" {g} " and 2 * len(s_words) >= len(g_words):
            return True
    return False


class Reply(NamedTuple):
    """What asking one question gave, as :func:`run_plain` judges it."""

    short_answer: str | None  # the reader's best, shown or not
    shown: bool
    confidence: float
    refused: bool
    text: str  # the answer a person reads
    found_by: str = ""  # how the short answer was found ("" when none was)


#: What runs one question: its :class:`Reply` (or the same fields as a plain tuple).
Asker = Callable[[str], tuple[Any, ...]]


def run_plain(
    questions: Sequence[PlainQuestion], ask: Asker, *, progress: Callable[[int], None] | None = None
) -> list[TrustResult]:
    """Ask every question and judge the answer."""
    out = []
    for i, q in enumerate(questions):
        t0 = time.perf_counter()
        error = None
        try:
            reply = Reply(*ask(q.question))
        except Exception as exc:  # one failure must not lose the run
            reply = Reply(None, False, 0.0, True, "")
            error = f"{type(exc).__name__}: {exc}"
        short, shown, confidence, refused, text, found_by = reply
        latency = 1000 * (time.perf_counter() - t0)
        right = refused if not q.answerable else (not refused and matches(short, q.answers))
        sentence: bool | None = None  # nothing to hold for an unanswerable one
        if q.answerable and not _yes_or_no(q.answers):
            sentence = not refused and bool(answer_in_text(q.answers, text))
        out.append(
            TrustResult(
                qid=q.qid,
                kind=q.kind,
                answerable=q.answerable,
                short_answer=short,
                shown=shown and not refused,
                confidence=round(confidence, 4),
                refused=refused,
                right=right,
                sentence=sentence,
                answer=text,
                latency_ms=round(latency, 2),
                error=error,
                found_by=found_by if short is not None and not refused else "",
            )
        )
        if progress is not None:
            progress(i + 1)
    return out


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def _yes_or_no(answers: Sequence[str]) -> bool:
    return bool(answers) and all(normalize_answer(a) in ("yes", "no") for a in answers)


def _sentence_pct(results: Sequence[TrustResult]) -> float | None:
    """The share whose answer text holds the gold, of those it can hold it (not yes/no)."""
    judged = [r.sentence for r in results if r.sentence is not None]
    return _pct(sum(judged), len(judged))


def summarise_plain(results: Sequence[TrustResult]) -> dict[str, Any]:
    """Per kind and overall: right, shown, shown right, refused, sentence, latency."""
    rows: dict[str, dict[str, Any]] = {}
    for kind in [*KINDS, *sorted({r.kind for r in results} - set(KINDS))]:
        rs = [r for r in results if r.kind == kind]
        if not rs:
            continue
        shown = [r for r in rs if r.shown]
        rows[kind] = {
            "n": len(rs),
            "right": _pct(sum(r.right for r in rs), len(rs)),
            "shown": _pct(len(shown), len(rs)),
            "shown_right": _pct(sum(r.right for r in shown), len(shown)),
            "right_in_bold": _pct(sum(r.right for r in shown if r.answerable), len(rs)),
            "refused": _pct(sum(r.refused for r in rs), len(rs)),
            "sentence": _sentence_pct(rs),
        }
    answerable = [r for r in results if r.answerable]
    unanswerable = [r for r in results if not r.answerable]
    shown = [r for r in results if r.shown]
    shown_answerable = [r for r in answerable if r.shown]
    lat = [r.latency_ms for r in results]
    overall = {
        "answerable right in bold": _pct(sum(r.right for r in shown_answerable), len(answerable)),
        "answerable right": _pct(sum(r.right for r in answerable), len(answerable)),
        "shown right": _pct(sum(r.right and r.answerable for r in shown), len(shown)),
        "unanswerable refused": _pct(sum(r.refused for r in unanswerable), len(unanswerable)),
        "answerable refused": _pct(sum(r.refused for r in answerable), len(answerable)),
        "answerable shown": _pct(len(shown_answerable), len(answerable)),
        "answerable sentence": _sentence_pct(answerable),
        "latency p50 ms": round(statistics.median(lat), 1) if lat else None,
        "errors": sum(r.error is not None for r in results),
    }
    goals = {}
    for name, (op, value) in GOALS.items():
        got = overall[name]
        met = got is not None and (got >= value if op == ">=" else got <= value)
        goals[name] = {"goal": f"{op} {value:g}", "value": got, "met": met}
    return {"kinds": rows, "overall": overall, "goals": goals, "sources": _by_source(results)}


def _by_source(results: Sequence[TrustResult]) -> dict[str, dict[str, Any]]:
    """Per way of finding a short answer (most used first): the questions it answered,
    how often that answer is right (shown or not), how often it is shown in bold, and
    how often a bold one is right. An unanswerable question answered counts as wrong."""
    found: dict[str, list[TrustResult]] = {}
    for r in results:
        if r.found_by:
            found.setdefault(r.found_by, []).append(r)
    out = {}
    for source, rs in sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = [r for r in rs if r.shown]
        out[source] = {
            "n": len(rs),
            "right": _pct(sum(r.right and r.answerable for r in rs), len(rs)),
            "shown": len(shown),
            "shown_right": _pct(sum(r.right and r.answerable for r in shown), len(shown)),
        }
    return out


def write_plain_report(
    results: Sequence[TrustResult],
    summary: dict[str, Any],
    out_dir: str | Path,
    *,
    command: str,
    machine: str,
    questions_path: str,
    extra: dict[str, Any] | None = None,
    extra_lines: Sequence[str] = (),
) -> tuple[Path, Path]:
    """``answers.json`` (every question) and ``answers.md`` (the tables); ``extra`` goes
    into the JSON, ``extra_lines`` (markdown) after the tables."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = {
        "command": command,
        "machine": machine,
        "created": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "questions": questions_path,
        "summary": summary,
        **(extra or {}),
        "results": [asdict(r) for r in results],
    }
    json_path = out / "answers.json"
    json_path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    lines = [
        "# kg-agent: answers a person can trust",
        "",
        f"- **Command:** `{command}`",
        f"- **Machine:** {machine}",
        f"- **Questions:** `{questions_path}` ({len(results)})",
        "",
        "| kind | n | right in bold | right | shown | shown right | refused "
        "| sentence holds the gold |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]

    def cell(v: float | None) -> str:
        return "—" if v is None else f"{v:.1f}"

    for kind, row in summary["kinds"].items():
        lines.append(
            f"| {kind} | {row['n']} | {cell(row['right_in_bold'])} | {cell(row['right'])} | "
            f"{cell(row['shown'])} | "
            f"{cell(row['shown_right'])} | {cell(row['refused'])} | {cell(row['sentence'])} |"
        )
    lines += ["", "| goal | value | target | met |", "| --- | ---: | --- | --- |"]
    for name, g in summary["goals"].items():
        met = "yes" if g["met"] else "no"
        lines.append(f"| {name} | {cell(g['value'])} | {g['goal']} | {met} |")
    if summary.get("sources"):
        lines += [
            "",
            "| found by | answered | right | shown in bold | shown right |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for source, row in summary["sources"].items():
            lines.append(
                f"| {source} | {row['n']} | {cell(row['right'])} | {row['shown']} | "
                f"{cell(row['shown_right'])} |"
            )
    o = summary["overall"]
    lines += [
        "",
        f"Answerable questions with a bold answer: {cell(o['answerable shown'])} %; whose "
        f"answer text holds the gold: {cell(o['answerable sentence'])} %. p50 "
        f"{o['latency p50 ms']} ms; {o['errors']} errors.",
        "",
        "`right`: the short answer (shown or not) matches the gold, or an unanswerable question "
        "was refused; `right in bold`: shown in bold and right; `shown right`: of the bold "
        "answers shown, the share that are right. `found by`: how the reader found the short "
        "answer of the questions it answered (docs/answers.md); `shown in bold` counts them.",
        *extra_lines,
    ]
    md_path = out / "answers.md"
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return json_path, md_path

"""The retrieval-quality loop: rewrite the question, score each hit's relevance, rerank, cut.

Three pieces, each with a Claude path and an offline path, none of which fails a query:

* :func:`rewrite_queries`: the question plus up to ``n - 1`` rephrasings
  (``claude-haiku-4-5-20251001``, else the caller's deterministic ``offline``).
* :func:`llm_relevance_scores` / :func:`offline_relevance`: a relevance score in
  [0, 1] per evidence item. With Claude, one small call per item, in parallel; an item
  whose call fails gets the offline score instead.
* :func:`score_and_rerank`: relevance weighted by authority (the caller's scaled
  PageRank), items under the relevance threshold removed, the rest reranked and cut.

:func:`quality_telemetry` turns the outcome into the trace fields the agent reports.
With Claude, the question and evidence text leave the machine (see the data notice in
:mod:`kg_agent.llm.client`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.llm.client import (
    FAST_MODEL,
    LLMClient,
    LLMError,
    UsageMeter,
    metered_complete,
    parse_json_reply,
)
from kg_agent.multistep.budget import Budget
from kg_agent.retrieval.base import Evidence
from kg_agent.retrieval.multi_query import rephrase
from kg_agent.retrieval.quality import content_words

__all__ = [
    "RELEVANCE_MODEL",
    "REWRITE_MODEL",
    "SIMILARITY_MIDPOINT",
    "SIMILARITY_SLOPE",
    "SIMILARITY_WEIGHT",
    "RelevanceOutcome",
    "RelevancePath",
    "llm_relevance_scores",
    "offline_relevance",
    "parse_score_reply",
    "quality_telemetry",
    "rewrite_queries",
    "score_and_rerank",
]

log = logging.getLogger(__name__)

REWRITE_MODEL = FAST_MODEL
RELEVANCE_MODEL = FAST_MODEL
#: The budget's name for these calls (in the trace and the warnings).
RELEVANCE_CALL = "relevance scoring"
MAX_QUESTION_CHARS = 500
MAX_SECTION_CHARS = 1200

# Offline calibration (see offline_relevance).
SIMILARITY_MIDPOINT = 0.35
SIMILARITY_SLOPE = 10.0
SIMILARITY_WEIGHT = 0.7

RelevancePath = Literal["claude", "offline", "mixed"]

_RELEVANCE_SYSTEM = (
    "You judge search results for a Wikipedia question-answering system. Given a question "
    "and one retrieved section, rate how useful the section is for answering the question, "
    "fully or as one step of a multi-step answer: 0 means unrelated, 1 means it states the "
    "answer or an essential fact. Reply with a single number between 0 and 1 and nothing else."
)


# --------------------------------------------------------------------------- helpers


def _norm_key(text: str) -> str:
    return " ".join(text.split()).casefold()


def _truncate(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rstrip() + " …"


def _clamp01(value: float) -> float:
    if not math.isfinite(value):
        return 0.0
    return min(1.0, max(0.0, value))


def _warn(msg: str, warnings: list[str] | None) -> None:
    log.warning(msg)
    if warnings is not None:
        warnings.append(msg)


# --------------------------------------------------------------------------- rewriting


def rewrite_queries(
    question: str,
    n: int = 3,
    *,
    llm: LLMClient | None,
    offline: Callable[[str], list[str]],
    model: str = REWRITE_MODEL,
    meter: UsageMeter | None = None,
    timeout: float = 15.0,
    warnings: list[str] | None = None,
) -> list[str]:
    """The question first, then rephrasings: at most ``n`` queries, no two alike.

    "Alike" ignores case and spacing. With ``llm``, Claude is asked for ``n - 1``
    rephrasings as a JSON list; when it fails (any :class:`LLMError`, including a reply
    that is not a usable list) ``offline(question)`` is used instead and a warning is
    logged and appended to ``warnings``. When Claude returns fewer distinct variants
    than asked, the offline variants top the list up (no warning). Never raises for a
    model failure; an exception from ``offline`` is also turned into a warning (the
    question alone is searched).
    """
    question = question.strip()
    if not question:
        return []
    n = max(1, int(n))
    out: list[str] = [question]
    seen = {_norm_key(question)}

    def add(candidates: Sequence[str]) -> None:
        for cand in candidates:
            if len(out) >= n:
                return
            if not isinstance(cand, str):
                continue
            cand = " ".join(cand.split())
            key = _norm_key(cand)
            if key and key not in seen:
                seen.add(key)
                out.append(cand)

    if n == 1:
        return out

    use_offline = llm is None
    if llm is not None:
        try:
            add(rephrase(question, n - 1, llm, model=model, meter=meter, timeout=timeout))
        except LLMError as exc:
            reason = exc.located_at(llm).brief
            _warn(f"query rewriting failed ({reason}): using offline rephrasings", warnings)
            use_offline = True
    if use_offline or len(out) < n:
        try:
            add(offline(question))
        except Exception as exc:  # the offline path must not break a query either
            _warn(
                f"offline query rewriting failed ({type(exc).__name__}): searching the "
                "question alone",
                warnings,
            )
    return out


# --------------------------------------------------------------------------- offline relevance


def offline_relevance(ev: Evidence, question: str) -> float:
    """A relevance estimate in [0, 1] from the retrieval signals alone.

    Calibration: ``0.7 * sim_term + 0.3 * coverage`` where

    * ``sim_term = 1 / (1 + exp(-10 * (similarity - 0.35)))`` maps the MiniLM cosine
      (in practice 0.1-0.8) onto a probability-like scale: 0.35, the cosine around
      which hits turn from off-topic to on-topic on our corpora, gives 0.5; 0.15
      gives 0.12, 0.25 gives 0.27, 0.55 gives 0.88 and 0.7 gives 0.97.
    * ``coverage`` is the share of the question's content words
      (:func:`kg_agent.retrieval.quality.content_words`) found in the section's title,
      heading and text; a question with no content words uses ``sim_term`` alone.

    So with the default threshold of 0.2 a section is kept when its cosine is at least
    about 0.28 (0.2 / 0.7 = sim_term 0.29) even with no keyword in common, while a
    low-cosine section (0.1) survives only if it holds most of the question's words.
    ``similarity`` from BM25 sources (normalised to [0, 1]) goes through the same map.
    """
    sim = ev.similarity if math.isfinite(ev.similarity) else 0.0
    sim_term = 1.0 / (1.0 + math.exp(-SIMILARITY_SLOPE * (sim - SIMILARITY_MIDPOINT)))
    keywords = content_words(question)
    if not keywords:
        return _clamp01(sim_term)
    text_words = content_words(f"{ev.title}\n{ev.heading}\n{ev.content}")
    coverage = len(keywords & text_words) / len(keywords)
    return _clamp01(SIMILARITY_WEIGHT * sim_term + (1.0 - SIMILARITY_WEIGHT) * coverage)


# --------------------------------------------------------------------------- Claude relevance

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_LABELLED = re.compile(
    rf"(?:score|relevance|rating)\W{{0,3}}\s*({_NUMBER})\s*(%|/\s*\d+)?", re.IGNORECASE
)
_ANY = re.compile(rf"({_NUMBER})\s*(%|/\s*\d+)?")


def _scaled(number: str, suffix: str | None) -> float:
    value = float(number)
    if suffix:
        suffix = suffix.strip()
        if suffix == "%":
            value /= 100.0
        else:
            denom = float(suffix.lstrip("/").strip())
            value = value / denom if denom else 0.0
    return value


def parse_score_reply(text: str) -> float:
    """A relevance score in [0, 1] from a reply: ``0.7``, ``Score: 0.7``, ``{"score": 0.7}``.

    Also reads ``70%`` and ``7/10``. Out-of-range values are clamped. Raises
    ``LLMError("bad_response")`` when the reply holds no number.
    """
    stripped = text.strip()
    try:
        return _clamp01(float(stripped))
    except ValueError:
        pass
    if "{" in stripped:
        try:
            data = parse_json_reply(stripped)
        except LLMError:
            data = None
        if isinstance(data, dict):
            for key in ("score", "relevance", "rating"):
                value = data.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    return _clamp01(float(value))
                if isinstance(value, str):
                    try:
                        return _clamp01(float(value))
                    except ValueError:
                        pass
    match = _LABELLED.search(stripped) or _ANY.search(stripped)
    if match is None:
        raise LLMError("bad_response", f"relevance reply has no number: {stripped[:80]!r}")
    return _clamp01(_scaled(match.group(1), match.group(2)))


def _relevance_prompt(question: str, ev: Evidence) -> str:
    heading = f" — {ev.heading}" if ev.heading and ev.heading != ev.title else ""
    return (
        f"Question: {_truncate(question, MAX_QUESTION_CHARS)}\n\n"
        f"Section: {ev.title}{heading}\n{_truncate(ev.content, MAX_SECTION_CHARS)}\n\n"
        "Relevance (a number from 0 to 1):"
    )


def _score_one(
    question: str,
    ev: Evidence,
    client: LLMClient,
    *,
    model: str,
    meter: UsageMeter | None,
    timeout: float,
    budget: Budget | None = None,
) -> float | None:
    if budget is not None:
        # asked as each call starts: the calls after the budget runs out are not made
        if not budget.allows(RELEVANCE_CALL):
            return None
        timeout = budget.timeout(timeout)
    try:
        reply = metered_complete(
            client,
            meter,
            model=model,
            system=_RELEVANCE_SYSTEM,
            prompt=_relevance_prompt(question, ev),
            max_tokens=16,
            timeout=timeout,
        )
    except LLMError as exc:  # counted on the meter already
        log.info("relevance scoring of %s failed (%s)", ev.section_id, exc.kind)
        return None
    except Exception as exc:  # a misbehaving client must not take the query down
        if meter is not None:
            meter.record_failure()
        log.warning("relevance scoring of %s raised %s", ev.section_id, type(exc).__name__)
        return None
    try:
        return parse_score_reply(reply.text)
    except LLMError:
        if meter is not None:
            meter.record_failure()
        log.info("relevance reply for %s had no score: %r", ev.section_id, reply.text[:80])
        return None


def llm_relevance_scores(
    question: str,
    evidence: Sequence[Evidence],
    client: LLMClient,
    *,
    model: str = RELEVANCE_MODEL,
    meter: UsageMeter | None = None,
    timeout: float = 15.0,
    max_workers: int = 4,
    budget: Budget | None = None,
) -> list[float | None]:
    """One Claude relevance score in [0, 1] per item, in input order; ``None`` where it failed.

    The calls run in parallel (at most ``max_workers`` at once). A failed call (an
    :class:`LLMError`, or a reply with no number) is counted on ``meter`` and gives
    ``None``; the caller uses :func:`offline_relevance` for that item. Never raises.
    """
    if not evidence:
        return []
    workers = max(1, min(int(max_workers), len(evidence)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kg-relevance") as pool:
        futures = [
            pool.submit(
                _score_one,
                question,
                ev,
                client,
                model=model,
                meter=meter,
                timeout=timeout,
                budget=budget,
            )
            for ev in evidence
        ]
        return [f.result() for f in futures]


# --------------------------------------------------------------------------- rerank


@dataclass
class RelevanceOutcome:
    """The reranked evidence and how it was scored.

    ``kept``: copies of the surviving items, best first, with ``score`` (final) and
    ``scores["relevance"]`` (and ``scores["authority"]`` when an authority was given)
    set. ``scores``: section_id -> relevance for every scored item, dropped ones
    included. ``dropped_below_threshold``: section_ids removed for low relevance.
    ``notes``: human-readable remarks for the trace. ``path``: who scored relevance.
    """

    kept: list[Evidence] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    dropped_below_threshold: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    path: RelevancePath = "offline"


def score_and_rerank(
    question: str,
    evidence: Sequence[Evidence],
    *,
    llm: LLMClient | None = None,
    model: str = RELEVANCE_MODEL,
    meter: UsageMeter | None = None,
    timeout: float = 15.0,
    authority: Callable[[Evidence], float] | None = None,
    authority_weight: float = 0.3,
    rerank_top_k: int = 10,
    relevance_threshold: float = 0.2,
    warnings: list[str] | None = None,
    max_workers: int = 4,
    budget: Budget | None = None,
) -> RelevanceOutcome:
    """Score relevance, drop what is under the threshold, rerank by relevance x authority.

    ``final = relevance * (1 - authority_weight + authority_weight * authority(ev))``
    with ``authority(ev)`` clamped to [0, 1] (without ``authority``, ``final =
    relevance``). Items with ``relevance < relevance_threshold`` are removed; the
    rest are sorted by ``final`` (ties keep input order) and the best
    ``rerank_top_k`` kept. The caller's Evidence objects are not modified: ``kept``
    holds copies. Model failures fall back to :func:`offline_relevance` per item,
    with a warning; this never raises for them. Raises
    :class:`~kg_agent.exceptions.InvalidArgumentError` for out-of-range arguments.
    """
    if not 0.0 <= authority_weight <= 1.0:
        raise InvalidArgumentError(f"authority_weight must be in [0, 1], got {authority_weight}")
    if rerank_top_k < 1:
        raise InvalidArgumentError(f"rerank_top_k must be >= 1, got {rerank_top_k}")
    outcome = RelevanceOutcome()
    items = list(evidence)
    if not items:
        return outcome

    llm_scores: list[float | None] = [None] * len(items)
    if llm is not None:
        try:
            llm_scores = llm_relevance_scores(
                question,
                items,
                llm,
                model=model,
                meter=meter,
                timeout=timeout,
                max_workers=max_workers,
                budget=budget,
            )
        except Exception as exc:  # llm_relevance_scores does not raise; belt and braces
            log.warning("relevance scoring raised %s", type(exc).__name__)
            llm_scores = [None] * len(items)
        skipped = sum(
            stop["skipped"]
            for stop in (budget.stops if budget is not None else [])
            if stop["call"] == RELEVANCE_CALL
        )
        for line in budget.describe() if budget is not None else []:
            if line.startswith(RELEVANCE_CALL):
                _warn(line, warnings)
        failed = sum(1 for s in llm_scores if s is None) - skipped
        scored = len(items) - failed - skipped
        outcome.path = "claude" if scored == len(items) else "offline" if not scored else "mixed"
        if failed == len(items):
            _warn(
                f"relevance scoring failed for all {failed} item(s): using offline scores",
                warnings,
            )
            outcome.notes.append(f"relevance: offline scores for all {failed} item(s)")
        elif failed:
            _warn(
                f"relevance scoring failed for {failed} of {len(items)} item(s): "
                "using offline scores for them",
                warnings,
            )
            outcome.notes.append(f"relevance: Claude scored {scored} item(s), offline {failed}")
        if skipped:
            outcome.notes.append(
                f"relevance: offline scores for {skipped} item(s) the budget stopped"
            )

    ranked: list[tuple[float, int, Evidence, dict[str, float]]] = []
    below: list[str] = []
    for idx, (ev, llm_score) in enumerate(zip(items, llm_scores, strict=True)):
        relevance = llm_score if llm_score is not None else offline_relevance(ev, question)
        outcome.scores[ev.section_id] = relevance
        if relevance < relevance_threshold:
            outcome.dropped_below_threshold.append(ev.section_id)
            below.append(f"{ev.title} ({relevance:.2f})")
            continue
        parts = {"relevance": relevance}
        factor = 1.0
        if authority is not None:
            auth = _clamp01(float(authority(ev)))
            parts["authority"] = auth
            factor = 1.0 - authority_weight + authority_weight * auth
        ranked.append((relevance * factor, idx, ev, parts))

    if below:
        outcome.notes.append(
            f"dropped {len(below)} item(s) below relevance threshold "
            f"{relevance_threshold:g}: " + "; ".join(below)
        )
    ranked.sort(key=lambda t: (-t[0], t[1]))
    if len(ranked) > rerank_top_k:
        outcome.notes.append(f"kept the top {rerank_top_k} of {len(ranked)} relevant item(s)")
    for final, _, ev, parts in ranked[:rerank_top_k]:
        outcome.kept.append(dataclasses.replace(ev, score=final, scores={**ev.scores, **parts}))
    return outcome


# --------------------------------------------------------------------------- telemetry


def quality_telemetry(rewritten: Sequence[str], outcome: RelevanceOutcome) -> dict[str, Any]:
    """Trace fields: the queries searched, every relevance score, the reranked list, notes."""
    return {
        "rewritten_queries": list(rewritten),
        "relevance_scores": {sid: round(s, 4) for sid, s in outcome.scores.items()},
        "reranked_results": [
            {
                "section_id": ev.section_id,
                "title": ev.title,
                "score": round(ev.score, 4),
                "relevance": round(ev.scores.get("relevance", 0.0), 4),
            }
            for ev in outcome.kept
        ],
        "quality_notes": list(outcome.notes),
    }

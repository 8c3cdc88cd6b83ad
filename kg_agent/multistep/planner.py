"""Decompose a question into retrieval steps: by rule, or by one Claude call that may fail.

The rule plan is always available and deterministic; the LLM plan is an
upgrade. Any LLM failure (HTTP error, unparsable or invalid JSON) falls back to
the rule plan with a warning recorded in :attr:`Plan.warnings`, so planning
never raises on the model's account.

Step indices in ``depends_on`` are **0-based**: ``depends_on=(0,)`` means "runs
after the first step". A step may only depend on earlier steps.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from kg_agent.exceptions import InvalidArgumentError, one_line
from kg_agent.language.query_type import COMPARE_WORDS, QueryType, classify_query_type, find_years
from kg_agent.language.tokens import joined_words, wordset
from kg_agent.llm.client import (
    FAST_MODEL,
    LLMClient,
    LLMError,
    UsageMeter,
    metered_complete,
    parse_json_reply,
)

__all__ = [
    "MAX_PLAN_STEPS",
    "MAX_QUERY_CHARS",
    "PLANNER_MODEL",
    "Plan",
    "PlanPattern",
    "PlanSource",
    "PlanStep",
    "StepAction",
    "StepPlanner",
    "parse_plan",
    "rule_plan",
]

log = logging.getLogger(__name__)

PLANNER_MODEL = FAST_MODEL
MAX_PLAN_STEPS = 5
MAX_QUERY_CHARS = 500

PlanPattern = Literal["sequential", "parallel", "conditional"]
PlanSource = Literal["rule", "llm"]
StepAction = Literal["search", "refine", "bridge", "synthesize"]
_PATTERNS: tuple[str, ...] = get_args(PlanPattern)
_SOURCES: tuple[str, ...] = get_args(PlanSource)
_ACTIONS: tuple[str, ...] = get_args(StepAction)

# ---------------------------------------------------------------------------- plan objects


@dataclass(frozen=True)
class PlanStep:
    """One step: its query, what it is after (``focus``), the 0-based steps it needs, and
    what it does (``action``):

    - ``"search"``: search the query; with ``depends_on``, the query is built from what
      those steps found (``{0}`` in it stands for step 0's finding, else the finding is
      added to the query; :func:`~kg_agent.multistep.execute.dependent_query`);
    - ``"refine"``: search the query with the gap still open added to it;
    - ``"bridge"``: the bridge round, which reads what the steps before it found;
    - ``"synthesize"``: nothing more to search: the plan is complete here.
    """

    query: str
    focus: str = ""
    depends_on: tuple[int, ...] = ()
    action: StepAction = "search"

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query.strip():
            raise InvalidArgumentError("plan step query must be a non-empty string")
        if len(self.query) > MAX_QUERY_CHARS:
            raise InvalidArgumentError(
                f"plan step query is {len(self.query)} chars, at most {MAX_QUERY_CHARS}"
            )
        if not isinstance(self.focus, str):
            raise InvalidArgumentError(f"plan step focus must be a string, got {self.focus!r}")
        for dep in self.depends_on:
            if isinstance(dep, bool) or not isinstance(dep, int) or dep < 0:
                raise InvalidArgumentError(f"depends_on holds {dep!r}, not a step index >= 0")
        if self.action not in _ACTIONS:
            raise InvalidArgumentError(
                f"plan step action must be one of {_ACTIONS}, got {self.action!r}"
            )


@dataclass(frozen=True)
class Plan:
    """Steps plus how to run them; ``source`` says who wrote it, ``warnings`` why not the LLM."""

    pattern: PlanPattern
    steps: tuple[PlanStep, ...]
    query_type: QueryType
    source: PlanSource = "rule"
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.pattern not in _PATTERNS:
            raise InvalidArgumentError(
                f"plan pattern must be one of {_PATTERNS}, got {self.pattern!r}"
            )
        if self.source not in _SOURCES:
            raise InvalidArgumentError(
                f"plan source must be one of {_SOURCES}, got {self.source!r}"
            )
        if not 1 <= len(self.steps) <= MAX_PLAN_STEPS:
            raise InvalidArgumentError(
                f"a plan has 1 to {MAX_PLAN_STEPS} steps, got {len(self.steps)}"
            )
        for i, step in enumerate(self.steps):
            bad = [d for d in step.depends_on if d >= i]
            if bad:
                raise InvalidArgumentError(
                    f"step {i} depends on step {bad[0]}: only earlier (0-based) steps allowed"
                )
            if self.pattern == "parallel" and step.depends_on:
                raise InvalidArgumentError(f"parallel plan, but step {i} has depends_on")


# ---------------------------------------------------------------------------- rule plan

_STOP = COMPARE_WORDS | wordset(
    "a an the of in on at to for from by with and or but is are was were be been "
    "being do does did has have had it its this that these those as into about "
    "between than then who whom whose what which when where why how please tell me "
    "show give find list"
)


def _norm_word(word: str) -> str:
    word = word.lower().replace("’", "'")
    return word[:-2] if word.endswith("'s") else word


def _keywords(query: str, drop: Sequence[str] = ()) -> list[str]:
    """Content words of ``query`` in order, minus stop words and the words of ``drop``."""
    dropped = {_norm_word(w) for phrase in drop for w in joined_words(phrase)}
    out: list[str] = []
    for word in joined_words(query):
        folded = _norm_word(word)
        if folded in _STOP or folded in dropped:
            continue
        dropped.add(folded)  # each word once
        out.append(word)
    return out


def _clip(query: str) -> str:
    if len(query) <= MAX_QUERY_CHARS:
        return query
    cut = query[:MAX_QUERY_CHARS]
    return cut.rsplit(" ", 1)[0] if " " in cut else cut


def _dedupe(items: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.strip().lower()
        if key and key not in seen:
            seen.add(key)
            out.append(item.strip())
    return out


def rule_plan(
    query: str, entities: Sequence[str] = (), query_type: QueryType | None = None
) -> Plan:
    """The deterministic plan: per-entity (COMPARE), per-year (TREND), else question + bridge.
    ``query_type``: the question's, when it was read already (else classified here)."""
    qtype = query_type or classify_query_type(query)
    names = _dedupe(entities)[:MAX_PLAN_STEPS]
    if qtype is QueryType.COMPARE and len(names) >= 2:
        rest = " ".join(_keywords(query, drop=names))
        steps = tuple(PlanStep(_clip(f"{n} {rest}".strip()), focus=n) for n in names)
        return Plan("parallel", steps, qtype)
    years = find_years(query)[:MAX_PLAN_STEPS]
    if qtype is QueryType.TREND and years:
        rest = " ".join(_keywords(query, drop=years))
        steps = tuple(PlanStep(_clip(f"{rest} {y}".strip()), focus=y) for y in years)
        return Plan("parallel", steps, qtype)
    question = _clip(query.strip())
    return Plan(
        "sequential",
        (
            PlanStep(question, focus="question"),
            PlanStep(question, "bridge", depends_on=(0,), action="bridge"),
        ),
        qtype,
    )


# ---------------------------------------------------------------------------- planner

_SYSTEM = (
    "You plan searches over a Wikipedia knowledge graph to answer one question. "
    "Reply with JSON only: "
    '{"pattern": "sequential" | "parallel" | "conditional", '
    '"steps": [{"query": "...", "focus": "...", "depends_on": [0], '
    '"action": "search" | "refine" | "synthesize"}]}. '
    f"Use 1 to {MAX_PLAN_STEPS} steps. Each query is a short search string (at most "
    f"{MAX_QUERY_CHARS} characters) that keeps the names from the question. depends_on "
    "lists the 0-based indices of earlier steps whose results the step needs (the first "
    "step is 0); use [] for none. In a dependent step's query, write {0} where what step 0 "
    "finds belongs (e.g. 'birthplace of {0}'). Parallel plans have no dependencies and run "
    "at once; in a conditional plan, the steps after the first run only while something "
    "is still missing. action: search (default); refine (search again for what is still "
    "missing); synthesize (last: the evidence is complete)."
)


class StepPlanner:
    """Plans with ``llm`` when given (one call, falls back on any failure), else by rule.

    ``meter`` records the planning call; it is skipped when it is the client's own
    meter, which records the call already.
    """

    def __init__(
        self,
        llm: LLMClient | None = None,
        model: str = PLANNER_MODEL,
        timeout: float = 15.0,
        *,
        meter: UsageMeter | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise InvalidArgumentError("model must be a non-empty string")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise InvalidArgumentError(f"timeout must be a positive number, got {timeout!r}")
        self.llm = llm
        self.model = model
        self.timeout = float(timeout)
        self.meter = meter

    def plan(
        self, query: str, entities: Sequence[str] = (), query_type: QueryType | None = None
    ) -> Plan:
        """A plan for ``query``; ``entities`` are the article titles it names, if known,
        ``query_type`` its type when the question was read already."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidArgumentError("query must be a non-empty string")
        if isinstance(entities, str):
            raise InvalidArgumentError("entities must be a sequence of names, not one string")
        fallback = rule_plan(query, entities, query_type)
        if self.llm is None:
            return fallback
        try:
            return self._llm_plan(self.llm, query, entities, fallback.query_type)
        except Exception as exc:  # never raise on the model's account
            if isinstance(exc, LLMError):
                why = f"{one_line(exc)}; {exc.located_at(self.llm).source}"
            elif isinstance(exc, InvalidArgumentError):
                why = f"invalid plan: {one_line(exc)}"
            else:
                why = f"{type(exc).__name__}: {one_line(exc)}"
            message = f"LLM planning failed, using the rule plan ({why})"
            log.warning("%s", message)
            return Plan(fallback.pattern, fallback.steps, fallback.query_type, "rule", (message,))

    def _llm_plan(
        self, llm: LLMClient, query: str, entities: Sequence[str], qtype: QueryType
    ) -> Plan:
        prompt = f"Question: {query.strip()}"
        names = _dedupe(entities)
        if names:
            prompt += "\nEntities named: " + "; ".join(names)
        # The client's own meter records the call already: do not count it twice.
        meter = self.meter if self.meter is not getattr(llm, "meter", None) else None
        reply = metered_complete(
            llm,
            meter,
            model=self.model,
            system=_SYSTEM,
            prompt=prompt,
            max_tokens=512,
            timeout=self.timeout,
        )
        return parse_plan(parse_json_reply(reply.text), qtype)


def parse_plan(data: Any, query_type: QueryType) -> Plan:
    """Validate a model's plan JSON into a :class:`Plan` (``source="llm"``).

    Raises :class:`InvalidArgumentError` naming the first problem.
    """
    if not isinstance(data, dict):
        raise InvalidArgumentError(f"plan must be a JSON object, got {type(data).__name__}")
    raw_pattern = data.get("pattern")
    pattern = raw_pattern.strip().lower() if isinstance(raw_pattern, str) else ""
    if pattern not in _PATTERNS:
        raise InvalidArgumentError(f"plan pattern must be one of {_PATTERNS}, got {raw_pattern!r}")
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list):
        raise InvalidArgumentError("plan has no steps list")
    steps: list[PlanStep] = []
    for i, raw in enumerate(raw_steps):
        if not isinstance(raw, dict):
            raise InvalidArgumentError(f"step {i} is not an object")
        query = raw.get("query")
        if not isinstance(query, str):
            raise InvalidArgumentError(f"step {i} has no query string")
        focus = raw.get("focus") or ""
        deps = raw.get("depends_on") or []
        if not isinstance(deps, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in deps
        ):
            raise InvalidArgumentError(f"step {i} depends_on is not a list of step indices")
        action = raw.get("action") or "search"
        if not isinstance(action, str) or action.strip().lower() not in _ACTIONS:
            raise InvalidArgumentError(f"step {i} action {action!r} is not one of {_ACTIONS}")
        action = action.strip().lower()
        if not query.strip() and action == "synthesize":
            query = "synthesize"  # a synthesize step searches nothing; its query is a label
        steps.append(
            PlanStep(query.strip(), focus, tuple(sorted(set(deps))), cast(StepAction, action))
        )
    return Plan(cast(PlanPattern, pattern), tuple(steps), query_type, "llm")

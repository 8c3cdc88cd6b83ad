"""Rule modules of the multi-step retrieval engine.

Each module does one job and touches no database (graph access comes in as
callables; what a question asks is read once, by :mod:`kg_agent.language`):
:mod:`.config` (settings), :mod:`.planner` (steps to run), :mod:`.gaps` (what the
evidence lacks), :mod:`.refine` (the next query), :mod:`.novelty` (near-duplicate
filter) and :mod:`.stop` (when to stop); :mod:`.retriever` runs them.
"""

from kg_agent.multistep.config import DEFAULT_CONFIG_PATH, MultiStepConfig, load_config
from kg_agent.multistep.gaps import (
    METRIC_SYNONYMS,
    NO_GAP,
    GapResult,
    GapType,
    detect_gap,
    query_metrics,
)
from kg_agent.multistep.novelty import jaccard, novelty_filter, word_set
from kg_agent.multistep.planner import (
    MAX_PLAN_STEPS,
    MAX_QUERY_CHARS,
    PLANNER_MODEL,
    Plan,
    PlanPattern,
    PlanSource,
    PlanStep,
    StepPlanner,
    parse_plan,
    rule_plan,
)
from kg_agent.multistep.refine import refine_query
from kg_agent.multistep.stop import StopCriteria, StopReason

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "MAX_PLAN_STEPS",
    "MAX_QUERY_CHARS",
    "METRIC_SYNONYMS",
    "NO_GAP",
    "PLANNER_MODEL",
    "GapResult",
    "GapType",
    "MultiStepConfig",
    "Plan",
    "PlanPattern",
    "PlanSource",
    "PlanStep",
    "StepPlanner",
    "StopCriteria",
    "StopReason",
    "detect_gap",
    "jaccard",
    "load_config",
    "novelty_filter",
    "parse_plan",
    "query_metrics",
    "refine_query",
    "rule_plan",
    "word_set",
]

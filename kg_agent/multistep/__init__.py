"""Rule modules of the multi-step retrieval engine.

Each module does one job and touches no database (graph access comes in as
callables): :mod:`.config` (settings), :mod:`.classifier` (single- or multi-step
routing), :mod:`.planner` (steps to run), :mod:`.gaps` (what the evidence lacks),
:mod:`.refine` (the next query), :mod:`.novelty` (near-duplicate filter) and
:mod:`.stop` (when to stop).
"""

from kg_agent.multistep.classifier import (
    DEFAULT_THRESHOLD,
    Complexity,
    ComplexityDecision,
    QueryComplexityClassifier,
)
from kg_agent.multistep.config import DEFAULT_CONFIG_PATH, MultiStepConfig, load_config
from kg_agent.multistep.gaps import (
    METRIC_SYNONYMS,
    NO_GAP,
    GapResult,
    GapType,
    detect_gap,
    fold,
    query_entities,
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
    QueryType,
    StepPlanner,
    classify_query_type,
    find_years,
    parse_plan,
    rule_plan,
)
from kg_agent.multistep.refine import refine_query
from kg_agent.multistep.stop import StopCriteria, StopReason

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "DEFAULT_THRESHOLD",
    "MAX_PLAN_STEPS",
    "MAX_QUERY_CHARS",
    "METRIC_SYNONYMS",
    "NO_GAP",
    "PLANNER_MODEL",
    "Complexity",
    "ComplexityDecision",
    "GapResult",
    "GapType",
    "MultiStepConfig",
    "Plan",
    "PlanPattern",
    "PlanSource",
    "PlanStep",
    "QueryComplexityClassifier",
    "QueryType",
    "StepPlanner",
    "StopCriteria",
    "StopReason",
    "classify_query_type",
    "detect_gap",
    "find_years",
    "fold",
    "jaccard",
    "load_config",
    "novelty_filter",
    "parse_plan",
    "query_entities",
    "query_metrics",
    "refine_query",
    "rule_plan",
    "word_set",
]

"""The bridge round: read round-1 evidence, find the entities that lead to the next hop.

Offline, bridge entities come from the graph: the articles the top round-1
sections' articles link to or mention, ranked by how similar their best
section is to the question. With Claude, an extraction prompt names them
(and what is missing), and a name that does not occur verbatim in the
evidence is dropped (:mod:`.bridge_llm`). Either way each entity becomes a
search ("entity + gap"), and what comes back is scored:

* a record whose article is a bridge entity linked from a round-1 top result
  shares that entity: ``+bridge_entity_boost``;
* a chunk that names a bridge entity *and* a claim token of the round-1 top
  evidence (a content word of its title) continues the chain:
  ``provenance="bridge_linked"``, ``+bridge_linked_boost``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kg_agent.llm.client import LLMClient, LLMError, UsageMeter
from kg_agent.multistep.bridge_llm import BRIDGE_MODEL, llm_bridge_entities
from kg_agent.multistep.budget import Budget
from kg_agent.multistep.config import MultiStepConfig
from kg_agent.multistep.gaps import fold
from kg_agent.retrieval.base import Evidence
from kg_agent.retrieval.quality import content_words

__all__ = ["BRIDGE_OFFSET", "BridgeOutcome", "bridge_round", "claim_tokens"]

#: Added to a bridge record's score (similarity + boosts). 0 ranks bridge records
#: below round 1's entity and neighbour tiers and above its plain hybrid hits.
BRIDGE_OFFSET = 0.0

log = logging.getLogger(__name__)


@dataclass(slots=True)
class BridgeOutcome:
    evidence: list[Evidence] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    dropped_entities: list[str] = field(default_factory=list)
    source: str = "offline"
    triggered: bool = False
    gate_reason: str = ""
    antecedents: dict[str, str] = field(default_factory=dict)  # section id → round-1 title

    def stats(self) -> dict[str, Any]:
        return {
            "triggered": self.triggered,
            "gate": self.gate_reason,
            "source": self.source,
            "entities_extracted": len(self.entities),
            "entities": list(self.entities),
            "dropped_entities": list(self.dropped_entities),
            "queries_generated": len(self.queries),
            "queries": list(self.queries),
            "docs_added": len(self.evidence),
        }


def claim_tokens(evidence: Sequence[Evidence]) -> set[str]:
    """Content words of the round-1 top articles' titles: what a chained passage names."""
    out: set[str] = set()
    for e in evidence:
        out |= {fold(w) for w in content_words(e.title.split(" (")[0]) if len(w) > 2}
    return out


def _leads(entities: Sequence[str], top: Sequence[Evidence]) -> dict[str, str]:
    """Each bridge entity's antecedent: the best round-1 article whose text names it (a
    link is written in the text that holds it), else the best round-1 article."""
    texts = [(e.title, fold(f"{e.title} {e.content}")) for e in top]
    out: dict[str, str] = {}
    for entity in entities:
        name = fold(entity.split(" (")[0])
        out[entity] = next(
            (t for t, text in texts if name and name in text and t != entity), top[0].title
        )
    return out


def bridge_round(
    question: str,
    round1: Sequence[Evidence],
    *,
    config: MultiStepConfig,
    quality: float,
    neighbours: Callable[[Sequence[str]], list[str]],
    score_titles: Callable[[Sequence[str]], dict[str, Evidence]],
    search: Callable[[str, int], list[Evidence]],
    resolve: Callable[[str], list[str]],
    exclude: set[str],
    gap_terms: Sequence[str] = (),
    llm: LLMClient | None = None,
    model: str = BRIDGE_MODEL,
    meter: UsageMeter | None = None,
    timeout: float = 15.0,
    warnings: list[str] | None = None,
    budget: Budget | None = None,
) -> BridgeOutcome:
    """Run the gated bridge round; never raises (a failure is a warning, round 1 stands).

    ``neighbours`` maps titles to their graph neighbours, ``score_titles`` gives
    each title's best section for the question, ``search`` runs a bridge query,
    ``resolve`` maps an extracted name to article titles, ``exclude`` holds the
    titles already collected. ``budget``: the query's budgets, asked before the model
    call (refused: the graph's neighbours, as offline).
    """
    out = BridgeOutcome()
    if config.bridge_max_queries == 0 or not round1:
        out.gate_reason = "off" if config.bridge_max_queries == 0 else "no round-1 evidence"
        return out
    if quality >= config.bridge_quality_gate:
        out.gate_reason = f"round-1 quality {quality:.2f} >= gate {config.bridge_quality_gate}"
        return out
    out.triggered = True
    out.gate_reason = f"round-1 quality {quality:.2f} < gate {config.bridge_quality_gate}"
    top = list(round1[: config.bridge_top_evidence])
    top_titles = list(dict.fromkeys(e.title for e in top))
    try:
        entities: list[str] = []
        if llm is not None and (budget is None or budget.allows("bridge extraction")):
            try:
                ext = llm_bridge_entities(
                    question,
                    top,
                    llm,
                    model=model,
                    meter=meter,
                    timeout=timeout if budget is None else budget.timeout(timeout),
                )
                out.source, out.gaps = "claude", list(ext.gaps)
                out.dropped_entities = list(ext.dropped)
                for name in ext.entities:
                    entities += [t for t in resolve(name) if t not in entities]
            except LLMError as exc:
                reason = exc.located_at(llm).brief
                msg = f"bridge extraction failed ({reason}): using graph neighbours"
                log.warning(msg)
                if warnings is not None:
                    warnings.append(msg)
        entities = [t for t in entities if t not in exclude]
        if not entities:
            out.source = "offline"
            candidates = [t for t in neighbours(top_titles) if t not in exclude]
            scored = score_titles(candidates)
            entities = sorted(scored, key=lambda t: -scored[t].similarity)
        entities = [t for t in entities if t not in exclude][: config.bridge_max_queries]
        out.entities = entities
        led_by = _leads(entities, top)
        gap = " ".join(list(out.gaps)[:1] or list(gap_terms)[:3])
        tokens = claim_tokens(top)
        seen = {e.section_id for e in round1}
        ent_folded = {t: fold(t.split(" (")[0]) for t in entities}
        for entity in entities:
            query = f"{entity} {gap}".strip() if gap else entity
            out.queries.append(query)
            for ev in search(query, config.top_k_each_step):
                if ev.section_id in seen:
                    continue
                seen.add(ev.section_id)
                text = fold(f"{ev.title} {ev.content}")
                boost, provenance = 0.0, "bridge"
                if ev.title in ent_folded:
                    boost += config.bridge_entity_boost
                names_entity = any(f and f in text for f in ent_folded.values())
                if names_entity and any(tok in text for tok in tokens):
                    boost += config.bridge_linked_boost
                    provenance = "bridge_linked"
                    out.antecedents[ev.section_id] = led_by[entity]
                out.evidence.append(
                    dataclasses.replace(
                        ev,
                        score=BRIDGE_OFFSET + ev.similarity + boost,
                        source=provenance,
                        scores={**ev.scores, "bridge_boost": boost},
                        reached_from=out.antecedents.get(ev.section_id),
                    )
                )
    except Exception as exc:  # the bridge round must never break a query
        msg = f"bridge round failed ({type(exc).__name__}: {exc}); keeping round-1 evidence"
        log.warning(msg)
        if warnings is not None:
            warnings.append(msg)
        out.evidence = []
    return out

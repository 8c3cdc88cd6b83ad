"""The evidence path of an answer as a small graph, for the web page to draw.

Nodes: the question; each article the evidence came from, by how it was found
(``entity``: named in the question; ``neighbour``: linked to one; ``bridge``: reached
through first-round evidence; ``search``: found by text or vector search); each cited
section, with its ``[n]``. Edges: question → the articles it names (or found by
search), the graph's own ``LINKS_TO`` between evidence articles (read from the store,
not guessed), and article → its cited sections.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kg_agent.store.reader import GraphReader

__all__ = ["evidence_path"]

_KIND_OF_SOURCE = {
    "entity": "entity",
    "graph": "neighbour",
    "bridge_linked": "bridge",
    "bridge": "bridge",
}
_RANK = {"entity": 3, "neighbour": 2, "bridge": 1, "search": 0}
#: Link rows read around the evidence articles (a guard for hub articles).
_LINK_ROWS = 400


def evidence_path(store: GraphReader, result: Mapping[str, Any]) -> dict[str, Any]:
    """``{"nodes": [...], "edges": [...]}`` for a ``QueryResult.to_dict()``."""
    evidence: Sequence[Mapping[str, Any]] = result.get("evidence") or []
    cited = {c["section_id"]: c["n"] for c in result.get("citations") or []}
    kinds: dict[str, str] = {}
    for ev in evidence:
        title = str(ev["title"])
        kind = _KIND_OF_SOURCE.get(str(ev.get("source", "")), "search")
        prev = kinds.get(title)
        if prev is None or _RANK[kind] > _RANK[prev]:
            kinds[title] = kind
    nodes: list[dict[str, Any]] = [
        {"id": "q", "label": str(result.get("question", "")), "kind": "question"}
    ]
    edges: list[dict[str, Any]] = []
    for title, kind in kinds.items():
        nodes.append({"id": f"a:{title}", "label": title, "kind": kind})
    linked: set[str] = set()
    titles = list(kinds)
    if len(titles) > 1:
        rows = store.link_neighbourhood(titles, limit=_LINK_ROWS)
        seen: set[tuple[str, str]] = set()
        for a, b, count in rows:
            if a in kinds and b in kinds and a != b:
                key = (min(a, b), max(a, b))
                if key in seen:
                    continue
                seen.add(key)
                # drawn from the article closer to the question
                src, dst = (a, b) if _RANK[kinds[a]] >= _RANK[kinds[b]] else (b, a)
                edges.append(
                    {
                        "source": f"a:{src}",
                        "target": f"a:{dst}",
                        "kind": "link",
                        "count": int(count),
                    }
                )
                linked.add(dst)
    for title, kind in kinds.items():
        if kind == "entity" or title not in linked:
            edges.append(
                {
                    "source": "q",
                    "target": f"a:{title}",
                    "kind": "names" if kind == "entity" else "found",
                }
            )
    for ev in evidence:
        sid = str(ev.get("section_id", ""))
        n = cited.get(sid)
        if n is None:
            continue
        heading = str(ev.get("heading_path") or "lead")
        nodes.append(
            {
                "id": f"s:{sid}",
                "label": f"[{n}] {heading}",
                "kind": "section",
                "n": n,
                "title": str(ev["title"]),
            }
        )
        edges.append({"source": f"a:{ev['title']}", "target": f"s:{sid}", "kind": "section"})
    return {"nodes": nodes, "edges": edges}

"""``kg-agent ask`` and ``kg-agent cypher``: questions of a graph."""

from __future__ import annotations

import json
from typing import Any

import click
import yaml

from kg_agent.cli.common import (
    db_option,
    echo_json,
    library_errors,
)
from kg_agent.cli.llm_options import llm_options
from kg_agent.exceptions import InvalidArgumentError


@click.command()
@click.argument("question")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
@click.option(
    "--evidence", "show_evidence", is_flag=True, help="Show the ranked evidence with its scores."
)
@click.option(
    "--top-k",
    type=click.IntRange(1, 50),
    default=8,
    show_default=True,
    help="Evidence sections given to synthesis.",
)
@click.option(
    "--answer-words",
    type=click.IntRange(10, 500),
    default=40,
    show_default=True,
    help="Words the offline answer may quote (its first sentence is always whole).",
)
@click.option(
    "--multi-query",
    is_flag=True,
    help="Also search 2 rephrasings (written by the fast model when a model server is "
    "configured: the question is then sent to it).",
)
@click.option(
    "--no-enhancements",
    is_flag=True,
    help="Switch off reranker, multi-document synthesis and few-shot together.",
)
@click.option("--no-reranker", is_flag=True, help="Keep the retrieval order (no graph rerank).")
@click.option("--no-multidoc", is_flag=True, help="Do not group evidence by article.")
@click.option("--no-fewshot", is_flag=True, help="No few-shot examples in the Claude prompt.")
@llm_options()
@click.option(
    "--few-shot",
    "few_shot_path",
    type=click.Path(exists=True, dir_okay=False),
    help="JSONL file of few-shot examples.",
)
@click.option(
    "--cypher-packs",
    "cypher_pack_path",
    type=click.Path(exists=True),
    help="Folder or YAML file of Cypher packs.",
)
@click.option(
    "--retrieval",
    type=click.Choice(["graph", "hybrid", "dense", "bm25", "multistep"]),
    default="graph",
    show_default=True,
    help="How evidence is found: graph (question entities, then their neighbours, "
    "then hybrid), hybrid (dense + BM25), dense, bm25, or multistep (plan, gaps, "
    "refinement, bridge round).",
)
@click.option(
    "--multistep",
    is_flag=True,
    help="Shorthand for --retrieval multistep.",
)
@click.option(
    "--route",
    type=click.Choice(["auto", "simple", "complex"]),
    default="auto",
    show_default=True,
    help="With --multistep: force single-shot (simple) or multi-step (complex) routing.",
)
@click.option(
    "--multistep-config",
    type=click.Path(exists=True, dir_okay=False),
    help="YAML settings for the multi-step engine (see configs/run_multistep.yaml).",
)
@click.option(
    "--set",
    "multistep_set",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override one multi-step setting, e.g. --set max_steps=2 (repeatable).",
)
@click.option(
    "--trace",
    "show_trace",
    is_flag=True,
    help="Print each retrieval stage and multi-step step (query, gap, gate, stop reason).",
)
@library_errors
def ask(
    question: str,
    db_path: str,
    as_json: bool,
    show_evidence: bool,
    top_k: int,
    answer_words: int,
    multi_query: bool,
    no_enhancements: bool,
    no_reranker: bool,
    no_multidoc: bool,
    no_fewshot: bool,
    llm_api: str,
    synthesis_model: str | None,
    fast_model: str | None,
    api_key: str | None,
    llm_base_url: str | None,
    llm_cache: str | None,
    few_shot_path: str | None,
    cypher_pack_path: str | None,
    retrieval: str,
    multistep: bool,
    route: str,
    multistep_config: str | None,
    multistep_set: tuple[str, ...],
    show_trace: bool,
) -> None:
    """Answer QUESTION from the graph at --db, citing numbered sources."""
    from kg_agent.agent import KnowledgeGraphAgent
    from kg_agent.language.question import check_question
    from kg_agent.multistep.config import load_config

    overrides: dict[str, Any] = {}
    for item in multistep_set:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidArgumentError(f"--set {item!r}: expected KEY=VALUE")
        overrides[key.strip()] = yaml.safe_load(value)
    settings = load_config(multistep_config, **overrides)

    check_question(question)  # before loading anything: an empty question fails fast
    with KnowledgeGraphAgent(
        db_path,
        anthropic_api_key=api_key,
        use_enhancements=not no_enhancements,
        few_shot_path=few_shot_path,
        enable_reranker=not no_reranker,
        enable_multidoc=not no_multidoc,
        enable_fewshot=not no_fewshot,
        synthesis_model=synthesis_model,
        cypher_pack_path=cypher_pack_path,
        enable_multi_query=multi_query,
        top_k=top_k,
        retrieval=retrieval,
        multistep_config=settings,
        llm_base_url=llm_base_url,
        answer_words=answer_words,
        llm_api=llm_api,
        fast_model=fast_model,
        llm_cache=llm_cache,
    ) as agent:
        result = agent.query(
            question,
            multistep=True if multistep or route != "auto" else None,
            route=None if route == "auto" else route,
        )
    if as_json:
        echo_json(result.to_dict())
        return
    if result.short_answer and not result.answer.startswith(result.short_answer):
        # shown only when sure enough (docs/answers.md); the sentences follow either way
        click.echo(f"Short answer: {result.short_answer}  (confidence {result.confidence:.2f})\n")
    click.echo(result.answer)
    if result.citations:
        click.echo("\nSources:")
        for c in result.citations:
            where = f" — {c.heading_path}" if c.heading_path else ""
            click.echo(f"  [{c.n}] {c.title}{where}")
    if show_evidence:
        from kg_agent.retrieval.base import TIER_NAMES, evidence_tier

        # Graph retrieval ranks in tiers (named in the question, one link away, found
        # by text search) and by score within a tier: a score is comparable only to
        # the scores of its own tier, so the tier is printed beside it.
        click.echo(
            "\nEvidence, numbered as cited (the cited first, then the rest as ranked; tier: "
            "an infobox fact > named in the question > linked to those > found by search; a "
            "score ranks "
            "within its tier):"
        )
        for i, ev in enumerate(result.evidence, 1):
            parts = ", ".join(f"{k} {v:.3f}" for k, v in ev.scores.items())
            where = f" — {ev.heading_path}" if ev.heading_path else ""
            tier = TIER_NAMES.get(evidence_tier(ev), "search")
            click.echo(f"  {i}. [{tier}] score {ev.score:.3f}  {ev.title}{where}  ({parts})")
    if show_trace:
        click.echo("\nTrace:")
        for stage in result.trace:
            click.echo("  " + json.dumps(stage, ensure_ascii=False, default=str))
        if result.multistep is not None:
            ms = result.multistep
            click.echo(
                f"  multistep: route {ms['route']}, stop {ms['stop_reason']}, "
                f"{len(ms['steps'])} step(s)"
            )
            for st in ms["steps"]:
                gap = st["gap"].get("gap_type", "-") if st["gap"] else "-"
                click.echo(
                    f"    {st['step']}. [{st['kind']}] {st['query'][:90]!r}"
                    f" new {st['new_evidence']}"
                    f" gap {gap} stop {st['stop_reason']} {1000 * st['seconds']:.0f} ms"
                    + (f" gate: {st['gate']}" if st["gate"] else "")
                )
    for w in result.warnings:
        click.echo(f"warning: {w}", err=True)
    click.echo(
        f"\n({result.path}: {result.mode}, {result.timings.get('total', 0) * 1000:.0f} ms)",
        err=True,
    )


@click.command()
@click.argument("name", required=False)
@click.option(
    "--db",
    "db_path",
    envvar="KG_AGENT_DB",
    type=click.Path(dir_okay=True, file_okay=True, path_type=str),
    help="Path of the Kùzu database (env: KG_AGENT_DB); not needed with --list.",
)
@click.option(
    "--param",
    "-p",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    help="A query parameter (repeatable); values are typed by the pack.",
)
@click.option(
    "--cypher-packs",
    "cypher_pack_path",
    type=click.Path(exists=True),
    help="Folder or YAML file of Cypher packs (default: the bundled packs).",
)
@click.option("--list", "list_queries", is_flag=True, help="List the pack queries and exit.")
@library_errors
def cypher(
    name: str | None,
    db_path: str | None,
    params: tuple[str, ...],
    cypher_pack_path: str | None,
    list_queries: bool,
) -> None:
    """Run the named read-only query NAME of a Cypher pack; rows print as JSON lines.

    Values are passed to Kùzu as parameters, never pasted into the query.
    """
    from kg_agent.cypher_packs import CypherPackError, default_pack_dir, load_packs, run_query
    from kg_agent.store import GraphStore

    packs = load_packs(cypher_pack_path or default_pack_dir())
    if list_queries or name is None:
        for pack in packs.values():
            for q in pack:
                args = " ".join(f"{p.name}:{p.type}" for p in q.params)
                click.echo(f"{q.name}  {args}  — {q.description}")
        return
    values: dict[str, str] = {}
    for item in params:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CypherPackError(f"--param {item!r} is not KEY=VALUE")
        values[key] = value
    chosen = next((p for p in packs.values() if name in p), None)
    if chosen is None:
        raise CypherPackError(f"no pack query named {name!r} (see --list)")
    if not db_path:
        raise InvalidArgumentError("--db PATH (or KG_AGENT_DB) is needed to run a query")
    with GraphStore.open(db_path, read_only=True) as store:
        rows = run_query(store, chosen, name, **values)
    for row in rows:
        click.echo(json.dumps(row, ensure_ascii=False, default=str))

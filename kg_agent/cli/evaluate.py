"""``kg-agent eval``: retrieval modes and answers scored on multi-hop QA sets."""

from __future__ import annotations

import sys
from typing import Any

import click

from kg_agent.cli.common import (
    library_errors,
)
from kg_agent.cli.llm_options import llm_config, llm_options
from kg_agent.evaluation.llm_setup import LLMSetup


@click.command("eval")
@click.argument("datasets", nargs=-1, required=True, metavar="DATASET...")
@click.option(
    "--db",
    "db_path",
    type=click.Path(path_type=str),
    help="Graph of the dataset (built from its corpus when missing, reused otherwise); "
    "with several datasets, the folder of their <dataset>.kuzu "
    "(default: $KG_AGENT_CACHE_DIR/eval, i.e. ~/.cache/kg-agent/eval).",
)
@click.option(
    "--corpus",
    type=click.Path(path_type=str),
    help="Passage corpus to build the graph from (one dataset only; default: the dataset's own).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=str),
    help="Folder holding multihop/ (default: $KG_AGENT_DATA_DIR or ../shared/data).",
)
@click.option(
    "--modes",
    default="default",
    show_default=True,
    help="Comma-separated retrieval modes, or 'all' / 'default'.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=str),
    default="eval_out",
    show_default=True,
    help="Folder for eval.json, eval.md and recall_at_5.png.",
)
@click.option(
    "--show-failures",
    type=click.IntRange(min=0),
    default=0,
    help="After the table, the N worst questions of each mode (gold vs top-5 titles).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the JSON document, not the table.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option(
    "--model",
    help="Embedding model, as for load (default: the bundled all-MiniLM-L6-v2).",
)
@llm_options(model_flags=("--llm-model",))
@library_errors
def eval_command(
    datasets: tuple[str, ...],
    db_path: str | None,
    corpus: str | None,
    data_dir: str | None,
    modes: str,
    limit: int | None,
    out_dir: str,
    show_failures: int,
    as_json: bool,
    quiet: bool,
    model: str | None,
    **llm_settings: Any,
) -> None:
    """Score retrieval modes on multi-hop QA sets: Recall@2/5, answer in evidence, latency.

    DATASET is 2wiki, hotpotqa or musique (under --data-dir) or a questions file;
    give several to run them in turn. The table compares the modes with the
    published numbers on the same pool; eval.json keeps every question's ranking.

    Every mode runs offline unless a model server is configured (--api-key or a key in
    the environment, or --llm-base-url with --llm-api openai); --llm-cache then keeps
    its replies, so a rerun costs no tokens.
    """
    import shlex

    from kg_agent.evaluation.report import format_failures, format_table
    from kg_agent.evaluation.run_all import evaluate

    command = (
        "kg-agent "
        + " ".join(
            "***" if i and sys.argv[i] == "--api-key" else shlex.quote(a)  # never a key
            for i, a in enumerate(sys.argv[1:], start=1)
            if not (i > 1 and sys.argv[i - 1] == "--api-key")
        )
    )
    llm = LLMSetup.configured(llm_config(llm_settings), llm_settings["api_key"])
    try:
        ev = evaluate(
            datasets,
            command=command,
            db=db_path,
            out_dir=out_dir,
            modes=modes,
            limit=limit,
            corpus=corpus,
            data_dir=data_dir,
            model=model,
            progress=not quiet,
            llm=llm,
        )
    finally:
        if llm is not None:
            llm.close()
    failures = [
        format_failures(run, mode, show_failures) for run in ev.runs for mode in run.summaries
    ]
    if as_json:  # stdout is the document alone; the rest goes to stderr
        click.echo(ev.json.read_text(encoding="utf-8"), nl=False)
        for block in failures if show_failures else []:
            click.echo(f"\n{block}", err=True)
        return
    click.echo(format_table(ev.runs))
    for block in failures if show_failures else []:
        click.echo(f"\n{block}")
    click.echo("\nWrote " + ", ".join(str(p) for p in ev.written) + f"  ({ev.seconds:.0f} s)")

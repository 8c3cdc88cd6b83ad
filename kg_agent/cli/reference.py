"""``docs/cli.md``, written from the click definitions themselves, so it cannot drift.

``scripts/make_cli_docs.py`` writes it; a test fails when the file and the commands
disagree. Each command gets its usage line, its whole help text and a table of its
options as ``--help`` prints them (with defaults and choices).
"""

from __future__ import annotations

import inspect

import click

__all__ = ["markdown"]

_HEAD = """# Command-line reference

Generated from the `kg-agent` commands' own definitions by `scripts/make_cli_docs.py`
(a test fails when this file and the commands disagree): what `kg-agent COMMAND --help`
prints, for every command. The README has the short tour; errors are one line and a
non-zero exit status, and every command that reports takes `--json`.
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown(group: click.Group, name: str = "kg-agent") -> str:
    """The reference of every command of ``group``, in its registration order."""
    out = [_HEAD]
    root = click.Context(group, info_name=name)
    out.append("| command | what it does |\n|---|---|")
    for cmd_name, cmd in group.commands.items():
        short = cmd.get_short_help_str(limit=200)
        out.append(f"| [`{name} {cmd_name}`](#{name}-{cmd_name}) | {_cell(short)} |")
    for cmd_name, cmd in group.commands.items():
        ctx = click.Context(cmd, info_name=cmd_name, parent=root)
        usage = " ".join(cmd.collect_usage_pieces(ctx))
        out.append(f"\n## {name} {cmd_name}\n")
        out.append(f"```\n{name} {cmd_name} {usage}\n```\n")
        out.append(inspect.cleandoc(cmd.help or "").replace("\b\n", "") + "\n")
        rows = []
        for param in cmd.params:  # the help option is every command's: left out
            record = param.get_help_record(ctx)
            if record is None or not isinstance(param, click.Option):
                continue
            opts, help_text = record
            rows.append(f"| `{_cell(opts)}` | {_cell(help_text)} |")
        if rows:
            out.append("| option | meaning |\n|---|---|\n" + "\n".join(rows))
    return "\n".join(out).rstrip() + "\n"

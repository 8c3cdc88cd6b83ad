"""Every CLI command is in the README's table, and docs/cli.md is the commands' own
reference (generated from their click definitions: it fails when they drift apart)."""

from __future__ import annotations

from pathlib import Path

import click
from click.testing import CliRunner

from kg_agent.cli import main
from kg_agent.cli.reference import markdown

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CLI_DOCS = ROOT / "docs" / "cli.md"


def test_every_command_is_in_the_readme() -> None:
    assert isinstance(main, click.Group)
    for name in main.commands:
        assert f"kg-agent {name}" in README, f"README does not document 'kg-agent {name}'"


def test_docs_cli_md_is_generated_from_the_commands() -> None:
    assert CLI_DOCS.read_text(encoding="utf-8") == markdown(main), (
        "docs/cli.md is out of date: run 'python scripts/make_cli_docs.py'"
    )


def test_every_option_is_in_the_reference() -> None:
    reference = CLI_DOCS.read_text(encoding="utf-8")
    for name, cmd in main.commands.items():
        assert f"## kg-agent {name}\n" in reference, name
        section = reference.split(f"## kg-agent {name}\n", 1)[1].split("\n## ", 1)[0]
        for param in cmd.params:
            if isinstance(param, click.Option):
                longest = max(param.opts, key=len)
                assert f"`{longest}" in section or f" {longest}" in section, (name, longest)


def test_every_command_has_help() -> None:
    runner = CliRunner()
    for name, cmd in main.commands.items():
        assert cmd.help, f"{name} has no docstring"
        result = runner.invoke(main, [name, "--help"])
        assert result.exit_code == 0, result.output


def test_sample_command_prints_an_existing_dump() -> None:
    result = CliRunner().invoke(main, ["sample"])
    assert result.exit_code == 0
    assert Path(result.output.strip()).is_file()

"""Every CLI command and option is documented in the README; this fails otherwise."""

from __future__ import annotations

from pathlib import Path

import click
from click.testing import CliRunner

from kg_agent.cli import main

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_every_command_is_in_the_readme() -> None:
    assert isinstance(main, click.Group)
    for name in main.commands:
        assert f"kg-agent {name}" in README, f"README does not document 'kg-agent {name}'"


def test_every_option_is_in_the_readme() -> None:
    for name, cmd in main.commands.items():
        for param in cmd.params:
            if isinstance(param, click.Option) and param.name != "help":
                longest = max(param.opts, key=len)
                assert longest in README, f"README does not document {name} {longest}"


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

"""The graph engine a process drives (``store/engine.py``): Kùzu by default, its fork
by ``KG_AGENT_ENGINE``; a wrong or missing one is refused with one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.store import engine as eng


def test_kuzu_is_the_default_and_an_unknown_engine_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(eng.ENGINE_ENV, raising=False)
    assert eng.engine_name() == "kuzu"
    monkeypatch.setenv(eng.ENGINE_ENV, "neo4j")
    with pytest.raises(InvalidArgumentError, match=r"names no engine.*kuzu, real_ladybug"):
        eng.engine_name()


def test_an_engine_not_installed_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(eng.ENGINES, "absent", ("no_such_engine_module", "pip install absent"))
    monkeypatch.setenv(eng.ENGINE_ENV, "absent")
    with pytest.raises(InvalidArgumentError) as err:
        eng.engine()
    assert "pip install absent" in str(err.value) and "\n" not in str(err.value)


def test_the_cli_exits_with_one_line_for_a_wrong_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from kg_agent.cli import main

    db = tmp_path / "g.kuzu"
    db.write_bytes(b"a graph of some engine")
    monkeypatch.setenv(eng.ENGINE_ENV, "neo4j")
    result = CliRunner().invoke(main, ["stats", "--db", str(db)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: KG_AGENT_ENGINE='neo4j' names no engine kg-agent knows: one of kuzu, real_ladybug"
    ]

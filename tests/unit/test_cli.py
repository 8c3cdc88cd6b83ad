"""The CLI's process settings (the commands themselves run in tests/e2e)."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from kg_agent import cli
from kg_agent.cli import common as _cli_common

VAR = "TOKENIZERS_PARALLELISM"


def test_a_command_that_embeds_sets_the_tokenizers_threads_then_puts_them_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_cli_common, "_TOKENIZER_THREADS_CHOSEN", False)
    monkeypatch.setenv(VAR, "false")  # what main() sets for every command
    with _cli_common.tokenizer_threads("true"):
        assert os.environ[VAR] == "true"
    assert os.environ[VAR] == "false"
    with _cli_common.tokenizer_threads(None):  # Ray: each actor decides by its device
        assert VAR not in os.environ
    assert os.environ[VAR] == "false"
    monkeypatch.delenv(VAR)
    with _cli_common.tokenizer_threads("true"):
        assert os.environ[VAR] == "true"
    assert VAR not in os.environ


def test_a_users_choice_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, "false")
    monkeypatch.setattr(_cli_common, "_TOKENIZER_THREADS_CHOSEN", True)
    for value in ("true", None):
        with _cli_common.tokenizer_threads(value):
            assert os.environ[VAR] == "false"


def test_main_records_whether_the_user_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cli_common, "_TOKENIZER_THREADS_CHOSEN", False)
    monkeypatch.setenv(VAR, "true")
    assert CliRunner().invoke(cli.main, ["stats", "--help"]).exit_code == 0
    assert _cli_common._TOKENIZER_THREADS_CHOSEN is True
    monkeypatch.delenv(VAR)
    assert CliRunner().invoke(cli.main, ["stats", "--help"]).exit_code == 0
    assert _cli_common._TOKENIZER_THREADS_CHOSEN is False
    assert os.environ[VAR] == "false"

"""The response cache: a repeated request is answered from the file, anything that
changes the reply misses, and what is not a whole reply is never kept."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.llm import (
    AnthropicClient,
    CachedClient,
    LLMError,
    OpenAIClient,
    UsageMeter,
    client_from_settings,
)
from tests.support.fake_anthropic import DEFAULT_KEY, FakeAnthropic, TextReply, overloaded, text


def _ask(c: CachedClient, **kw: object) -> str:
    args: dict[str, object] = {"model": "m-1", "system": "S", "prompt": "P", "max_tokens": 50}
    args.update(kw)
    return c.complete(**args).text  # type: ignore[arg-type]


def test_a_repeated_request_is_answered_from_the_file(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    meter = UsageMeter()
    path = tmp_path / "llm.sqlite"
    inner = AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url, meter=meter)
    with CachedClient(inner, path) as c:
        fake_anthropic.enqueue(text("first", input_tokens=10, output_tokens=2))
        assert _ask(c) == "first"
        again = c.complete(model="m-1", system="S", prompt="P", max_tokens=50)
        assert again.text == "first" and again.cached
        assert (again.input_tokens, again.output_tokens) == (0, 0)
    assert len(fake_anthropic.message_requests) == 1
    snap = meter.as_dict()
    assert (snap["calls"], snap["cached"], snap["input_tokens"]) == (1, 1, 10)
    # another process, the same file: still a hit
    reopened = AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url)
    with CachedClient(reopened, path) as c:
        assert _ask(c) == "first"
    assert len(fake_anthropic.message_requests) == 1


@pytest.mark.parametrize(
    "change",
    [{"model": "m-2"}, {"system": "S2"}, {"prompt": "P2"}, {"max_tokens": 51}],
    ids=["model", "system", "prompt", "max_tokens"],
)
def test_any_change_to_the_request_misses(
    fake_anthropic: FakeAnthropic, tmp_path: Path, change: dict[str, object]
) -> None:
    inner = AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url)
    with CachedClient(inner, tmp_path / "c.sqlite") as c:
        fake_anthropic.enqueue("one", "two")
        assert _ask(c) == "one"
        assert _ask(c, **change) == "two"
    assert len(fake_anthropic.message_requests) == 2


def test_the_api_and_server_are_part_of_the_key(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    path = tmp_path / "c.sqlite"
    fake_anthropic.enqueue("from anthropic", "from openai")
    with CachedClient(AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url), path) as c:
        assert _ask(c) == "from anthropic"
    with CachedClient(
        OpenAIClient(DEFAULT_KEY, base_url=fake_anthropic.openai_base_url), path
    ) as c:
        assert _ask(c) == "from openai"


def test_cut_off_replies_and_failures_are_not_kept(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    inner = AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url)
    with CachedClient(inner, tmp_path / "c.sqlite") as c:
        fake_anthropic.enqueue(TextReply("half", stop_reason="max_tokens"), "whole")
        assert c.complete(model="m", system="", prompt="P").cut_off
        assert not c.complete(model="m", system="", prompt="P").cut_off
        assert c.complete(model="m", system="", prompt="P").text == "whole"
        fake_anthropic.enqueue(overloaded(), overloaded(), "after the failure")
        with pytest.raises(LLMError):
            c.complete(model="m", system="", prompt="Q")
        assert c.complete(model="m", system="", prompt="Q").text == "after the failure"
    assert len(fake_anthropic.message_requests) == 5  # 2 + 2 (failure and its retry) + 1


def test_a_streamed_hit_hands_the_text_over_whole(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    inner = OpenAIClient(DEFAULT_KEY, base_url=fake_anthropic.openai_base_url)
    words = "Ada Lovelace wrote the first published program [1]."
    with CachedClient(inner, tmp_path / "c.sqlite") as c:
        fake_anthropic.enqueue(words)
        first: list[str] = []
        c.stream(model="m", system="", prompt="P", on_text=first.append)
        second: list[str] = []
        reply = c.stream(model="m", system="", prompt="P", on_text=second.append)
    assert len(first) > 1 and "".join(first) == words
    assert second == [words] and reply.cached


def test_threads_share_one_cache(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    inner = AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url)
    with CachedClient(inner, tmp_path / "c.sqlite") as c:
        for i in range(4):
            fake_anthropic.enqueue(f"reply {i}")
        replies: list[str] = []
        threads = [
            threading.Thread(target=lambda i=i: replies.append(_ask(c, prompt=f"P{i}")))
            for i in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(replies) == [f"reply {i}" for i in range(4)]
        assert sorted(_ask(c, prompt=f"P{i}") for i in range(4)) == sorted(replies)
    assert len(fake_anthropic.message_requests) == 4


def test_client_from_settings_wraps_in_the_cache(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    c = client_from_settings(
        DEFAULT_KEY, fake_anthropic.base_url, cache=tmp_path / "sub" / "llm.sqlite"
    )
    assert isinstance(c, CachedClient) and isinstance(c.inner, AnthropicClient)
    c.close()
    assert (tmp_path / "sub" / "llm.sqlite").is_file()
    assert client_from_settings(None, cache=tmp_path / "x.sqlite") is None  # offline


def test_a_folder_is_refused(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    inner = AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url)
    with pytest.raises(InvalidArgumentError, match="is a folder"):
        CachedClient(inner, tmp_path)

"""The OpenAI path, end to end: the real ``openai`` SDK against the fake server's
chat-completions route. Nothing in the SDK is patched; each failure is scripted on the
wire and must come out as the same ``LLMError.kind`` the Anthropic path gives."""

from __future__ import annotations

import socket
import time

import openai  # noqa: F401  # imported up front, so timing asserts time calls only
import pytest

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.llm import LLMClient, LLMError, LLMReply, OpenAIClient, UsageMeter
from kg_agent.llm import client_from_settings as make_client
from tests.support.fake_anthropic import (
    DEFAULT_KEY,
    FakeAnthropic,
    TextReply,
    delay,
    error,
    fake_anthropic_server,
    overloaded,
    rate_limited,
    raw,
    server_error,
    text,
)

MODEL = "llama3.1:8b"


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def client(fake_anthropic: FakeAnthropic) -> OpenAIClient:
    return OpenAIClient(DEFAULT_KEY, base_url=fake_anthropic.openai_base_url, timeout=5.0)


def _call(client: OpenAIClient, **kw: object) -> LLMReply:
    args: dict[str, object] = {"model": MODEL, "system": "You answer.", "prompt": "Q?"}
    args.update(kw)
    return client.complete(**args)  # type: ignore[arg-type]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_success_sends_system_turn_prompt_and_key(
    client: OpenAIClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(text("Paris [1]", input_tokens=40, output_tokens=3))
    reply = _call(client, max_tokens=77)
    client.close()
    assert (reply.text, reply.input_tokens, reply.output_tokens) == ("Paris [1]", 40, 3)
    assert reply.stop_reason == "stop" and not reply.cut_off
    req = fake_anthropic.last
    assert req.path == "/v1/chat/completions"
    assert req.credential == DEFAULT_KEY
    assert req.body is not None
    assert req.body["model"] == MODEL and req.body["max_tokens"] == 77
    assert req.body["messages"] == [
        {"role": "system", "content": "You answer."},
        {"role": "user", "content": "Q?"},
    ]
    assert isinstance(client, LLMClient)


def test_empty_system_prompt_sends_the_user_turn_alone(
    client: OpenAIClient, fake_anthropic: FakeAnthropic
) -> None:
    _call(client, system="")
    client.close()
    assert fake_anthropic.last.body is not None
    assert [m["role"] for m in fake_anthropic.last.body["messages"]] == ["user"]


def test_a_local_server_needs_no_key() -> None:
    with fake_anthropic_server(api_keys=("no-key",)) as fake:
        fake.enqueue(text("ok"))
        with OpenAIClient(base_url=fake.openai_base_url) as c:
            assert _call(c).text == "ok"
        assert fake.last.credential == "no-key"


def test_neither_key_nor_server_is_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="OPENAI_API_KEY"):
        OpenAIClient()


def test_cut_off_reply_is_marked(client: OpenAIClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(TextReply("Paris is the cap", stop_reason="max_tokens"))
    reply = _call(client)
    client.close()
    assert reply.stop_reason == "length" and reply.cut_off


def test_models_without_a_list_price_cost_nothing(fake_anthropic: FakeAnthropic) -> None:
    meter = UsageMeter()
    c = OpenAIClient(DEFAULT_KEY, base_url=fake_anthropic.openai_base_url, meter=meter)
    fake_anthropic.enqueue(
        text("a", input_tokens=1_000_000, output_tokens=0, model="qwen2.5:7b"),
        text("b", input_tokens=1_000_000, output_tokens=0, model="gpt-4o-mini-2024-07-18"),
    )
    _call(c)
    _call(c)
    c.close()
    snap = meter.as_dict()
    assert snap["calls"] == 2 and snap["input_tokens"] == 2_000_000
    assert snap["cost_usd"] == pytest.approx(0.15)  # gpt-4o-mini's input price alone


# --------------------------------------------------------------------------- failures


@pytest.mark.parametrize(
    ("behaviour", "kind", "status"),
    [
        (overloaded(), "overloaded", 529),
        (server_error(), "api_error", 500),
        (error(503, "service_unavailable", "loading model"), "overloaded", 503),
    ],
)
def test_server_failures_are_retried_once_then_raised(
    client: OpenAIClient,
    fake_anthropic: FakeAnthropic,
    behaviour: object,
    kind: str,
    status: int,
) -> None:
    fake_anthropic.enqueue(behaviour, behaviour)  # type: ignore[arg-type]
    with pytest.raises(LLMError) as info:
        _call(client)
    client.close()
    assert (info.value.kind, info.value.status_code) == (kind, status)
    assert len(fake_anthropic.message_requests) == 2
    assert info.value.source == f"the openai API at {fake_anthropic.openai_base_url}"


def test_a_retry_recovers(client: OpenAIClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(rate_limited(retry_after=0.1), text("second time"))
    assert _call(client).text == "second time"
    client.close()


def test_rate_limited_with_a_long_wait_fails_fast(
    client: OpenAIClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(rate_limited(retry_after=30))
    started = time.monotonic()
    with pytest.raises(LLMError) as info:
        _call(client)
    client.close()
    assert (info.value.kind, info.value.retry_after) == ("rate_limited", 30.0)
    assert time.monotonic() - started < 2
    assert len(fake_anthropic.message_requests) == 1


def test_bad_request_is_not_retried(client: OpenAIClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(error(404, "not_found_error", "model 'x' not found"))
    with pytest.raises(LLMError) as info:
        _call(client)
    client.close()
    assert (info.value.kind, info.value.status_code) == ("api_error", 404)
    assert "model 'x' not found" in str(info.value)
    assert len(fake_anthropic.message_requests) == 1


def test_ollama_style_error_body(client: OpenAIClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(raw(400, '{"error": "model \\"llama9\\" not found"}'))
    with pytest.raises(LLMError) as info:
        _call(client)
    client.close()
    assert info.value.kind == "api_error" and "llama9" in str(info.value)


def test_timeout(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(delay(2.0))
    with OpenAIClient(DEFAULT_KEY, base_url=fake_anthropic.openai_base_url, timeout=0.5) as c:
        c.prepare()
        started = time.monotonic()
        with pytest.raises(LLMError) as info:
            _call(c)
    assert info.value.kind == "timeout"
    assert time.monotonic() - started < 1.8


def test_connection_refused_is_retried_then_raised() -> None:
    with (
        OpenAIClient(DEFAULT_KEY, base_url=f"http://127.0.0.1:{_free_port()}/v1") as c,
        pytest.raises(LLMError) as info,
    ):
        _call(c)
    assert info.value.kind == "connection"
    assert "openai API at http://127.0.0.1" in info.value.source


@pytest.mark.parametrize(
    "behaviour",
    [
        raw(200, '{"id": "x", "choices": [{"index": 0, "message": {"role": "ass'),
        raw(200, '{"id": "x", "object": "chat.completion", "choices": []}'),
        TextReply("", content=[]),
        raw(200, "<html>proxy error</html>", "text/html"),
    ],
    ids=["truncated", "no-choices", "null-content", "html"],
)
def test_malformed_and_empty_replies_are_bad_responses(
    client: OpenAIClient, fake_anthropic: FakeAnthropic, behaviour: object
) -> None:
    fake_anthropic.enqueue(behaviour)  # type: ignore[arg-type]
    with pytest.raises(LLMError) as info:
        _call(client)
    client.close()
    assert info.value.kind == "bad_response"
    assert len(fake_anthropic.message_requests) == 1


# --------------------------------------------------------------------------- streaming


def test_stream_hands_over_pieces_with_usage(fake_anthropic: FakeAnthropic) -> None:
    meter = UsageMeter()
    c = OpenAIClient(DEFAULT_KEY, base_url=fake_anthropic.openai_base_url, meter=meter)
    words = "Charles Babbage designed the Analytical Engine in 1837 [1]."
    fake_anthropic.enqueue(text(words, input_tokens=90, output_tokens=12))
    pieces: list[str] = []
    reply = c.stream(model=MODEL, system="You answer.", prompt="Q?", on_text=pieces.append)
    c.close()
    assert len(pieces) > 1 and "".join(pieces) == words == reply.text
    assert (reply.input_tokens, reply.output_tokens, reply.stop_reason) == (90, 12, "stop")
    body = fake_anthropic.last.body
    assert body is not None and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert meter.as_dict()["calls"] == 1


def test_stream_failures_are_llm_errors(fake_anthropic: FakeAnthropic) -> None:
    meter = UsageMeter()
    c = OpenAIClient(DEFAULT_KEY, base_url=fake_anthropic.openai_base_url, meter=meter)
    broken = 'data: {"id": "c", "object": "chat.completion.chunk", "choices": [{"ind\n\n'
    fake_anthropic.enqueue(overloaded(), overloaded(), raw(200, broken, "text/event-stream"))
    for kind in ("overloaded", "bad_response"):
        with pytest.raises(LLMError) as caught:
            c.stream(model=MODEL, system="", prompt="Q?", on_text=lambda _: None)
        assert caught.value.kind == kind
    c.close()
    assert meter.as_dict()["failures"] == 2


def test_stream_cut_off(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(TextReply("The answer is", stop_reason="max_tokens"))
    with OpenAIClient(DEFAULT_KEY, base_url=fake_anthropic.openai_base_url) as c:
        reply = c.stream(model=MODEL, system="", prompt="Q?", on_text=lambda _: None)
    assert reply.cut_off


# --------------------------------------------------------------------------- settings


def test_client_from_settings_reads_the_openai_environment(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert make_client(None, api="openai") is None  # nothing configured: offline
    monkeypatch.setenv("OPENAI_BASE_URL", fake_anthropic.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", DEFAULT_KEY)
    c = make_client(None, api="openai")
    assert isinstance(c, OpenAIClient)
    fake_anthropic.enqueue(text("from the env"))
    assert _call(c).text == "from the env"
    c.close()


def test_client_from_settings_refuses_an_unknown_api() -> None:
    with pytest.raises(InvalidArgumentError, match="llm_api must be one of anthropic, openai"):
        make_client("k", api="gemini")

"""The SDK path, end to end: the real ``anthropic`` client against the fake server.

Nothing in the SDK is patched; each failure the API can produce is scripted on the
wire and must come out as the matching ``LLMError.kind``.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request

import anthropic  # noqa: F401  # imported up front (~3 s), so timing asserts time calls only
import pytest

from kg_agent.exceptions import InvalidArgumentError, KGAgentError
from kg_agent.llm import (
    AnthropicClient,
    LLMClient,
    LLMError,
    LLMReply,
    UsageMeter,
    client_from_settings,
    parse_json_reply,
)
from tests.support.fake_anthropic import (
    DEFAULT_KEY,
    FakeAnthropic,
    delay,
    error,
    fake_anthropic_server,
    overloaded,
    rate_limited,
    raw,
    server_error,
    text,
)
from tests.support.fake_anthropic import TextReply as FakeTextReply

MODEL = "claude-test-1"


@pytest.fixture
def client(fake_anthropic: FakeAnthropic) -> AnthropicClient:
    return AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url, timeout=5.0)


def _call(client: AnthropicClient, **kw: object) -> LLMReply:
    args: dict[str, object] = {"model": MODEL, "system": "You answer.", "prompt": "Q?"}
    args.update(kw)
    return client.complete(**args)  # type: ignore[arg-type]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- success


def test_success_sends_model_system_prompt_and_key(
    client: AnthropicClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(text("Paris.", input_tokens=42, output_tokens=7))
    reply = client.complete(
        model=MODEL, system="Be terse.", prompt="Capital of France?", max_tokens=77
    )

    assert reply.text == "Paris."
    assert reply.model == MODEL
    assert (reply.input_tokens, reply.output_tokens) == (42, 7)
    assert reply.latency_s >= 0
    [req] = fake_anthropic.requests
    assert (req.method, req.path) == ("POST", "/v1/messages")
    assert req.credential == DEFAULT_KEY
    assert req.body is not None
    assert req.body["model"] == MODEL
    assert req.body["max_tokens"] == 77
    assert req.body["system"] == "Be terse."
    assert req.body["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert "temperature" not in req.body
    assert "anthropic-version" in req.headers


def test_empty_system_prompt_is_omitted(
    client: AnthropicClient, fake_anthropic: FakeAnthropic
) -> None:
    _call(client, system="")
    assert fake_anthropic.last.body is not None
    assert "system" not in fake_anthropic.last.body


def test_bearer_auth_token(fake_anthropic: FakeAnthropic) -> None:
    with AnthropicClient(auth_token=DEFAULT_KEY, base_url=fake_anthropic.base_url) as c:
        reply = _call(c, prompt="hello")
    assert reply.text == "echo: hello"  # the default responder
    assert fake_anthropic.last.headers["authorization"] == f"Bearer {DEFAULT_KEY}"
    assert fake_anthropic.last.authorized


def test_sdk_client_is_created_once_and_reused(
    client: AnthropicClient, fake_anthropic: FakeAnthropic
) -> None:
    _call(client)
    first = client._sdk
    _call(client)
    assert first is not None and client._sdk is first
    assert len(fake_anthropic.message_requests) == 2
    client.close()
    client.close()  # idempotent
    assert client._sdk is None


def test_prepare_builds_the_sdk_client_without_a_request(
    client: AnthropicClient, fake_anthropic: FakeAnthropic
) -> None:
    assert not client.prepared
    client.prepare()
    sdk = client._sdk
    assert client.prepared and sdk is not None
    assert fake_anthropic.message_requests == []
    _call(client)
    assert client._sdk is sdk, "the call used the client prepare() built"


def test_is_an_llm_client(client: AnthropicClient) -> None:
    assert isinstance(client, LLMClient)


def test_usage_meter_accumulates(fake_anthropic: FakeAnthropic) -> None:
    meter = UsageMeter()
    c = AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url, meter=meter)
    fake_anthropic.enqueue(
        text("a", input_tokens=1_000_000, output_tokens=0, model="claude-haiku-4-5"),
        text("b", input_tokens=0, output_tokens=1_000_000, model="unknown-model"),
        overloaded(),
        overloaded(),  # the one retry
    )
    _call(c)
    _call(c)
    with pytest.raises(LLMError):
        _call(c)
    c.close()
    snap = meter.as_dict()
    assert snap["calls"] == 2 and snap["failures"] == 1
    assert snap["input_tokens"] == 1_000_000 and snap["output_tokens"] == 1_000_000
    assert snap["cost_usd"] == pytest.approx(1.0 + 15.0)  # haiku-4 input + default output


# --------------------------------------------------------------------------- failures


def test_rate_limited_fails_fast(client: AnthropicClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(rate_limited(retry_after=30))
    started = time.monotonic()
    with pytest.raises(LLMError) as info:
        _call(client)
    assert info.value.kind == "rate_limited"
    assert info.value.status_code == 429
    assert isinstance(info.value, KGAgentError)
    assert time.monotonic() - started < 2  # max_retries=0: no honouring of retry-after
    assert len(fake_anthropic.message_requests) == 1


def test_overloaded(client: AnthropicClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(overloaded(), overloaded())
    with pytest.raises(LLMError) as info:
        _call(client)
    assert (info.value.kind, info.value.status_code) == ("overloaded", 529)
    assert len(fake_anthropic.message_requests) == 2  # one retry, then the error
    assert info.value.source == f"the anthropic API at {fake_anthropic.base_url}"


@pytest.mark.parametrize(
    "first",
    [overloaded(), server_error(), rate_limited(retry_after=0.1)],
    ids=["529", "500", "429-short-wait"],
)
def test_one_retry_where_it_can_help(
    client: AnthropicClient, fake_anthropic: FakeAnthropic, first: object
) -> None:
    fake_anthropic.enqueue(first, text("recovered"))  # type: ignore[arg-type]
    assert _call(client).text == "recovered"
    assert len(fake_anthropic.message_requests) == 2


@pytest.mark.parametrize(
    "first",
    [error(400, "invalid_request_error", "bad"), rate_limited(retry_after=30), delay(2.0)],
    ids=["400", "429-long-wait", "timeout"],
)
def test_no_retry_where_it_cannot_help(fake_anthropic: FakeAnthropic, first: object) -> None:
    fake_anthropic.enqueue(first, text("never read"))  # type: ignore[arg-type]
    with (
        AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url, timeout=0.5) as c,
        pytest.raises(LLMError),
    ):
        _call(c)
    assert len(fake_anthropic.message_requests) == 1


@pytest.mark.parametrize(
    ("behaviour", "status"),
    [(server_error(), 500), (error(400, "invalid_request_error", "bad"), 400)],
)
def test_other_statuses_are_api_errors(
    client: AnthropicClient, fake_anthropic: FakeAnthropic, behaviour: object, status: int
) -> None:
    fake_anthropic.enqueue(behaviour, behaviour)  # type: ignore[arg-type]
    with pytest.raises(LLMError) as info:
        _call(client)
    assert (info.value.kind, info.value.status_code) == ("api_error", status)


def test_wrong_key_is_an_api_error(fake_anthropic: FakeAnthropic) -> None:
    with (
        AnthropicClient("wrong-key", base_url=fake_anthropic.base_url) as c,
        pytest.raises(LLMError) as info,
    ):
        _call(c)
    assert (info.value.kind, info.value.status_code) == ("api_error", 401)
    assert not fake_anthropic.last.authorized


def test_timeout(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(delay(2.0))
    with AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url, timeout=0.5) as c:
        c.prepare()  # the SDK's import is not the time under test
        started = time.monotonic()
        with pytest.raises(LLMError) as info:
            _call(c)
    assert info.value.kind == "timeout"
    assert time.monotonic() - started < 1.8


def test_per_call_timeout_overrides_default(
    client: AnthropicClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(delay(2.0))
    with pytest.raises(LLMError) as info:
        _call(client, timeout=0.2)
    assert info.value.kind == "timeout"


def test_connection_refused() -> None:
    with (
        AnthropicClient(DEFAULT_KEY, base_url=f"http://127.0.0.1:{_free_port()}") as c,
        pytest.raises(LLMError) as info,
    ):
        _call(c)
    assert info.value.kind == "connection"


@pytest.mark.parametrize(
    "content",
    [
        [],
        [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}],
        [{"type": "text", "text": " "}],
    ],
)
def test_reply_without_text_is_bad_response(
    client: AnthropicClient, fake_anthropic: FakeAnthropic, content: list[dict[str, object]]
) -> None:
    fake_anthropic.enqueue(FakeTextReply("", content=content))  # type: ignore[arg-type]
    with pytest.raises(LLMError) as info:
        _call(client)
    assert info.value.kind == "bad_response"


def test_malformed_json_reply_is_text_then_bad_response(
    client: AnthropicClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(text("Sure! The answer is {not json"))
    reply = _call(client)
    with pytest.raises(LLMError) as info:
        parse_json_reply(reply.text)
    assert info.value.kind == "bad_response"


def test_non_json_http_body_does_not_escape_as_sdk_error(
    client: AnthropicClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(raw(200, '{"truncated": '))
    with pytest.raises(LLMError):
        _call(client)


# --------------------------------------------------------------------------- parse_json_reply


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("  [1, 2]\n", [1, 2]),
        ('```json\n{"a": [1, {"b": 2}]}\n```', {"a": [1, {"b": 2}]}),
        ('Here you go:\n```\n{"a": 1}\n```\nHope that helps.', {"a": 1}),
        ('Based on passage [1], the answer is: {"answer": "Paris", "cites": [1]}', None),
        ('Sure. {"a": "x}y"} trailing words', {"a": "x}y"}),
    ],
)
def test_parse_json_reply(reply: str, expected: object) -> None:
    if expected is None:
        expected = {"answer": "Paris", "cites": [1]}
    assert parse_json_reply(reply) == expected


@pytest.mark.parametrize("reply", ["", "no json here", "{broken: json}", '"just a string"', "42"])
def test_parse_json_reply_rejects(reply: str) -> None:
    with pytest.raises(LLMError) as info:
        parse_json_reply(reply)
    assert info.value.kind == "bad_response"


# --------------------------------------------------------------------------- settings


def test_client_from_settings_offline_without_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    assert client_from_settings(None) is None
    assert client_from_settings("  ") is None


def test_client_from_settings_with_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert isinstance(client_from_settings("sk-test"), AnthropicClient)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    c = client_from_settings(None)
    assert isinstance(c, AnthropicClient)
    assert "sk-env" not in repr(c)


def test_env_key_and_base_url_reach_the_server(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", DEFAULT_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.base_url)
    c = client_from_settings(None)
    assert c is not None
    with c:
        assert _call(c, prompt="env").text == "echo: env"


def test_constructor_without_credentials_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(InvalidArgumentError):
        AnthropicClient()


# --------------------------------------------------------------------------- the fake itself


def test_fake_server_leaves_no_threads() -> None:
    before = set(threading.enumerate())
    with fake_anthropic_server() as fake:
        fake.enqueue(delay(5.0))
        with (
            AnthropicClient(DEFAULT_KEY, base_url=fake.base_url, timeout=0.2) as c,
            pytest.raises(LLMError),
        ):
            _call(c)
    started = time.monotonic()
    leftover = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert leftover == []
    assert time.monotonic() - started < 1


def test_fake_responder_gets_the_body() -> None:
    seen: list[str] = []

    def responder(body: dict[str, object]) -> str:
        seen.append(str(body["model"]))
        return '{"ok": true}'

    with (
        fake_anthropic_server(responder=responder) as fake,
        AnthropicClient(DEFAULT_KEY, base_url=fake.base_url) as c,
    ):
        assert parse_json_reply(_call(c).text) == {"ok": True}
    assert seen == [MODEL]


@pytest.mark.parametrize(
    ("headers", "status"),
    [({"x-api-key": DEFAULT_KEY}, 200), ({"authorization": "Bearer nope"}, 401), ({}, 401)],
)
def test_fake_accepts_x_api_key_and_rejects_others(
    fake_anthropic: FakeAnthropic, headers: dict[str, str], status: int
) -> None:
    body = json.dumps({"model": MODEL, "max_tokens": 5, "messages": []}).encode()
    request = urllib.request.Request(
        f"{fake_anthropic.base_url}/v1/messages",
        data=body,
        headers={"content-type": "application/json", **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            got, payload = response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        got, payload = exc.code, json.loads(exc.read())
        exc.close()
    assert got == status
    assert payload["type"] == ("message" if status == 200 else "error")


# --------------------------------------------------------------------------- streaming


def test_stream_hands_over_pieces_and_returns_the_reply(fake_anthropic: FakeAnthropic) -> None:
    meter = UsageMeter()
    c = AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url, meter=meter)
    words = "Charles Babbage designed the Analytical Engine in 1837 [1]."
    fake_anthropic.enqueue(text(words, output_tokens=12))
    pieces: list[str] = []
    reply = c.stream(model=MODEL, system="You answer.", prompt="Q?", on_text=pieces.append)
    c.close()
    assert len(pieces) > 1 and "".join(pieces) == words == reply.text
    assert reply.output_tokens == 12
    assert fake_anthropic.last.body["stream"] is True
    assert meter.as_dict()["calls"] == 1


def test_stream_failures_are_llm_errors(fake_anthropic: FakeAnthropic) -> None:
    meter = UsageMeter()
    c = AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url, meter=meter)
    start = {
        "type": "message_start",
        "message": {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }
    broken = (
        f"event: message_start\ndata: {json.dumps(start)}\n\nevent: content_block_delta\ndata: {{"
    )
    fake_anthropic.enqueue(overloaded(), overloaded(), raw(200, broken, "text/event-stream"))
    for kind in ("overloaded", None):
        with pytest.raises(LLMError) as caught:
            c.stream(model=MODEL, system="", prompt="Q?", on_text=lambda _: None)
        if kind is not None:
            assert caught.value.kind == kind
    c.close()
    assert meter.as_dict()["failures"] == 2

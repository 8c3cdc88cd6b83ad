"""Bridge-entity extraction through the real ``anthropic`` SDK against the loopback fake server."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from kg_agent.llm.client import AnthropicClient, LLMError, UsageMeter
from kg_agent.multistep.bridge_llm import (
    BRIDGE_MODEL,
    MAX_SECTION_CHARS,
    BridgeExtraction,
    build_bridge_prompt,
    llm_bridge_entities,
    normalise_for_match,
    occurs_verbatim,
    parse_bridge_reply,
)
from kg_agent.retrieval.base import Evidence
from tests.support.fake_anthropic import (
    DEFAULT_KEY,
    FakeAnthropic,
    fake_anthropic_server,
    overloaded,
    rate_limited,
    raw,
    text,
)

QUESTION = "Where was the director of Jaws born?"


def _ev(section_id: str, title: str, content: str, similarity: float = 0.5) -> Evidence:
    return Evidence(
        section_id=section_id,
        title=title,
        heading="Production",
        heading_path=f"{title} > Production",
        content=content,
        similarity=similarity,
    )


EVIDENCE = [
    _ev(
        "jaws#1",
        "Jaws (film)",
        "Jaws is a 1975 American thriller film directed by Steven Spielberg and based on "
        "the 1974 novel by Peter Benchley. It was produced by Universal Pictures.",
    ),
    _ev(
        "godel#1",
        "Kurt Gödel",
        "Kurt Gödel was a logician who worked at the Institute for Advanced Study in  "
        "Princeton,\nNew Jersey.",
    ),
]


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with fake_anthropic_server() as fake:
        yield fake


@pytest.fixture
def client(fake_server: FakeAnthropic) -> Iterator[AnthropicClient]:
    with AnthropicClient(DEFAULT_KEY, base_url=fake_server.base_url, timeout=5.0) as c:
        yield c


# --------------------------------------------------------------------------- SDK path


def test_line_format_keeps_entities_in_evidence(
    fake_server: FakeAnthropic, client: AnthropicClient
) -> None:
    fake_server.enqueue(
        text(
            "entities: Steven Spielberg; Peter Benchley\n"
            "gaps: Steven Spielberg's birthplace; where he grew up"
        )
    )
    meter = UsageMeter()
    out = llm_bridge_entities(QUESTION, EVIDENCE, client, meter=meter, timeout=5.0)
    assert out == BridgeExtraction(
        entities=("Steven Spielberg", "Peter Benchley"),
        gaps=("Steven Spielberg's birthplace", "where he grew up"),
        dropped=(),
        source="claude",
    )
    assert meter.calls == 1 and meter.failures == 0 and meter.input_tokens > 0
    (req,) = fake_server.message_requests
    assert req.body is not None and req.body["model"] == BRIDGE_MODEL
    assert "entities:" in str(req.system)
    prompt = req.user_text
    assert QUESTION in prompt
    assert "[1] Jaws (film)" in prompt and "[2] Kurt Gödel" in prompt
    assert "directed by Steven Spielberg" in prompt


def test_hallucinated_entity_is_dropped_and_listed(
    fake_server: FakeAnthropic, client: AnthropicClient, caplog: pytest.LogCaptureFixture
) -> None:
    fake_server.enqueue(
        text("entities: Steven Spielberg; Amity Island; Cincinnati\ngaps: birthplace")
    )
    with caplog.at_level(logging.WARNING, logger="kg_agent.multistep.bridge_llm"):
        out = llm_bridge_entities(QUESTION, EVIDENCE, client)
    assert out.entities == ("Steven Spielberg",)
    assert out.dropped == ("Amity Island", "Cincinnati")
    assert out.gaps == ("birthplace",)
    assert any("Amity Island" in r.getMessage() for r in caplog.records)
    assert all(r.levelno == logging.WARNING for r in caplog.records)


def test_json_format_parses_and_verbatim_check_is_normalised(
    fake_server: FakeAnthropic, client: AnthropicClient
) -> None:
    reply = {
        # case, accent and whitespace differ from the evidence; duplicates collapse
        "entities": [
            "steven spielberg",
            "Kurt Godel",
            "Princeton, New Jersey",
            "STEVEN  SPIELBERG",
            "Jaws",
            "Spiel",
        ],
        "gaps": ["Spielberg's birthplace", "spielberg's  birthplace"],
    }
    fake_server.enqueue(text("Here you go:\n```json\n" + json.dumps(reply) + "\n```"))
    out = llm_bridge_entities(QUESTION, EVIDENCE, client)
    assert out.entities == ("steven spielberg", "Kurt Godel", "Princeton, New Jersey", "Jaws")
    # "Spiel" is only part of a word in the evidence: not a verbatim occurrence
    assert out.dropped == ("Spiel",)
    assert out.gaps == ("Spielberg's birthplace",)


def test_entities_none_and_max_entities(
    fake_server: FakeAnthropic, client: AnthropicClient
) -> None:
    fake_server.enqueue(
        text("entities: none\ngaps: none"),
        text("entities: Jaws; Steven Spielberg; Peter Benchley; Universal Pictures\ngaps: x"),
    )
    empty = llm_bridge_entities(QUESTION, EVIDENCE, client)
    assert empty.entities == () and empty.gaps == () and empty.dropped == ()
    capped = llm_bridge_entities(QUESTION, EVIDENCE, client, max_entities=2)
    assert capped.entities == ("Jaws", "Steven Spielberg")


def test_garbage_reply_raises_bad_response(
    fake_server: FakeAnthropic, client: AnthropicClient
) -> None:
    fake_server.enqueue(text("I am not sure what you mean."), raw(200, "garbage"))
    meter = UsageMeter()
    with pytest.raises(LLMError) as info:
        llm_bridge_entities(QUESTION, EVIDENCE, client, meter=meter)
    assert info.value.kind == "bad_response"
    assert meter.calls == 1 and meter.failures == 1  # tokens spent, step failed
    with pytest.raises(LLMError) as info2:
        llm_bridge_entities(QUESTION, EVIDENCE, client, meter=meter)
    assert info2.value.kind == "bad_response"
    assert meter.calls == 1 and meter.failures == 2


@pytest.mark.parametrize(
    ("behaviour", "kind"), [(rate_limited(), "rate_limited"), (overloaded(), "overloaded")]
)
def test_api_failure_propagates_and_is_counted(
    fake_server: FakeAnthropic, client: AnthropicClient, behaviour: object, kind: str
) -> None:
    fake_server.enqueue(behaviour, behaviour)  # type: ignore[arg-type]  # and its retry
    meter = UsageMeter()
    with pytest.raises(LLMError) as info:
        llm_bridge_entities(QUESTION, EVIDENCE, client, meter=meter)
    assert info.value.kind == kind
    assert meter.calls == 0 and meter.failures == 1
    assert len(fake_server.message_requests) == 2


# --------------------------------------------------------------------------- pure helpers


def test_parse_bridge_reply_formats() -> None:
    assert parse_bridge_reply("**Entities:** A; B\n- gaps: C") == (["A", "B"], ["C"])
    assert parse_bridge_reply('{"entities": "A; B", "gaps": []}') == (["A", "B"], [])
    assert parse_bridge_reply("gaps: only gaps") == ([], ["only gaps"])
    with pytest.raises(LLMError):
        parse_bridge_reply('{"answer": "Paris"}')


def test_normalise_and_occurs_verbatim() -> None:
    hay = normalise_for_match("Kurt  Gödel met O’Brien in Alabama.")
    assert hay == "kurt godel met o'brien in alabama."
    assert occurs_verbatim("KURT GÖDEL", hay)
    assert occurs_verbatim("O'Brien", hay)
    assert not occurs_verbatim("Al", hay)
    assert not occurs_verbatim("   ", hay)


def test_prompt_truncates_long_sections() -> None:
    long = _ev("long#1", "Long", "word " * 1000)
    prompt = build_bridge_prompt(QUESTION, [long])
    body = prompt.split("[1] Long")[1]
    assert len(body) < MAX_SECTION_CHARS + 300
    assert "…" in body

"""The web page at ``/`` in a real headless Chromium (the Debian package), over the real
``kg-agent serve`` on the sample graph (offline answers, so they are deterministic).

Load, ask, see the answer with its ``[n]`` citation links, the evidence list and the
evidence path drawn by Cytoscape.js; click a citation and a graph node; see the server's
errors shown on the page. A screenshot is kept in ``test-artifacts/web-page.png``.

Playwright drives the system's ``/usr/bin/chromium`` (no ``playwright install``); the
module is skipped, with the reason, when either is missing.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg_agent.ingest.pipeline import LoadReport
from tests.support.server import RunningServer, running_server

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        f"{CHROMIUM} not found: the web page test needs Debian's chromium "
        "(apt-get install chromium; .ci/run installs it)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the web page test needs the Python package playwright"
)
Browser = sync_api.Browser
Page = sync_api.Page
expect = sync_api.expect

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SCREENSHOT = ARTIFACTS / "web-page.png"
QUESTION = "Who conceived the Harvard Mark I?"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="module")
def server(sample_graph: tuple[Path, LoadReport]) -> Iterator[RunningServer]:
    with running_server(sample_graph[0], "--offline") as srv:
        yield srv


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    # Any script error or failed load is a failure, except the 422 the error test asks for
    # (Chromium logs every non-2xx fetch to the console).
    pg.on(
        "console",
        lambda msg: (
            errors.append(f"console: {msg.text}")
            if msg.type == "error" and "status of 422" not in msg.text
            else None
        ),
    )
    yield pg
    context.close()
    assert not errors, errors


def ask(page: Page, question: str) -> None:
    page.fill("#question", question)
    page.press("#question", "Enter")


def wait_for_result(page: Page) -> dict[str, Any]:
    page.wait_for_function("window.kgLastResult !== null", timeout=60_000)
    result: dict[str, Any] = page.evaluate("window.kgLastResult")
    return result


def post_json(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_ask_shows_cited_answer_evidence_and_graph(page: Page, server: RunningServer) -> None:
    page.goto(server.url + "/")
    expect(page).to_have_title("kg-agent")
    assert page.evaluate("typeof cytoscape") == "function"  # the vendored library loaded
    expect(page.locator("#question")).to_be_focused()

    ask(page, QUESTION)
    result = wait_for_result(page)
    assert result["question"] == QUESTION
    assert result["answerable"] is True
    # a name read from a sentence is not sure enough to be shown in bold: the cited
    # sentence is the answer, the reader's best guess stays in the result
    assert "Aiken" in (result["answer_candidate"] or "") and result["short_answer"] is None
    expect(page.locator("#short-answer")).to_be_hidden()

    # the answer and its citation links
    expect(page.locator("#answer")).to_be_visible()
    expect(page.locator("#answer")).to_contain_text("Aiken")
    expect(page.locator("#unanswerable")).to_be_hidden()
    cites = page.locator("#answer a.cite")
    expect(cites.first).to_be_visible()
    cited = {int(n) for n in cites.evaluate_all("links => links.map(a => a.dataset.n)")}
    assert cited == {c["n"] for c in result["citations"]}
    expect(page.locator("#status")).to_contain_text("answered in")

    # the evidence list, numbered as cited
    items = page.locator("#evidence > li")
    expect(items).to_have_count(len(result["evidence"]))
    assert len(result["evidence"]) > 0
    first = result["evidence"][0]
    expect(page.locator("#ev-1")).to_contain_text(first["title"])

    # the evidence path, drawn
    path = result["evidence_path"]
    assert len(path["nodes"]) > 1
    assert page.evaluate("window.kgGraph.nodes().length") == len(path["nodes"])
    assert page.evaluate("window.kgGraph.edges().length") == len(path["edges"])
    assert page.evaluate("window.kgGraph.nodes('[kind = \"section\"]').length") == len(
        result["citations"]
    )
    canvas = page.locator("#graph canvas").first
    box = canvas.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100

    painted = page.evaluate(
        """() => [...document.querySelectorAll('#graph canvas')].map(c => {
             const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
             let n = 0;
             for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
             return n;
           }).reduce((a, b) => a + b, 0)"""
    )
    assert painted > 1000, "the graph canvas is blank"

    # click [1]: evidence item 1 highlighted, its section node selected
    page.locator('#answer a.cite[data-n="1"]').first.click()
    expect(page.locator("#ev-1")).to_have_class(re.compile(r"\bhighlight\b"))
    expect(page.locator("#evidence > li.highlight")).to_have_count(1)
    selected = page.evaluate("window.kgGraph.nodes(':selected').map(n => n.data())")
    assert len(selected) == 1
    assert selected[0]["kind"] == "section" and selected[0]["n"] == 1
    assert selected[0]["id"] == "s:" + result["citations"][0]["section_id"]

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert SCREENSHOT.stat().st_size > 20_000

    # click the last cited section's node in the graph: its evidence item is highlighted
    n = max(c["n"] for c in result["citations"])
    x, y = page.evaluate(
        f"(() => {{ const p = window.kgGraph.nodes('[n = {n}]').renderedPosition();"
        " return [p.x, p.y]; })()"
    )
    page.locator("#graph").click(position={"x": x, "y": y})
    expect(page.locator(f"#ev-{n}")).to_have_class(re.compile(r"\bhighlight\b"))
    expect(page.locator("#evidence > li.highlight")).to_have_count(1)

    # an infobox fact is sure: the short answer in bold, its confidence beside the mode
    page.evaluate("window.kgLastResult = null")
    ask(page, "When was Charles Babbage born?")
    fact = wait_for_result(page)
    assert fact["short_answer"] == "26 December 1791" and fact["confidence"] >= 0.6
    expect(page.locator("#short-answer")).to_have_text("26 December 1791")
    expect(page.locator("#meta")).to_contain_text("confidence")
    expect(page.locator("#ev-1")).to_contain_text("Charles Babbage")


def test_server_error_is_shown_and_the_page_recovers(page: Page, server: RunningServer) -> None:
    status, body = post_json(server.url + "/v1/ask", {"question": "", "stream": True})
    assert status == 422 and body["error"]

    page.goto(server.url + "/")
    ask(page, "")
    expect(page.locator("#error")).to_be_visible()
    expect(page.locator("#error")).to_contain_text(body["error"])
    expect(page.locator("#status")).to_have_text("failed")
    expect(page.locator("#ask")).to_be_enabled()
    assert page.evaluate("window.kgLastResult") is None

    ask(page, QUESTION)  # the page still works
    result = wait_for_result(page)
    assert result["answerable"] is True
    expect(page.locator("#error")).to_be_hidden()
    expect(page.locator("#answer a.cite").first).to_be_visible()


def test_stream_error_event_after_partial_text(page: Page, server: RunningServer) -> None:
    """An ``error`` event in the stream (after some ``text``) replaces the partial
    answer's progress with the message; served here by a route, as the real server
    only sends one on a fault or a timeout."""
    events = [
        ("retrieved", {"trace": [], "evidence": 0, "timings": {"retrieve": 0.01}}),
        ("text", {"text": "<b>partial</b> answer "}),
        ("error", {"error": "the request took longer than 60 s", "status": 504}),
    ]
    stream = "".join(f"event: {k}\ndata: {json.dumps(v)}\n\n" for k, v in events)
    page.route(
        "**/v1/ask",
        lambda route: route.fulfill(status=200, content_type="text/event-stream", body=stream),
    )
    page.goto(server.url + "/")
    ask(page, QUESTION)
    expect(page.locator("#error")).to_contain_text("the request took longer than 60 s")
    expect(page.locator("#answer")).to_have_text("<b>partial</b> answer ")  # as text
    expect(page.locator("#answer")).not_to_have_class(re.compile(r"\bstreaming\b"))
    assert page.evaluate("window.kgLastResult") is None


def test_static_files_are_served(server: RunningServer) -> None:
    for name, kind in [
        ("app.js", "text/javascript"),
        ("style.css", "text/css"),
        ("cytoscape.min.js", "text/javascript"),
    ]:
        with urllib.request.urlopen(f"{server.url}/static/{name}", timeout=30) as resp:
            assert resp.headers["content-type"].startswith(kind)
            assert len(resp.read()) > 1000

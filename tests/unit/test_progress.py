from __future__ import annotations

import io

from kg_agent.progress import Progress


def test_progress_reports_rate_and_eta_in_logs() -> None:
    out = io.StringIO()
    p = Progress("embed", total=100, unit="sections", stream=out, interval=0.0)
    p.update(25)
    p.close()
    lines = out.getvalue().strip().splitlines()
    assert lines[0].startswith("embed: 25/100 (25%)")
    assert "sections/s" in lines[0] and "ETA" in lines[0]
    assert "\r" not in out.getvalue()  # not a terminal: plain lines


def test_progress_eta_from_a_fraction_when_total_unknown() -> None:
    out = io.StringIO()
    p = Progress("parse", unit="pages", stream=out, interval=0.0)
    p.update(10, fraction=0.5)
    assert "50% ETA" in out.getvalue()


def test_disabled_progress_prints_nothing() -> None:
    out = io.StringIO()
    p = Progress("x", stream=out, enabled=False)
    p.update(5)
    p.close()
    assert out.getvalue() == ""

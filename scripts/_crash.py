"""The crash harness: ``kill -9`` a write command at a chosen moment, run the documented
recovery (the same command again), and compare the graph with the one before the
command and the one a clean run gives. It must equal one of the two, exactly.

Shared by ``tests/e2e/test_crash.py`` (a few kills per command, in CI) and
``scripts/crash_test.py`` (hundreds, with a report per command and phase).

A kill lands at one of three kinds of moment:

* a **crash point** (``KG_AGENT_CRASH_AT``, :mod:`kg_agent.crashpoints`): a named
  boundary where the graph's state changes, some of them microseconds wide;
* a **file event**: Kùzu's checkpoint starting (its ``.shadow`` file), its write-ahead
  log growing, the copy journal or a new graph appearing beside the old one. The
  checkpoint that a ``COMMIT`` with copies forces runs *inside* Kùzu, so only this finds
  the window where Kùzu 0.11.3 loses a ``COPY``'s rows;
* a **time** drawn with a seed over the length of a clean run.

The kill is what a user's ``kill -9`` is: SIGKILL to the ``kg-agent`` process; its
command, writer and workers die with it (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import bz2
import hashlib
import json
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kg_agent.crashpoints import CRASH_ENV, POINTS  # noqa: E402
from kg_agent.store import GraphStore  # noqa: E402

ENWIKI = "wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
SECOND = "wiki/enwiki-table-markup.xml.bz2"
#: File events a kill can wait for (see the module docstring).
FILE_EVENTS = ("shadow", "wal", "journal", "kg-new")
#: Queries whose full-text answers the digest records.
TEXT_QUERIES = (
    "capital city",
    "war",
    "born in",
    "university",
    "music album",
    "river",
    "language spoken",
    "president",
    "chemical element",
    "film",
)


def kg_agent_exe() -> list[str]:
    exe = Path(sys.executable).with_name("kg-agent")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "kg_agent._entry"]


# ---------------------------------------------------------------------- digests
def _h(value: Any) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def digest(db: Path) -> dict[str, str]:
    """A hash of every table and index of the graph at ``db`` (``{"graph": "absent"}``
    when there is none): the rows of each table without when they were written, PageRank
    to 6 decimals, the vectors (to 4 decimals) and what the vector index answers for
    every fifth of them, the text index's counts and answers."""
    from tests.support.graph_compare import QUERIES

    if not db.exists():
        return {"graph": "absent"}
    out: dict[str, str] = {}
    with GraphStore.open(db, read_only=True) as store:
        for name, q in QUERIES.items():
            rows = sorted((tuple(r.values()) for r in store.query(q)), key=repr)
            out[name] = _h(rows)
        kinds = store.query("MATCH (a:Article) RETURN a.title, a.kind")
        out["kinds"] = _h(sorted(tuple(r.values()) for r in kinds))
        ids, matrix = store.section_embeddings()
        vectors = dict(zip(ids, np.round(matrix, 4).tolist(), strict=True))
        out["vectors"] = _h(sorted(vectors.items()))
        index = store.vector_index()
        out["vector_index"] = _h(
            None if index is None else sorted(str(i) for part in index.ids() for i in part)
        )
        answers = {}
        for sid in sorted(vectors)[::5]:
            hits = store.vector_search(list(vectors[sid]), 5)
            answers[sid] = _ranked([(h.section_id, h.score) for h in hits], places=3)
        out["vector_answers"] = _h(answers)
        text = store.text_index()
        if text is None:
            out["text_index"] = "absent"
        else:  # ties come in either order, even between two clean builds
            found = [
                (q, _ranked(text.search_sections(q, 8)), _ranked(text.search_titles(q, 8)))
                for q in TEXT_QUERIES
            ]
            out["text_index"] = _h([text.counts(), found])
    return out


def _ranked(hits: list[tuple[str, float]], places: int = 4) -> tuple[list[float], list[str]]:
    """A search's scores, and the ids scored above the last (ties at the cut, in
    either order, are left out)."""
    scores = [round(s, places) for _, s in hits]
    return scores, sorted(h for h, s in hits if scores and round(s, places) > scores[-1])


def differs(a: dict[str, str], b: dict[str, str]) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


# ---------------------------------------------------------------------- graphs
def copy_graph(src: Path | None, dst: Path) -> None:
    """``src``'s file and index folder at ``dst`` (nothing: ``dst`` emptied)."""
    remove_graph(dst)
    if src is None:
        return
    shutil.copy2(src, dst)
    shutil.copytree(
        Path(f"{src}.indexes"), Path(f"{dst}.indexes"), ignore=shutil.ignore_patterns("load.lock")
    )


def remove_graph(db: Path) -> None:
    for p in [db, Path(f"{db}.wal"), Path(f"{db}.shadow")]:
        if p.exists():
            p.unlink()
    shutil.rmtree(Path(f"{db}.indexes"), ignore_errors=True)
    for leftover in db.parent.glob(f".{db.name}.kg-*"):
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink()


def head_dump(src: Path, out: Path, articles: int | None) -> Path:
    """The first ``articles`` articles of a dump (with the redirects among its pages),
    as an XML dump; all of it when ``articles`` is None."""
    opener = bz2.open if src.suffix == ".bz2" else open
    with opener(src, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        text = fh.read()
    if articles is not None:
        start = text.index("<page>")
        head, pages = text[:start], re.findall(r"<page>.*?</page>\s*", text, re.S)
        kept: list[str] = []
        n = 0
        for page in pages:
            if "<redirect" not in page:
                n += 1
                if n > articles:
                    break
            kept.append(page)
        text = head + "".join(kept) + "</mediawiki>\n"
    out.write_text(text, encoding="utf-8")
    return out


@dataclass(frozen=True)
class Scenario:
    """A write command and the graph it runs on (``before`` None: no graph)."""

    name: str
    argv: tuple[str, ...]
    before: Path | None


@dataclass
class Prepared:
    work: Path
    scenarios: dict[str, Scenario]
    env: dict[str, str]


def run(
    argv: list[str] | tuple[str, ...], db: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*kg_agent_exe(), *argv, "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )


def prepare(shared: Path, work: Path, *, articles: int | None, env: dict[str, str]) -> Prepared:
    """The dumps and the graphs every scenario starts from (loaded once, with embeddings)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_newer_dump import newer_dump

    work.mkdir(parents=True, exist_ok=True)
    dump = head_dump(shared / "data" / ENWIKI, work / "enwiki.xml", articles)
    newer = work / "enwiki-newer.xml"
    newer_dump(dump, newer, changed=0.1, added=0.05, deleted=0.05, retargeted=0.1, seed=1)
    second = head_dump(shared / "data" / SECOND, work / "second.xml", None)
    graphs = work / "graphs"
    graphs.mkdir(exist_ok=True)

    def build(name: str, *steps: tuple[str, ...]) -> Path:
        db = graphs / f"{name}.kuzu"
        if not db.exists():
            for argv in steps:
                out = run(argv, db, env)
                if out.returncode != 0:
                    raise RuntimeError(f"preparing {name}: {' '.join(argv)}: {out.stderr[-2000:]}")
        return db

    base = build("base", ("load", str(dump), "-q"))
    later = build("later", ("load", str(dump), "--embeddings", "later", "-q"))
    updated = build("updated", ("load", str(dump), "-q"), ("update", str(newer), "-q"))
    with GraphStore.open(base, read_only=True) as store:
        linked = store.query(
            "MATCH (a:Article)<-[:LINKS_TO]-(b:Article) WHERE a.is_stub = false "
            "RETURN a.title AS t, count(b) AS n ORDER BY n DESC, t LIMIT 2"
        )
        lone = store.query(
            "MATCH (a:Article) WHERE a.is_stub = false AND NOT EXISTS "
            "{ MATCH (a)<-[:LINKS_TO]-(:Article) } RETURN a.title AS t ORDER BY t LIMIT 1"
        )
    doomed = [str(r["t"]) for r in [*linked, *lone]]
    scenarios = [
        Scenario("load", ("load", str(dump), "-q"), None),
        Scenario("load --force", ("load", str(dump), "--force", "-q"), base),
        Scenario("load into", ("load", str(second), "-q"), base),
        Scenario("update", ("update", str(newer), "-q"), base),
        Scenario("delete", ("delete", *doomed), base),
        Scenario("compact", ("compact",), updated),
        Scenario("embed", ("embed", "-q"), later),
        Scenario("reindex", ("reindex", "-q"), base),
    ]
    return Prepared(work, {s.name: s for s in scenarios}, env)


# ---------------------------------------------------------------------- one kill
@dataclass
class Outcome:
    scenario: str
    kind: str  # point | event | time
    at: str
    killed: bool = False
    phase: str = ""  # the phase the intent recorded when the kill landed
    after_kill: str = ""  # before | clean | refused | absent | other
    readers: str = ""  # what stats said: whole | refused
    check: str = ""  # ok | interrupted | damaged | other
    recovered: bool = False
    after_recovery: str = ""  # before | clean | other
    differs: list[str] = field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        if not self.killed:
            return True  # the command finished before the moment came: nothing to judge
        return (
            self.recovered
            and self.after_recovery in ("before", "clean")
            and self.after_kill in ("before", "clean", "refused", "absent")
            and self.check in ("ok", "interrupted")
        )


def _session_alive(sid: int) -> bool:
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            return True
    return False


def _event_seen(event: str, db: Path) -> bool:
    if event == "shadow":
        return Path(f"{db}.shadow").exists()
    if event == "wal":
        wal = Path(f"{db}.wal")
        return wal.exists() and wal.stat().st_size > 0
    if event == "journal":
        return Path(f"{db}.indexes/commit.json").exists()
    if event == "kg-new":
        return Path(db.parent / f".{db.name}.kg-new").exists()
    raise ValueError(event)


def kill_once(
    scenario: Scenario,
    db: Path,
    *,
    kind: str,
    at: str,
    before: dict[str, str],
    clean: dict[str, str],
    env: dict[str, str],
) -> Outcome:
    """Run ``scenario`` on a fresh copy of its graph at ``db``, kill it at ``at``, look
    at what readers see, recover, and compare (see the module docstring)."""
    out = Outcome(scenario.name, kind, at)
    t0 = time.perf_counter()
    copy_graph(scenario.before, db)
    run_env = dict(env)
    if kind == "point":
        run_env[CRASH_ENV] = at
    proc = subprocess.Popen(
        [*kg_agent_exe(), *scenario.argv, "--db", str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=run_env,
        start_new_session=True,
    )
    start = time.perf_counter()
    if kind == "point":  # the command kills itself there
        proc.wait(timeout=1800)
    elif kind == "event":
        while proc.poll() is None and not _event_seen(at, db):
            time.sleep(0.0002)
    elif kind == "time":
        while proc.poll() is None and time.perf_counter() - start < float(at):
            time.sleep(0.002)
    intent = Path(f"{db}.indexes/write.json")
    with_phase = intent.read_text(encoding="utf-8") if intent.exists() else ""
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=600)
    deadline = time.time() + 60
    while _session_alive(proc.pid):
        if time.time() > deadline:
            raise RuntimeError("a process of the killed command outlived it")
        time.sleep(0.05)
    if proc.returncode == 0:
        out.detail = "finished before the moment came"
        out.seconds = round(time.perf_counter() - t0, 2)
        return out
    if proc.returncode not in (-signal.SIGKILL, 128 + signal.SIGKILL):
        out.detail = f"the command failed (status {proc.returncode}): {err.strip()[-300:]}"
        out.seconds = round(time.perf_counter() - t0, 2)
        out.killed = True
        return out
    out.killed = True
    with_phase = intent.read_text(encoding="utf-8") if intent.exists() else with_phase
    if with_phase:
        out.phase = str(json.loads(with_phase).get("phase", ""))
    # what a reader sees
    stats = run(["stats", "--json"], db, env)
    if not db.exists():
        out.readers, out.after_kill = (
            "absent",
            "absent" if before.get("graph") == "absent" else "other",
        )
    elif stats.returncode == 1 and "again" in stats.stderr and "Traceback" not in stats.stderr:
        out.readers, out.after_kill = "refused", "refused"
    elif stats.returncode == 0:
        now = digest(db)
        out.readers = "whole"
        out.after_kill = "before" if now == before else "clean" if now == clean else "other"
        if out.after_kill == "other":
            out.differs = differs(now, before)
    else:
        out.readers = "other"
        out.detail = f"stats: {stats.returncode} {stats.stderr.strip()[-300:]}"
    if db.exists():
        check = run(["check"], db, env)
        text = (check.stdout + check.stderr).strip()
        if check.returncode == 0:
            out.check = "ok"
        elif "interrupted" in text and "damaged" not in text:
            out.check = "interrupted"
        elif "damaged" in text:
            out.check = "damaged"
        else:
            out.check = "other"
        if out.check in ("damaged", "other"):
            out.detail = f"check: {text[-300:]}"
    else:
        out.check = "ok"
    # the documented recovery: the same command again
    again = run(scenario.argv, db, env)
    out.recovered = again.returncode == 0
    if not out.recovered:
        out.detail = f"recovery: {again.returncode} {again.stderr.strip()[-400:]}"
    else:
        now = digest(db)
        out.after_recovery = "clean" if now == clean else "before" if now == before else "other"
        if out.after_recovery == "other":
            out.differs = differs(now, clean)
        final = run(["check"], db, env)
        if final.returncode != 0 or "note:" in final.stdout:
            out.detail = f"check after recovery: {(final.stdout + final.stderr).strip()[-300:]}"
            out.recovered = False
    out.seconds = round(time.perf_counter() - t0, 2)
    return out


def clean_run(
    scenario: Scenario, db: Path, env: dict[str, str]
) -> tuple[dict[str, str], dict[str, str], float]:
    """(the digest before, the digest after a clean run, its seconds)."""
    copy_graph(scenario.before, db)
    before = digest(db)
    t0 = time.perf_counter()
    out = run(scenario.argv, db, env)
    took = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"clean run of {scenario.name}: {out.stderr[-2000:]}")
    return before, digest(db), took


def moments(seconds: float, *, times: int, seed: int) -> list[tuple[str, str]]:
    """Every crash point and file event, and ``times`` moments drawn over ``seconds``."""
    rng = random.Random(seed)
    out = [("point", p) for p in POINTS] + [("event", e) for e in FILE_EVENTS]
    out += [("time", f"{rng.uniform(0.05, seconds * 1.05):.3f}") for _ in range(times)]
    return out


def to_json(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    return [dict(asdict(o), ok=o.ok) for o in outcomes]

#!/usr/bin/env python3
"""Benchmark the question entity linker at Wikipedia scale, on realistic titles.

Why: :class:`kg_agent.entities.linker.QuestionEntityLinker` builds one
Aho-Corasick automaton over every article title and redirect at the first
question. The corpora we test on hold a few thousand titles; English Wikipedia
holds ~6.9M articles and ~10M redirects. This measures what the linker costs at
100k / 1M / 5M titles (build time, memory, time per question), whether saving
the built automaton and loading it in a fresh process beats building it, and how
many junk entities a question links once the title set is as crowded and as
full of common words as a real wiki's.

Titles come from ``scripts/make_dump.py``'s ``build_titles`` (real titles and link
targets of the English sample, suffixed variants, person-like names, and the
common-word / number titles a real wiki has: "The", "He", "Film", "2006", "A",
"It", "Go", "Paris", ...), with its redirects (~0.9 per title, shaped like real
ones: other capitalisation, "The X", "Surname, First", surname only, acronym,
plural, misspelling, ...). Every gold title of the dev questions is added to
every set, so each question has its gold entities to find.

Each size is generated, built and loaded in its own fresh subprocess, so every
memory number is that process's own: the RSS delta is measured from after the
titles are in memory (the linker's own cost; the titles themselves are reported
separately) to the peak (``VmHWM``, reset before the step) and to what stays.
Link time is per ``link()`` call over every dev question (3 passes, after the
build).

Persistence, each written after the build and loaded in a fresh process that
then checks its links are identical to the built one's:

* ``linker``: what ``QuestionEntityLinker.save`` writes (pickles of a key, the
  trie, then the rest of the matcher), loaded through
  ``QuestionEntityLinker(store, saved=...)``;
* ``acsave``: pyahocorasick's own ``Automaton.save`` / ``ahocorasick.load`` for the
  trie, plus a pickle of the rest of the matcher;
* ``pickle``: at sizes where the linker's save does not fit next to the titles in
  the 6 GiB budget (``--pickle-sizes``), the trie's pickle is written by a process
  holding only the trie, plus the same pickle of the rest: the same bytes and
  load cost as ``linker``.

The full-text fallback (what the linker does above ``max_titles``) is measured
on the same titles: a tantivy title index like the graph's, the top 10 hits
through the linker's own filter, time per question and the same precision
numbers.

Precision rule (deliberately simple), for each linked title L of a question with
gold titles G:

* ``gold``: L is in G;
* ``common`` (junk): L is one of the inserted common-word / number titles;
* ``named`` (not junk): L is not gold, but its name (L without a trailing
  parenthetical) occurs in the question as whole words, ignoring case: the
  question does name something called that (perhaps another sense of it);
* ``alias-only`` (junk): none of these; L was reached through a redirect or a
  spelling whose target is not named in the question ("Leonov" -> "Katsuaki
  Leonov", an acronym, a plural).

Junk share = (common + alias-only) / all links. Recall = share of questions that
link at least one gold title. "q names" counts the questions that contain a
common-word title as a whole, case-sensitive word ("The", "Film", "A", "2007"),
"q links" those that link one. Size 0 is the baseline: only the gold and the
common-word titles, no synthetic crowd.

    .venv/bin/python scripts/bench_linker.py --json /tmp/bench_linker.json
    .venv/bin/python scripts/bench_linker.py --sizes 100000 --persist-sizes 100000

Cost: about 30-50 s of title generation and 20-40 s of build per million titles,
one process at a time, under 6 GiB at 5M; ``--workdir`` holds the title sets and
the saved automatons (~2 GB at 5M) and is removed unless ``--keep`` (then
``--reuse`` skips regenerating the title sets).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import pickle
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MULTIHOP = ROOT.parent / "shared" / "data" / "multihop"
sys.path.insert(0, str(ROOT))

GIB = 1 << 30


# --------------------------------------------------------------------------- helpers


def _status() -> dict[str, int]:
    """VmRSS / VmHWM of this process, in bytes."""
    out: dict[str, int] = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                out[key] = int(value.split()[0]) * 1024
    return out


def _reset_peak() -> None:
    """Make VmHWM start again from the current RSS (Linux >= 4.0)."""
    with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")


def _make_dump() -> Any:
    spec = importlib.util.spec_from_file_location("make_dump", ROOT / "scripts" / "make_dump.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_questions(limit: int | None = None) -> list[dict[str, Any]]:
    """Dev questions of the three multi-hop sets: {set, question, gold: [titles]}."""
    out: list[dict[str, Any]] = []
    wiki = json.loads((MULTIHOP / "2wikimultihopqa" / "questions.dev.json").read_text())
    for q in wiki[:limit]:
        out.append({"set": "2wiki", "question": q["question"], "gold": list(q["supporting_facts"])})
    hotpot = json.loads((MULTIHOP / "hotpotqa" / "hotpot_dev_distractor.dev.json").read_text())
    for q in hotpot[:limit]:
        gold = list(dict.fromkeys(t for t, _ in q["supporting_facts"]))
        out.append({"set": "hotpot", "question": q["question"], "gold": gold})
    with open(MULTIHOP / "musique" / "musique_ans.dev.jsonl", encoding="utf-8") as fh:
        musique = [json.loads(line) for line in fh if line.strip()]
    for q in musique[:limit]:
        gold = list(dict.fromkeys(p["title"] for p in q["paragraphs"] if p["is_supporting"]))
        out.append({"set": "musique", "question": q["question"], "gold": gold})
    return out


class _TitlesStore:
    """Just what QuestionEntityLinker reads from a GraphStore, over in-memory lists."""

    def __init__(self, titles: list[str], aliases: list[tuple[str, str]]) -> None:
        self.titles = titles
        self.aliases = aliases
        self.n_titles = len(titles)
        self.n_aliases = len(aliases)

    def release(self) -> None:
        """Drop the lists (the matcher keeps what it needs); counts stay for the key."""
        self.titles, self.aliases = [], []

    def count_articles(self) -> int:
        return self.n_titles

    def count_redirects(self) -> int:
        return self.n_aliases

    def entity_names(self) -> tuple[list[str], list[tuple[str, str]]]:
        return self.titles, self.aliases

    def loads(self) -> list[dict[str, Any]]:
        return []


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _time_links(linker: Any, questions: list[str], passes: int = 3) -> dict[str, Any]:
    times: list[float] = []
    links: list[list[str]] = []
    for p in range(passes):
        for q in questions:
            t0 = time.perf_counter()
            found = linker.link(q)
            times.append(time.perf_counter() - t0)
            if p == 0:
                links.append(found)
    return {
        "link_ms_p50": round(1000 * statistics.median(times), 3),
        "link_ms_p95": round(1000 * _pct(times, 0.95), 3),
        "link_ms_mean": round(1000 * statistics.fmean(times), 3),
        "links": links,
    }


# --------------------------------------------------------------------------- workers


def worker_gen(size: int, seed: int, out: Path, questions_path: Path) -> dict[str, Any]:
    """Titles + redirect aliases for ``size`` articles, plus every gold title."""
    md = _make_dump()
    t0 = time.perf_counter()
    titles: list[str] = []
    aliases: list[tuple[str, str]] = []
    if size:
        built = md.build_titles(md.load_material(), size, seed)
        titles = built.articles
        aliases = [
            (r, titles[t]) for r, t in zip(built.redirects, built.redirect_targets, strict=True)
        ]
        del built
    common = list(md._COMMON_TITLES) + [str(y) for y in range(1800, 2025)]
    have = set(titles)
    questions = json.loads(questions_path.read_text())
    gold_added = 0
    for extra in [*common, *(t for q in questions for t in q["gold"])]:
        if extra not in have:
            have.add(extra)
            titles.append(extra)
            gold_added += 1
    with open(out, "wb") as fh:
        pickle.dump({"titles": titles, "aliases": aliases, "common": common}, fh, protocol=5)
    return {
        "titles": len(titles),
        "aliases": len(aliases),
        "added": gold_added,
        "gen_s": round(time.perf_counter() - t0, 1),
    }


def _load_titles(path: Path) -> dict[str, Any]:
    with open(path, "rb") as fh:
        data: dict[str, Any] = pickle.load(fh)
    return data


def worker_build(
    titles_path: Path, questions_path: Path, out_dir: Path, persist: bool, pickle_ok: bool
) -> dict[str, Any]:
    """Build the linker from a title set and time its links; with ``persist``, save it.

    ``Automaton.save`` streams (little extra memory); the linker's pickle copies
    the whole trie into bytes first, so it is written here only where
    ``pickle_ok`` (it does not fit the 6 GiB budget at 5M next to the titles).
    """
    from kg_agent.entities.linker import QuestionEntityLinker

    base = _status()["VmRSS"]
    data = _load_titles(titles_path)
    store = _TitlesStore(data.pop("titles"), data.pop("aliases"))
    questions = json.loads(questions_path.read_text())
    gc.collect()
    with_titles = _status()["VmRSS"]
    linker = QuestionEntityLinker(store, max_titles=1 << 40)  # type: ignore[arg-type]
    _reset_peak()
    t0 = time.perf_counter()
    linker.link("")  # builds the automaton
    build_s = time.perf_counter() - t0
    peak = _status()["VmHWM"]
    gc.collect()
    after = _status()["VmRSS"]
    matcher = linker._matcher
    assert matcher is not None
    res: dict[str, Any] = {
        "titles": store.n_titles,
        "aliases": store.n_aliases,
        "forms": len(matcher),
        "titles_rss_gib": round((with_titles - base) / GIB, 3),
        "build_s": round(build_s, 2),
        "build_peak_gib": round((peak - with_titles) / GIB, 3),
        "build_rss_gib": round((after - with_titles) / GIB, 3),
    }
    res.update(_time_links(linker, [q["question"] for q in questions]))
    if not persist:
        return res
    # keep only the matcher, as a query process would, before measuring the saves
    store.release()
    del data
    gc.collect()
    res["persist"] = {}

    def acsave() -> None:
        state = dict(vars(matcher))
        state.pop("_automaton").save(str(out_dir / "trie.ac"))
        with open(out_dir / "trie.state", "wb") as fh:
            pickle.dump(state, fh, protocol=5)

    res["persist"]["acsave"] = _measure_save(acsave, out_dir / "trie.ac", out_dir / "trie.state")
    if pickle_ok:
        path = out_dir / "linker.pkl"
        res["persist"]["linker"] = _measure_save(lambda: linker.save(path), path)
    return res


def _measure_save(save: Any, *paths: Path) -> dict[str, Any]:
    _reset_peak()
    before = _status()["VmRSS"]
    t0 = time.perf_counter()
    save()
    return {
        "save_s": round(time.perf_counter() - t0, 2),
        "save_peak_gib": round((_status()["VmHWM"] - before) / GIB, 3),
        "bytes": sum(p.stat().st_size for p in paths),
    }


def worker_repickle(out_dir: Path) -> dict[str, Any]:
    """Pickle the trie alone (loaded from ``Automaton.save``), for sizes where the
    linker's pickle does not fit next to the titles: same bytes, same load cost."""
    import ahocorasick

    trie = ahocorasick.load(str(out_dir / "trie.ac"), pickle.loads)
    gc.collect()

    def save() -> None:
        with open(out_dir / "trie.pkl", "wb") as fh:
            pickle.dump(trie, fh, protocol=pickle.HIGHEST_PROTOCOL)

    return _measure_save(save, out_dir / "trie.pkl", out_dir / "trie.state")


def worker_load(
    kind: str, out_dir: Path, questions_path: Path, links_path: Path, meta: dict[str, int]
) -> dict[str, Any]:
    """Load a saved matcher in this fresh process; time it and check its links.

    ``linker``: ``QuestionEntityLinker(saved=...)``; ``acsave``: ``ahocorasick.load``
    plus the pickled rest; ``pickle``: the trie's pickle plus the pickled rest.
    """
    import ahocorasick

    from kg_agent.entities.linker import QuestionEntityLinker
    from kg_agent.entities.matcher import MentionMatcher

    questions = json.loads(questions_path.read_text())
    expected = json.loads(links_path.read_text())
    # the same counts as the built one, so the saved key matches
    store = _TitlesStore([], [])
    store.n_titles, store.n_aliases = meta["titles"], meta["aliases"]
    gc.collect()
    base = _status()["VmRSS"]
    _reset_peak()
    t0 = time.perf_counter()
    if kind == "linker":
        linker = QuestionEntityLinker(
            store,  # type: ignore[arg-type]
            max_titles=1 << 40,
            saved=out_dir / "linker.pkl",
        )
        linker.link("")
        assert linker.loaded_from is not None, "the saved linker was not used"
    else:
        if kind == "acsave":
            trie = ahocorasick.load(str(out_dir / "trie.ac"), pickle.loads)
        else:
            with open(out_dir / "trie.pkl", "rb") as fh:
                trie = pickle.load(fh)
        with open(out_dir / "trie.state", "rb") as fh:
            state = pickle.load(fh)
        matcher = MentionMatcher.__new__(MentionMatcher)
        vars(matcher).update(state)
        matcher._automaton = trie
        linker = QuestionEntityLinker(store)  # type: ignore[arg-type]
        linker._matcher = matcher
    load_s = time.perf_counter() - t0
    peak = _status()["VmHWM"]
    gc.collect()
    after = _status()["VmRSS"]
    timed = _time_links(linker, [q["question"] for q in questions], passes=1)
    return {
        "load_s": round(load_s, 2),
        "load_peak_gib": round((peak - base) / GIB, 3),
        "load_rss_gib": round((after - base) / GIB, 3),
        "identical": timed["links"] == expected,
    }


class _FtsStore(_TitlesStore):
    """The full-text fallback's view of a graph: a tantivy index over the titles."""

    def __init__(self, index: Any, titles: list[str], aliases: list[tuple[str, str]]) -> None:
        super().__init__([], [])
        self.index = index
        self.n_titles = len(titles)
        # what a graph looks up by key: a title, else a redirect's target
        self.keys = set(titles)
        self.redirects = {r: t for r, t in aliases if t in self.keys}

    def resolve_title(self, title: str, *, with_text: bool = False) -> str | None:
        return title if title in self.keys else self.redirects.get(title)

    def search_article_titles(
        self, text: str, k: int = 5, *, with_text: bool = False
    ) -> list[tuple[str, float]]:
        # as GraphReads.search_article_titles, every title a real article (no stubs)
        found = self.index.search_titles(text, max(4 * k, 20))
        found.sort(key=lambda ts: (-round(ts[1], 6), ts[0]))
        return list(found[:k])


def worker_fts(titles_path: Path, questions_path: Path, out_dir: Path) -> dict[str, Any]:
    """The linker's full-text fallback (what it does above ``max_titles``) on the same titles."""
    from kg_agent.entities.linker import QuestionEntityLinker
    from kg_agent.store.text_index import TextIndex

    loaded = _load_titles(titles_path)
    titles: list[str] = loaded["titles"]
    questions = json.loads(questions_path.read_text())
    index = TextIndex(out_dir / "fts", create=True)
    t0 = time.perf_counter()
    writer = index.writer(threads=1)
    for i in range(0, len(titles), 100_000):
        writer.add_titles(titles[i : i + 100_000])
    writer.commit()
    writer.close()
    index.reload()
    index_s = time.perf_counter() - t0
    store = _FtsStore(index, titles, loaded["aliases"])
    del titles, loaded
    linker = QuestionEntityLinker(store, max_titles=0)  # type: ignore[arg-type]
    res: dict[str, Any] = {"index_s": round(index_s, 1)}
    res.update(_time_links(linker, [q["question"] for q in questions], passes=1))
    return res


# --------------------------------------------------------------------------- precision

_PAREN = re.compile(r"\s*\([^()]*\)$")


def _named(question: str, title: str) -> bool:
    name = _PAREN.sub("", title).strip() or title
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", question, re.I) is not None


def precision(
    questions: list[dict[str, Any]],
    links: list[list[str]],
    common: set[str],
    aliases_of: dict[str, list[str]],
    examples: int = 12,
) -> dict[str, Any]:
    """Recall / links per question / junk share per question set (rule in the docstring)."""
    per: dict[str, dict[str, Any]] = {}
    junk_examples: list[dict[str, str]] = []
    common_examples: list[dict[str, str]] = []
    named_examples: list[dict[str, str]] = []
    for q, found in zip(questions, links, strict=True):
        s = per.setdefault(
            q["set"],
            {
                "questions": 0,
                "hit": 0,
                "links": 0,
                "gold": 0,
                "common": 0,
                "named": 0,
                "alias_only": 0,
                "questions_with_common": 0,
                "questions_naming_common": 0,
                "no_link": 0,
            },
        )
        s["questions"] += 1
        gold = set(q["gold"])
        s["hit"] += bool(gold & set(found))
        s["no_link"] += not found
        s["links"] += len(found)
        has_common = False
        for title in found:
            if title in gold:
                s["gold"] += 1
            elif title in common:
                s["common"] += 1
                has_common = True
                common_examples.append({"question": q["question"], "linked": title})
            elif _named(q["question"], title):
                s["named"] += 1
                named_examples.append({"question": q["question"], "linked": title})
            else:
                s["alias_only"] += 1
                via = [a for a in aliases_of.get(title, []) if _named(q["question"], a)]
                junk_examples.append(
                    {"question": q["question"], "linked": title, "via": ", ".join(via) or "?"}
                )
        s["questions_with_common"] += has_common
        s["questions_naming_common"] += any(
            re.search(rf"(?<!\w){re.escape(t)}(?!\w)", q["question"]) for t in common
        )
    out: dict[str, Any] = {}
    for name, s in per.items():
        n, links_n = s["questions"], max(1, s["links"])
        out[name] = {
            **s,
            "recall": round(s["hit"] / n, 3),
            "links_per_q": round(s["links"] / n, 2),
            "junk_share": round((s["common"] + s["alias_only"]) / links_n, 3),
            "named_nongold_share": round(s["named"] / links_n, 3),
        }
    step = max(1, len(junk_examples) // examples)
    out["junk_examples"] = junk_examples[::step][:examples]
    out["common_examples"] = common_examples[:examples]
    step = max(1, len(named_examples) // examples)
    out["named_examples"] = named_examples[::step][:examples]
    return out


# --------------------------------------------------------------------------- driver


def _run_worker(worker: str, timeout: float = 1800, **kwargs: Any) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter; its last stdout line is the JSON result."""
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        worker,
        "--worker-args",
        json.dumps(kwargs),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"{worker} worker failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _fmt_gib(v: float) -> str:
    return f"{v:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--sizes",
        default="0,100000,1000000,5000000",
        help="title-set sizes (0: only the gold and common-word titles, a baseline)",
    )
    parser.add_argument(
        "--persist-sizes", default="100000,1000000,5000000", help="sizes to save and load"
    )
    parser.add_argument(
        "--pickle-sizes",
        default="100000,1000000",
        help="persist sizes where the linker's own save runs next to the titles (memory)",
    )
    parser.add_argument(
        "--fts-sizes", default="100000,1000000,5000000", help="sizes to run the FTS fallback on"
    )
    parser.add_argument("--reuse", action="store_true", help="reuse title sets in --workdir")
    parser.add_argument("--precision-size", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None, help="questions per set (all)")
    parser.add_argument("--workdir", default="/tmp/bench_linker")
    parser.add_argument("--keep", action="store_true", help="keep title sets and saved files")
    parser.add_argument("--json", help="write all results to this file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker-args", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        w = json.loads(args.worker_args)
        if args.worker == "gen":
            res = worker_gen(w["size"], w["seed"], Path(w["out"]), Path(w["questions"]))
        elif args.worker == "build":
            res = worker_build(
                Path(w["titles"]),
                Path(w["questions"]),
                Path(w["out_dir"]),
                w["persist"],
                w["pickle_ok"],
            )
        elif args.worker == "repickle":
            res = worker_repickle(Path(w["out_dir"]))
        elif args.worker == "fts":
            res = worker_fts(Path(w["titles"]), Path(w["questions"]), Path(w["out_dir"]))
        else:
            res = worker_load(
                w["kind"], Path(w["out_dir"]), Path(w["questions"]), Path(w["links"]), w["meta"]
            )
        print(json.dumps(res))
        return 0

    def sizes_of(text: str) -> list[int]:
        return [int(s) for s in text.split(",") if s]

    pickle_sizes = set(sizes_of(args.pickle_sizes))
    fts_sizes = set(sizes_of(args.fts_sizes))
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    questions = load_questions(args.limit)
    qpath = work / "questions.json"
    qpath.write_text(json.dumps(questions))
    results: dict[str, Any] = {"questions": len(questions), "sizes": {}}

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    try:
        for size in sizes_of(args.sizes):
            sdir = work / str(size)
            sdir.mkdir(exist_ok=True)
            tpath = sdir / "titles.pkl"
            if args.reuse and tpath.exists():
                gen: dict[str, Any] = {"reused": True}
            else:
                say(f"[{size}] generating titles")
                gen = _run_worker(
                    "gen", size=size, seed=args.seed, out=str(tpath), questions=str(qpath)
                )
            say(f"[{size}] building: {gen}")
            persist = size in sizes_of(args.persist_sizes)
            built = _run_worker(
                "build",
                titles=str(tpath),
                out_dir=str(sdir),
                persist=persist,
                pickle_ok=size in pickle_sizes,
                questions=str(qpath),
            )
            links = built.pop("links")
            lpath = sdir / "links.json"
            lpath.write_text(json.dumps(links))
            row: dict[str, Any] = {"gen": gen, **built}
            if persist and "linker" not in row["persist"]:
                say(f"[{size}] pickling the trie alone")
                row["persist"]["pickle"] = _run_worker("repickle", out_dir=str(sdir))
            for kind in row.get("persist", {}):
                say(f"[{size}] loading {kind}")
                row["persist"][kind].update(
                    _run_worker(
                        "load",
                        kind=kind,
                        out_dir=str(sdir),
                        links=str(lpath),
                        questions=str(qpath),
                        meta={"titles": built["titles"], "aliases": built["aliases"]},
                    )
                )
            for name in ("linker.pkl", "trie.ac", "trie.pkl", "trie.state"):
                (sdir / name).unlink(missing_ok=True)
            data = _load_titles(tpath)
            common = set(data["common"])
            fts: dict[str, Any] | None = None
            if size in fts_sizes:
                say(f"[{size}] full-text fallback")
                fts = _run_worker("fts", titles=str(tpath), out_dir=str(sdir), questions=str(qpath))
                shutil.rmtree(sdir / "fts", ignore_errors=True)
            aliases_of: dict[str, list[str]] = {}
            linked = {t for found in links for t in found}
            for alias, target in data["aliases"]:
                if target in linked:
                    aliases_of.setdefault(target, []).append(alias)
            del data
            row["precision"] = precision(questions, links, common, aliases_of)
            if fts is not None:
                fts_links = fts.pop("links")
                row["fts"] = fts
                row["fts"]["precision"] = precision(questions, fts_links, common, {})
            results["sizes"][str(size)] = row
            if args.json:  # after every size, so a later failure keeps what was measured
                Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
            say(f"[{size}] done: build {built['build_s']} s")
            if not args.keep:
                shutil.rmtree(sdir, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    _print_tables(results, args.precision_size)
    return 0


def _print_tables(results: dict[str, Any], precision_size: int) -> None:
    print(
        f"{'titles':>9} {'aliases':>9} {'forms':>9} {'build s':>8} {'peak GiB':>8} "
        f"{'RSS GiB':>8} {'titles GiB':>10} {'p50 ms':>7} {'p95 ms':>7}"
    )
    for row in results["sizes"].values():
        print(
            f"{row['titles']:>9} {row['aliases']:>9} {row['forms']:>9} {row['build_s']:>8} "
            f"{_fmt_gib(row['build_peak_gib']):>8} {_fmt_gib(row['build_rss_gib']):>8} "
            f"{_fmt_gib(row['titles_rss_gib']):>10} {row['link_ms_p50']:>7} "
            f"{row['link_ms_p95']:>7}"
        )
    print()
    print(
        f"{'titles':>9} {'format':>7} {'MB':>7} {'save s':>7} {'save pk':>7} {'load s':>7} "
        f"{'load pk':>7} {'RSS GiB':>7} {'same':>5}"
    )
    for row in results["sizes"].values():
        for kind, p in row.get("persist", {}).items():
            print(
                f"{row['titles']:>9} {kind:>7} {p['bytes'] / 1e6:>7.0f} {p['save_s']:>7} "
                f"{_fmt_gib(p['save_peak_gib']):>7} {p['load_s']:>7} "
                f"{_fmt_gib(p['load_peak_gib']):>7} {_fmt_gib(p['load_rss_gib']):>7} "
                f"{p['identical']!s:>5}"
            )
    print()
    print(f"{'titles':>9} {'FTS index s':>11} {'p50 ms':>7} {'p95 ms':>7}  (full-text fallback)")
    for row in results["sizes"].values():
        if "fts" in row:
            f = row["fts"]
            print(
                f"{row['titles']:>9} {f['index_s']:>11} {f['link_ms_p50']:>7} {f['link_ms_p95']:>7}"
            )
    print()
    print(
        f"{'titles':>9} {'linker':>9} {'set':>8} {'n':>4} {'recall':>6} {'links/q':>7} "
        f"{'junk':>6} {'common':>6} {'alias':>6} {'named':>6} {'q names':>7} {'q links':>7}"
    )
    for row in results["sizes"].values():
        kinds = [("automaton", row["precision"])]
        if "fts" in row:
            kinds.append(("fts", row["fts"]["precision"]))
        for how, prec in kinds:
            for name, s in prec.items():
                if name.endswith("_examples"):
                    continue
                print(
                    f"{row['titles']:>9} {how:>9} {name:>8} {s['questions']:>4} "
                    f"{s['recall']:>6} {s['links_per_q']:>7} {s['junk_share']:>6} "
                    f"{s['common']:>6} {s['alias_only']:>6} {s['named']:>6} "
                    f"{s['questions_naming_common']:>7} {s['questions_with_common']:>7}"
                )
    for size, row in results["sizes"].items():
        if int(size) == precision_size or len(results["sizes"]) == 1:
            print(f"\njunk links at {size} titles (question -> linked title [via alias]):")
            for ex in row["precision"]["junk_examples"]:
                print(f"  {ex['question'][:90]!r} -> {ex['linked']!r} [{ex['via']}]")
            for ex in row["precision"]["common_examples"]:
                print(f"  {ex['question'][:90]!r} -> common {ex['linked']!r}")
            print(f"named, not gold, at {size} titles:")
            for ex in row["precision"]["named_examples"]:
                print(f"  {ex['question'][:90]!r} -> {ex['linked']!r}")


if __name__ == "__main__":
    sys.exit(main())

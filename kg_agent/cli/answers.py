"""``kg-agent answers``: can a person trust the answers? Plain questions, per kind."""

from __future__ import annotations

import platform
import shlex
import sys
from typing import Any

import click

from kg_agent.cli.common import db_option, echo_json, library_errors


@click.command("answers")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False, path_type=str))
@db_option
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=str),
    default="answers_out",
    show_default=True,
    help="Folder for answers.json (every question) and answers.md (the tables).",
)
@click.option(
    "--cv",
    "cv",
    type=click.IntRange(min=2),
    help="Article-disjoint K-fold cross-validation of the fact ranker, the grounding model, "
    "the sentence ranker and the span ranker: each question answered by models fitted "
    "without its articles; the in-sample score beside it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@library_errors
def answers(
    questions: str,
    db_path: str,
    limit: int | None,
    cv: int | None,
    out_dir: str,
    as_json: bool,
    quiet: bool,
) -> None:
    """Score the answers a person reads on QUESTIONS, a plain question set, per kind.

    QUESTIONS is a JSON list of {"question", "kind", "answerable", "answers"} (the
    bundled one: tests/questions/enwiki_sample.json, over the English sample dump).
    Offline answers: for each kind, how often the short answer is right, how often
    one is shown in bold and how often a shown one is right, how often the answer
    is "not in the graph", how often the answer text holds the gold (yes/no
    questions left out: "yes" is no words of a text); the same per way the short
    answer was found (a fact, the span model, two values compared, …); and the
    issue's goals, met or not.

    With --cv K the questions are split by article into K folds (questions about one
    article stay in one fold); the fact ranker, the grounding model, the sentence
    ranker and the span ranker are fitted on the other folds' questions for each, and
    the tables are of those held-out answers, with the in-sample figures beside them so
    the gap shows.
    It reads the questions three times.
    """
    from kg_agent.agent import KnowledgeGraphAgent
    from kg_agent.evaluation.trust import (
        Reply,
        load_plain,
        run_plain,
        summarise_plain,
        write_plain_report,
    )
    from kg_agent.progress import Progress

    plain = load_plain(questions)[:limit] if limit else load_plain(questions)
    passes = 3 if cv else 1
    bar = Progress("answers", total=passes * len(plain), unit="questions", enabled=not quiet)
    extra: dict[str, Any] = {}
    lines: list[str] = []
    with KnowledgeGraphAgent(db_path, offline=True) as agent:

        def ask(text: str) -> Reply:
            r = agent.query(text)
            stages = (t for t in r.trace if t.get("stage") == "synthesis")
            found_by = next((t.get("found_by") for t in stages), "")
            shown = r.short_answer is not None
            return Reply(
                r.answer_candidate, shown, r.confidence, not r.answerable, r.answer, found_by or ""
            )

        if cv:
            from kg_agent.evaluation.fact_training import cross_validate

            done = cross_validate(agent, plain, ask, k=cv, progress=bar.set)
            results = done.held_out
            in_sample = summarise_plain(done.in_sample)
            extra = {"cv": {"k": cv, "folds": done.folds, "in_sample": in_sample}}
            lines = _cv_lines(cv, summarise_plain(results), in_sample, done.folds)
        else:
            results = run_plain(plain, ask, progress=lambda done: bar.set(done))
    bar.close()
    summary = summarise_plain(results)
    command = "kg-agent " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    machine = f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}"
    json_path, md_path = write_plain_report(
        results,
        summary,
        out_dir,
        command=command,
        machine=machine,
        questions_path=questions,
        extra=extra,
        extra_lines=lines,
    )
    if as_json:
        echo_json(summary)
        return
    click.echo(md_path.read_text(encoding="utf-8"))
    click.echo(f"Wrote {json_path}, {md_path}")


def _cv_lines(
    k: int, held: dict[str, Any], in_sample: dict[str, Any], folds: dict[str, int]
) -> list[str]:
    """The held-out and in-sample figures side by side (markdown)."""
    sizes = [sum(1 for f in folds.values() if f == i) for i in range(k)]
    lines = [
        "",
        f"## Cross-validation: {k} article-disjoint folds",
        "",
        f"The tables above are held out: each question was answered by the fact ranker, "
        f"the grounding model, the sentence ranker and the span ranker fitted on the other "
        f"folds' articles "
        f"(questions per fold: "
        f"{', '.join(map(str, sizes))}).",
        "",
        "| figure | held out | in sample | gap |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name in held["goals"]:
        a, b = held["overall"][name], in_sample["overall"][name]
        gap = "—" if a is None or b is None else f"{b - a:+.1f}"
        lines.append(f"| {name} | {a} | {b} | {gap} |")
    return lines

"""Dataset readers on the real dev files in ../shared/data/multihop, and on bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kg_agent.evaluation.datasets import detect_dataset, load_dataset, resolve_dataset
from kg_agent.exceptions import InvalidArgumentError, SourceError

TWOWIKI = "multihop/2wikimultihopqa/questions.dev.json"
HOTPOT = "multihop/hotpotqa/hotpot_dev_distractor.dev.json"
MUSIQUE = "multihop/musique/musique_ans.dev.jsonl"


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(exc.value)
    assert "\n" not in text and text.strip() == text, text
    return text


# -- the real files ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "name", "count"),
    [
        ("2wiki", "2wikimultihopqa", 300),
        ("2WikiMultihopQA", "2wikimultihopqa", 300),
        ("hotpotqa", "hotpotqa", 110),
        ("hotpot", "hotpotqa", 110),
        ("musique", "musique", 60),
    ],
)
def test_counts_by_name(shared_data_dir: Path, spec: str, name: str, count: int) -> None:
    ds = load_dataset(spec, data_dir=shared_data_dir)
    assert (ds.name, len(ds.questions)) == (name, count)
    assert len({q.qid for q in ds.questions}) == count
    assert all(q.question and q.answer and q.gold_titles for q in ds.questions)


def test_2wiki_first_record_and_separate_corpus(shared_data_dir: Path) -> None:
    ds = load_dataset("2wiki", data_dir=shared_data_dir)
    assert ds.questions_path == shared_data_dir / TWOWIKI
    assert ds.corpus_path == shared_data_dir / "multihop/2wikimultihopqa/corpus.json"
    q = ds.questions[0]
    assert q.qid == "97ce0ec00baf11ebab90acde48001122"
    assert q.question == "Who is Henriette Of France (1727–1752)'s maternal grandfather?"
    assert q.gold_titles == ("Henriette of France (1727–1752)", "Marie Leszczyńska")
    assert q.answer == "Stanisław Leszczyński"
    assert "Stanislas Leszczynski" in q.aliases
    assert q.answers[0] == q.answer and len(q.answers) == len(q.aliases) + 1


def test_hotpotqa_first_record_pools_its_own_context(shared_data_dir: Path) -> None:
    ds = load_dataset("hotpotqa", data_dir=shared_data_dir)
    assert ds.corpus_path == ds.questions_path == shared_data_dir / HOTPOT
    q = ds.questions[0]
    assert q.qid == "5a8268aa55429940e5e1a8aa"
    # supporting_facts are [title, sentence] pairs: titles once each, in order
    assert list(q.gold_titles) == ["Hugo Rodríguez Romero", "FC Cartagena"]
    assert (q.answer, q.aliases, q.qtype) == ("Murcia", (), "bridge")


def test_hotpotqa_gold_titles_are_distinct(shared_data_dir: Path) -> None:
    records = json.loads((shared_data_dir / HOTPOT).read_text(encoding="utf-8"))
    ds = load_dataset("hotpotqa", data_dir=shared_data_dir)
    for rec, q in zip(records, ds.questions, strict=True):
        assert q.gold_titles == tuple(dict.fromkeys(t for t, _ in rec["supporting_facts"]))


def test_musique_first_record_takes_supporting_paragraphs(shared_data_dir: Path) -> None:
    ds = load_dataset("musique", data_dir=shared_data_dir)
    assert ds.corpus_path == ds.questions_path == shared_data_dir / MUSIQUE
    q = ds.questions[0]
    assert q.qid == "2hop__14095_15463"
    assert list(q.gold_titles) == ["Macintosh", "Dell"]
    assert (q.answer, q.aliases, q.qtype) == ("Hewlett Packard", ("Hewlett-Packard",), "2hop")


def test_limit_keeps_the_first_questions(shared_data_dir: Path) -> None:
    full = load_dataset("musique", data_dir=shared_data_dir)
    five = load_dataset("musique", data_dir=shared_data_dir, limit=5)
    assert five.questions == full.questions[:5]
    assert len(load_dataset("musique", data_dir=shared_data_dir, limit=1000).questions) == 60
    with pytest.raises(InvalidArgumentError, match="limit"):
        load_dataset("musique", data_dir=shared_data_dir, limit=0)


# -- detection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "name"),
    [(TWOWIKI, "2wikimultihopqa"), (HOTPOT, "hotpotqa"), (MUSIQUE, "musique")],
)
def test_detected_from_keys_whatever_the_file_name(
    shared_data_dir: Path, tmp_path: Path, rel: str, name: str
) -> None:
    assert detect_dataset(shared_data_dir / rel) == name
    renamed = tmp_path / "mine.data"
    shutil.copyfile(shared_data_dir / rel, renamed)
    assert detect_dataset(renamed) == name
    corpus = shared_data_dir / "multihop/2wikimultihopqa/corpus.json"
    ds = load_dataset(renamed, corpus=corpus if name == "2wikimultihopqa" else None)
    assert ds.name == name and ds.questions_path == renamed


def _write(path: Path, records: object, *, lines: bool = False) -> Path:
    if lines:
        assert isinstance(records, list)
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_hand_made_files_of_each_layout(tmp_path: Path) -> None:
    two = _write(
        tmp_path / "two.json",
        [{"id": "a", "question": "Q?", "answer": "A", "supporting_facts": ["X", "Y", "X"]}],
    )
    (tmp_path / "corpus.json").write_text("[]", encoding="utf-8")
    ds = load_dataset(two)
    assert ds.name == "2wikimultihopqa" and ds.corpus_path == tmp_path / "corpus.json"
    assert ds.questions[0].gold_titles == ("X", "Y")

    hot = _write(
        tmp_path / "hot.json",
        [{"_id": "h", "question": "Q?", "answer": "yes", "type": "comparison",
          "supporting_facts": [["P", 0], ["P", 2], ["Q", 1]], "context": []}],
    )  # fmt: skip
    q = load_dataset(hot).questions[0]
    assert (q.qid, q.gold_titles, q.qtype) == ("h", ("P", "Q"), "comparison")

    mus = _write(
        tmp_path / "mus.jsonl",
        [{"id": "3hop1__1_2_3", "question": "Q?", "answer": "A", "answer_aliases": ["B", " "],
          "paragraphs": [{"title": "T1", "is_supporting": True},
                         {"title": "T2", "is_supporting": False},
                         {"title": "T3", "is_supporting": True}]}],
        lines=True,
    )  # fmt: skip
    q = load_dataset(mus).questions[0]
    assert (q.gold_titles, q.aliases, q.qtype) == (("T1", "T3"), ("B",), "3hop1")


def test_name_forces_a_layout(tmp_path: Path) -> None:
    hot = _write(
        tmp_path / "hot.json",
        [{"_id": "h", "question": "Q?", "answer": "A",
          "supporting_facts": [["P", 0]], "context": []}],
    )  # fmt: skip
    assert load_dataset(hot, name="hotpot").name == "hotpotqa"
    with pytest.raises(InvalidArgumentError, match="unknown dataset"):
        load_dataset(hot, name="squad")


# -- bad input ---------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as exc:
        load_dataset(tmp_path / "nope.json")
    assert "no such file" in _one_line(exc)


def test_unknown_name_is_a_missing_file() -> None:
    with pytest.raises(SourceError) as exc:
        load_dataset("squad")
    assert "not a dataset name" in _one_line(exc)


def test_dataset_name_without_the_data(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as exc:
        resolve_dataset("musique", tmp_path)
    msg = _one_line(exc)
    assert "not found" in msg and "--data-dir" in msg


def test_not_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"question": "Q?", ', encoding="utf-8")
    with pytest.raises(SourceError) as exc:
        load_dataset(bad)
    assert "not valid JSON" in _one_line(exc)


def test_not_json_at_all(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("question: who?\n", encoding="utf-8")
    with pytest.raises(SourceError) as exc:
        load_dataset(bad)
    assert "no question records" in _one_line(exc)


def test_broken_later_json_line(tmp_path: Path) -> None:
    rec = {"id": "2hop__1", "question": "Q?", "answer": "A",
           "paragraphs": [{"title": "T", "is_supporting": True}]}  # fmt: skip
    bad = tmp_path / "mus.jsonl"
    bad.write_text(json.dumps(rec) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(SourceError) as exc:
        load_dataset(bad)
    assert "not valid JSON" in _one_line(exc)


def test_unknown_layout(tmp_path: Path) -> None:
    bad = _write(tmp_path / "squad.json", [{"question": "Q?", "answer": "A", "title": "T"}])
    with pytest.raises(SourceError) as exc:
        load_dataset(bad)
    assert "unknown question format" in _one_line(exc)


def test_record_without_answer(tmp_path: Path) -> None:
    bad = _write(tmp_path / "two.json", [{"question": "Q?", "supporting_facts": ["X"]}])
    with pytest.raises(SourceError) as exc:
        load_dataset(bad)
    assert "record 1 has no 'answer'" in _one_line(exc)


def test_record_without_gold_titles(tmp_path: Path) -> None:
    bad = _write(
        tmp_path / "mus.jsonl",
        [{"id": "m", "question": "Q?", "answer": "A",
          "paragraphs": [{"title": "T", "is_supporting": False}]}],
        lines=True,
    )  # fmt: skip
    with pytest.raises(SourceError) as exc:
        load_dataset(bad)
    assert "no gold supporting titles" in _one_line(exc)


def test_2wiki_questions_need_a_corpus(tmp_path: Path) -> None:
    two = _write(
        tmp_path / "two.json",
        [{"id": "a", "question": "Q?", "answer": "A", "supporting_facts": ["X"]}],
    )
    with pytest.raises(SourceError) as exc:
        load_dataset(two)
    assert "--corpus" in _one_line(exc)
    with pytest.raises(SourceError):
        load_dataset(two, corpus=tmp_path / "missing.json")

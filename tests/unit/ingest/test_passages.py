"""Passage-corpus readers: hand-made files a person can check, then the real benchmark files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_agent.exceptions import SourceError, UnknownFormatError
from kg_agent.ingest import passages
from kg_agent.ingest.passages import detect_passage_format, iter_passage_pages, iter_passages
from kg_agent.ingest.records import ParsedPage


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _texts(page: ParsedPage) -> list[str]:
    return [s.text for s in page.sections]


# --------------------------------------------------------------------------- hand-made


def test_passages_jsonl_pages_are_single_lead_sections(tmp_path: Path) -> None:
    f = _write(
        tmp_path / "c.jsonl",
        '{"title": "Ada Lovelace", "text": "Ada was a mathematician."}\n'
        "\n"
        '{"title": "Charles Babbage", "text": "  Babbage designed engines.  "}\n',
    )
    assert detect_passage_format(f) == "passages"
    pages = list(iter_passage_pages(f))
    assert [p.title for p in pages] == ["Ada Lovelace", "Charles Babbage"]
    for p in pages:
        assert p.infer_mentions is True
        assert p.redirect_to is None and p.page_id is None
        (section,) = p.sections
        assert (section.heading, section.heading_path, section.level, section.links) == (
            "",
            (),
            1,
            (),
        )
    assert _texts(pages[1]) == ["Babbage designed engines."]


def test_titles_kept_exactly_but_stripped(tmp_path: Path) -> None:
    # Recall is scored on exact titles: no capitalisation, no underscore folding.
    f = _write(
        tmp_path / "c.json",
        json.dumps(
            [
                {"title": "  iPod_classic ", "text": "x"},
                {"title": "trieste mia!", "text": "y"},
            ]
        ),
    )
    assert [p.title for p in iter_passage_pages(f)] == ["iPod_classic", "trieste mia!"]


def test_dedup_same_pair_once_and_same_title_becomes_sections(tmp_path: Path) -> None:
    f = _write(
        tmp_path / "c.json",
        json.dumps(
            [
                {"title": "A", "text": "first"},
                {"title": "B", "text": "only"},
                {"title": "A", "text": "first"},
                {"title": "A", "text": "second"},
                {"title": "B", "text": "only"},
                {"title": "A", "text": "first"},
                {"title": "C", "text": "   "},
            ]
        ),
    )
    pages = {p.title: p for p in iter_passage_pages(f)}
    assert sorted(pages) == ["A", "B"]  # C has no text
    assert _texts(pages["A"]) == ["first", "second"]
    assert _texts(pages["B"]) == ["only"]


def test_limit_caps_pages(tmp_path: Path) -> None:
    f = _write(
        tmp_path / "c.json",
        json.dumps([{"title": f"T{i}", "text": "x"} for i in range(10)]),
    )
    assert [p.title for p in iter_passage_pages(f, limit=3)] == ["T0", "T1", "T2"]
    assert list(iter_passage_pages(f, limit=0)) == []


def test_hotpotqa_layout_pools_context_and_joins_sentences(tmp_path: Path) -> None:
    records = [
        {
            "_id": "q1",
            "question": "?",
            "supporting_facts": [["Paris", 0]],
            "context": [
                ["Paris", ["Paris is a city.", " It is in France."]],
                ["Lyon", ["Lyon is a city."]],
            ],
        },
        {
            "_id": "q2",
            "question": "?",
            "supporting_facts": [],
            "context": [["Paris", ["Paris is a city.", " It is in France."]], ["Empty", []]],
        },
    ]
    f = _write(tmp_path / "h.json", json.dumps(records))
    assert detect_passage_format(f) == "hotpotqa"
    pages = list(iter_passage_pages(f))
    assert [(p.title, _texts(p)) for p in pages] == [
        ("Paris", ["Paris is a city. It is in France."]),
        ("Lyon", ["Lyon is a city."]),
    ]


def test_musique_layout_pools_paragraphs(tmp_path: Path) -> None:
    def rec(*paras: tuple[str, str]) -> str:
        return json.dumps(
            {
                "id": "x",
                "paragraphs": [
                    {"idx": i, "title": t, "paragraph_text": s, "is_supporting": False}
                    for i, (t, s) in enumerate(paras)
                ],
            }
        )

    f = _write(
        tmp_path / "m.jsonl",
        rec(("Dell", "Dell one."), ("Subaru", "Subaru."))
        + "\n"
        + rec(("Dell", "Dell two."), ("Dell", "Dell one."))
        + "\n",
    )
    assert detect_passage_format(f) == "musique"
    pages = {p.title: _texts(p) for p in iter_passage_pages(f)}
    assert pages == {"Dell": ["Dell one.", "Dell two."], "Subaru": ["Subaru."]}


def test_incremental_json_list_parser_is_chunk_independent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [{"title": f"T{i}", "text": "é" * (i % 7) + f" text {i}\n[]{{}}"} for i in range(50)]
    f = _write(tmp_path / "c.json", json.dumps(rows, indent=2))
    want = [(p.title, _texts(p)) for p in iter_passage_pages(f)]
    assert len(want) == 50
    for chunk in (1, 3, 64):
        monkeypatch.setattr(passages, "_CHUNK", chunk)
        assert [(p.title, _texts(p)) for p in iter_passage_pages(f)] == want


# --------------------------------------------------------------------------- faults


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"nope\.json: no such file"):
        list(iter_passage_pages(tmp_path / "nope.json"))


def test_invalid_json_list_names_line_and_column(tmp_path: Path) -> None:
    f = _write(tmp_path / "bad.json", '[{"title": "A", "text": "x"},\n{"title": "B" "text": "y"}]')
    with pytest.raises(SourceError, match=r"bad\.json \(line 2, column 15\): invalid JSON"):
        list(iter_passage_pages(f, "passages"))


def test_invalid_jsonl_names_line(tmp_path: Path) -> None:
    f = _write(tmp_path / "bad.jsonl", '{"title": "A", "text": "x"}\n{"title": oops}\n')
    with pytest.raises(SourceError, match=r"bad\.jsonl \(line 2, column 11\): invalid JSON"):
        list(iter_passage_pages(f))


def test_truncated_json_list(tmp_path: Path) -> None:
    f = _write(tmp_path / "cut.json", '[{"title": "A", "text": "x"}, {"title": "B", "te')
    with pytest.raises(SourceError, match=r"cut\.json .*invalid JSON"):
        list(iter_passage_pages(f, "passages"))


def test_missing_key_names_record_index(tmp_path: Path) -> None:
    f = _write(
        tmp_path / "c.json",
        json.dumps([{"title": "A", "text": "x"}, {"title": "B"}]),
    )
    with pytest.raises(SourceError, match=r"record 1, line 1, .*missing key 'text'"):
        list(iter_passage_pages(f))


def test_missing_key_in_musique_paragraph(tmp_path: Path) -> None:
    f = _write(
        tmp_path / "m.jsonl",
        json.dumps({"id": "x", "paragraphs": [{"title": "A"}]}) + "\n",
    )
    with pytest.raises(
        SourceError, match=r"line 1, paragraphs\[0\]\): missing key 'paragraph_text'"
    ):
        list(iter_passage_pages(f))


def test_wrong_types(tmp_path: Path) -> None:
    f = _write(tmp_path / "c.json", json.dumps([{"title": 5, "text": "x"}]))
    with pytest.raises(SourceError, match="title must be a string"):
        list(iter_passage_pages(f))
    g = _write(tmp_path / "d.json", json.dumps([{"title": "", "text": "x"}]))
    with pytest.raises(SourceError, match="empty title"):
        list(iter_passage_pages(g))


def test_unknown_format_name(tmp_path: Path) -> None:
    f = _write(tmp_path / "c.json", json.dumps([{"title": "A", "text": "x"}]))
    with pytest.raises(UnknownFormatError, match="unknown passage format 'wiki'"):
        list(iter_passage_pages(f, "wiki"))


def test_unrecognised_records(tmp_path: Path) -> None:
    f = _write(tmp_path / "q.json", json.dumps([{"id": 1, "question": "?"}]))
    with pytest.raises(UnknownFormatError, match=r"q\.json \(record 0.*keys: \['id', 'question'\]"):
        detect_passage_format(f)
    g = _write(tmp_path / "x.json", "<mediawiki/>")
    with pytest.raises(UnknownFormatError, match="expected a JSON list"):
        detect_passage_format(g)
    h = _write(tmp_path / "e.json", "  \n")
    with pytest.raises(SourceError, match="empty file"):
        detect_passage_format(h)
    k = _write(tmp_path / "n.json", "[]")
    with pytest.raises(UnknownFormatError, match="no records"):
        detect_passage_format(k)


# --------------------------------------------------------------------------- real files


@pytest.fixture(scope="module")
def multihop(shared_data_dir: Path) -> Path:
    return shared_data_dir / "multihop"


def test_2wiki_corpus(multihop: Path) -> None:
    corpus = multihop / "2wikimultihopqa" / "corpus.json"
    assert detect_passage_format(corpus) == "passages"
    pages = list(iter_passage_pages(corpus))
    assert len(pages) == 6119
    titles = [p.title for p in pages]
    assert len(set(titles)) == 6119
    assert all(len(p.sections) == 1 and p.infer_mentions for p in pages)
    assert titles[0] == "Teutberga"
    assert _texts(pages[0]) == [
        "Teutberga( died 11 November 875) was a queen of Lotharingia by marriage to Lothair "
        "II. She was a daughter of Bosonid Boso the Elder and sister of Hucbert, the lay- "
        "abbot of St. Maurice's Abbey."
    ]
    # Every gold title of the questions is a corpus title, byte for byte.
    questions = json.loads((multihop / "2wikimultihopqa" / "questions.dev.json").read_text())
    gold = {t for q in questions for t in q["supporting_facts"]}
    assert len(gold) > 500 and gold <= set(titles)


def test_hotpotqa_pool(multihop: Path) -> None:
    path = multihop / "hotpotqa" / "hotpot_dev_distractor.dev.json"
    assert detect_passage_format(path) == "hotpotqa"
    # 110 questions x 10 context paragraphs = 1,100, of which 4 repeat exactly.
    assert sum(1 for _ in iter_passages(path)) == 1100
    pages = {p.title: p for p in iter_passage_pages(path)}
    assert len(pages) == 1096
    assert all(len(p.sections) == 1 for p in pages.values())
    assert _texts(pages["Andalusia"])[0].startswith(
        'Andalusia ( ; Spanish: "Andalucía" ] ) is an autonomous community in southern '
        "Spain. It is the most populated and the second largest"
    )
    records = json.loads(path.read_text())
    gold = {t for r in records for t, _ in r["supporting_facts"]}
    assert gold <= set(pages)


def test_musique_pool(multihop: Path) -> None:
    path = multihop / "musique" / "musique_ans.dev.jsonl"
    assert detect_passage_format(path) == "musique"
    assert sum(1 for _ in iter_passages(path)) == 1200  # 60 questions x 20 paragraphs
    pages = {p.title: p for p in iter_passage_pages(path)}
    assert len(pages) == 885
    assert sum(len(p.sections) for p in pages.values()) == 1023  # distinct paragraphs
    multi = [p for p in pages.values() if len(p.sections) > 1]
    assert len(multi) == 79
    idol = _texts(pages["American Idol"])
    assert len(idol) == 7 and len(set(idol)) == 7
    assert idol[0].startswith("The growth continued into the next season")
    handmaid = _texts(pages["The Handmaid's Tale"])
    assert len(handmaid) == 6 and len(set(handmaid)) == 6
    with path.open() as fh:
        gold = {
            p["title"] for line in fh for p in json.loads(line)["paragraphs"] if p["is_supporting"]
        }
    assert gold <= set(pages)

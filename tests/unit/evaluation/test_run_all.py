"""The orchestration behind ``kg-agent eval``: paths, argument checks, outputs (no graph)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_agent.evaluation import (
    DatasetRun,
    EvalDataset,
    ModeSummary,
    db_path_for,
    default_db_dir,
    evaluate,
    load_datasets,
    write_outputs,
)
from kg_agent.exceptions import InvalidArgumentError, KGAgentError


def _dataset(name: str) -> EvalDataset:
    return EvalDataset(name, Path("q.json"), Path("c.json"), ())


def test_default_db_dir_follows_the_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KG_AGENT_CACHE_DIR", str(tmp_path))
    assert default_db_dir() == tmp_path / "eval"
    assert db_path_for(_dataset("musique")) == tmp_path / "eval" / "musique.kuzu"
    monkeypatch.delenv("KG_AGENT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_db_dir() == tmp_path / "xdg" / "kg-agent" / "eval"


def test_db_path_given_or_in_a_folder(tmp_path: Path) -> None:
    ds = _dataset("hotpotqa")
    assert db_path_for(ds, db=tmp_path / "mine.kuzu") == tmp_path / "mine.kuzu"
    assert db_path_for(ds, db_dir=tmp_path) == tmp_path / "hotpotqa.kuzu"


def test_load_datasets_reads_all_first_and_once(shared_data_dir: Path) -> None:
    got = load_datasets(["musique", "hotpot", "musique"], limit=2, data_dir=shared_data_dir)
    assert [(d.name, len(d.questions)) for d in got] == [("musique", 2), ("hotpotqa", 2)]
    with pytest.raises(InvalidArgumentError, match="--corpus"):
        load_datasets(["musique", "hotpotqa"], corpus="c.json", data_dir=shared_data_dir)
    with pytest.raises(InvalidArgumentError, match="no dataset"):
        load_datasets([])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"modes": "bm25,nope"}, "unknown mode"),
        ({"modes": []}, "no modes"),
        ({"db": "a.kuzu", "db_dir": "dbs"}, "not both"),
        ({"specs": ["nope.json"]}, "no such file"),
        ({"specs": ["musique", "hotpotqa"], "corpus": "c.json"}, "--corpus"),
    ],
)
def test_bad_arguments_fail_before_any_work(
    shared_data_dir: Path, tmp_path: Path, kwargs: dict[str, object], message: str
) -> None:
    args: dict[str, object] = {"specs": ["musique"], "modes": "bm25", **kwargs}
    specs = args.pop("specs")
    assert isinstance(specs, list)
    with pytest.raises(KGAgentError, match=message):
        evaluate(specs, command="t", data_dir=shared_data_dir, out_dir=tmp_path / "o", **args)  # type: ignore[arg-type]
    assert not (tmp_path / "o").exists()


def test_out_and_db_must_be_folders_for_several(shared_data_dir: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "f"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(InvalidArgumentError, match="is a file"):
        evaluate(["musique"], command="t", modes="bm25", data_dir=shared_data_dir, out_dir=a_file)
    with pytest.raises(InvalidArgumentError, match="names a folder"):
        evaluate(
            ["musique", "hotpotqa"],
            command="t",
            modes="bm25",
            db=a_file,
            data_dir=shared_data_dir,
            out_dir=tmp_path / "o",
        )


def test_write_outputs(tmp_path: Path) -> None:
    summary = ModeSummary("bm25", "BM25", 0, 50.0, 60.0, 40.0, 30.0, 1.0, 2.0)
    run = DatasetRun("musique", "q", "c", "db", 0, {"bm25": summary}, [])
    json_path, md_path, chart = write_outputs(
        [run], tmp_path / "out", command="kg-agent eval musique", machine="a machine", note="N"
    )
    assert (json_path.name, md_path.name) == ("eval.json", "eval.md")
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    assert (doc["command"], doc["machine"]) == ("kg-agent eval musique", "a machine")
    md = md_path.read_text(encoding="utf-8")
    assert "`kg-agent eval musique`" in md and "a machine" in md and "\nN\n" in md
    if chart is not None:
        assert chart.name == "recall_at_5.png" and "recall_at_5.png" in md

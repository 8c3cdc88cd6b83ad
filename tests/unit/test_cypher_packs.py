"""Cypher pack validation and parameter checking, without a database.

Each error test checks the message a person would read: the file, the line and
what to fix.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from kg_agent.cypher_packs import (
    CypherPack,
    CypherPackError,
    default_pack,
    default_pack_dir,
    load_pack,
    load_packs,
    parse_pack,
    run_query,
)
from kg_agent.exceptions import KGAgentError
from kg_agent.language.intent import structural_intent

ROOT = Path(__file__).resolve().parents[2]


def pack_text(cypher: str, params: str = "title: {type: string}", extra: str = "") -> str:
    """A one-query pack with the given Cypher and params block."""
    return textwrap.dedent(
        """\
        name: test_pack
        version: 1
        description: A pack for tests.
        queries:
          - name: q
            description: A query.
            params:
        {params}
            cypher: |
        {cypher}
            returns: [title]
        {extra}"""
    ).format(
        params=textwrap.indent(params, " " * 6),
        cypher=textwrap.indent(textwrap.dedent(cypher).strip(), " " * 6),
        extra=extra,
    )


def error(text: str) -> str:
    with pytest.raises(CypherPackError) as info:
        parse_pack(text, source="p.yaml")
    msg = str(info.value)
    assert "\n" not in msg, "errors are one line"
    return msg


class FakeStore:
    """Records what run_query passes to the store."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def query(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        self.calls.append((cypher, dict(params or {})))
        return [{"title": "X"}]


# ---------------------------------------------------------------------------- loading


def test_a_valid_pack_loads() -> None:
    pack = parse_pack(pack_text("MATCH (a:Article {title: $title}) RETURN a.title AS title"))
    assert isinstance(pack, CypherPack)
    assert pack.name == "test_pack" and pack.version == "1"
    assert pack.names() == ("q",)
    q = pack.get("q")
    assert q.param_names == ("title",) and q.params[0].required
    assert q.returns == ("title",)
    assert "q" in pack and "nope" not in pack


def test_the_error_type_is_a_kg_agent_error() -> None:
    assert issubclass(CypherPackError, KGAgentError)


def test_bad_yaml_reports_its_line() -> None:
    text = "name: p\nversion: 1\ndescription: d\nqueries:\n  - name: [unclosed\n"
    msg = error(text)
    assert msg.startswith("p.yaml: line ")
    assert "invalid YAML" in msg
    line = int(msg.split("line ")[1].split(":")[0])
    assert line in (5, 6)


def test_duplicate_yaml_keys_are_refused_with_their_line() -> None:
    text = pack_text("MATCH (a:Article {title: $title}) RETURN a.title AS title")
    text = text.replace(
        "    description: A query.\n", "    description: A query.\n    description: Again.\n"
    )
    msg = error(text)
    assert "duplicate key 'description'" in msg and "line 7" in msg


def test_missing_top_level_key() -> None:
    msg = error("name: p\nversion: 1\nqueries: []\n")
    assert "missing key description" in msg


def test_unknown_query_key_is_a_typo_not_ignored() -> None:
    text = pack_text("MATCH (a:Article {title: $title}) RETURN a.title AS title")
    msg = error(text.replace("returns:", "return:"))
    assert "unknown key return" in msg and "query q" in msg


def test_unknown_param_type() -> None:
    msg = error(
        pack_text(
            "MATCH (a:Article {title: $title}) RETURN a.title AS title", params="title: {type: str}"
        )
    )
    assert "unknown type 'str'" in msg and "list[string]" in msg
    assert msg.startswith("p.yaml: line 8: query q: parameter title:")


def test_duplicate_query_names() -> None:
    text = pack_text("MATCH (a:Article {title: $title}) RETURN a.title AS title")
    query = text.split("queries:\n", 1)[1]
    msg = error(text + query)
    assert "duplicate query name 'q'" in msg and "first at line 5" in msg


def test_undeclared_param_in_cypher() -> None:
    msg = error(pack_text("MATCH (a:Article {title: $title}) RETURN a.title AS title LIMIT $k"))
    assert "uses $k not declared in params" in msg


def test_declared_param_never_used() -> None:
    msg = error(
        pack_text(
            "MATCH (a:Article {title: $title}) RETURN a.title AS title",
            params="title: {type: string}\nlimit: {type: int, default: 5}",
        )
    )
    assert "declares limit but the cypher never uses it" in msg


def test_a_dollar_inside_a_string_literal_is_not_a_param() -> None:
    pack = parse_pack(
        pack_text(
            "MATCH (a:Article {title: $title}) WHERE a.title <> 'costs $5' RETURN a.title AS title"
        )
    )
    assert pack.get("q").param_names == ("title",)


@pytest.mark.parametrize(
    ("cypher", "keyword"),
    [
        ("CREATE (a:Article {title: $title}) RETURN a.title AS title", "CREATE"),
        ("MERGE (a:Article {title: $title}) RETURN a.title AS title", "MERGE"),
        ("MATCH (a:Article {title: $title}) SET a.pagerank = 1.0 RETURN a.title AS title", "SET"),
        ("MATCH (a:Article {title: $title}) DETACH DELETE a RETURN $title AS title", "DETACH"),
        ("MATCH (a:Article {title: $title}) delete a", "DELETE"),
        ("MATCH (a:Article {title: $title}) REMOVE a.pagerank RETURN a.title AS title", "REMOVE"),
        ("DROP TABLE Article // $title", "DROP"),
        ("COPY Article FROM $title", "COPY"),
        ("LOAD EXTENSION fts RETURN $title AS title", "LOAD"),
        ("INSTALL json RETURN $title AS title", "INSTALL"),
    ],
)
def test_write_clauses_are_refused(cypher: str, keyword: str) -> None:
    msg = error(pack_text(cypher))
    assert f"write clause {keyword} is not allowed" in msg
    assert msg.startswith("p.yaml: line 5: query q:")


def test_write_words_in_strings_comments_and_properties_are_fine() -> None:
    pack = parse_pack(
        pack_text(
            """
        // CREATE nothing: this comment mentions DELETE and SET
        MATCH (a:Article {title: $title})
        WHERE a.title <> 'SET' AND a.title <> "DROP TABLE x"
        RETURN a.title AS title, a.`create` AS created
        """
        )
    )
    assert pack.get("q").param_names == ("title",)


def test_call_of_a_read_only_procedure_is_allowed() -> None:
    pack = parse_pack(
        pack_text(
            "CALL QUERY_FTS_INDEX('Article', 'article_title_fts', $title, top := 5) "
            "RETURN node.title AS title"
        )
    )
    assert pack.get("q").cypher.startswith("CALL QUERY_FTS_INDEX")


@pytest.mark.parametrize(
    "proc", ["CREATE_FTS_INDEX('Article', 'x', ['title'])", "page_rank('g')", "threads = 4"]
)
def test_call_of_other_procedures_is_refused(proc: str) -> None:
    msg = error(pack_text(f"CALL {proc} RETURN $title AS title"))
    assert "is not allowed" in msg


def test_two_statements_are_refused_but_a_trailing_semicolon_is_dropped() -> None:
    msg = error(
        pack_text("MATCH (a:Article {title: $title}) RETURN a.title AS title; MATCH (b) RETURN b")
    )
    assert "one statement" in msg
    pack = parse_pack(pack_text("MATCH (a:Article {title: $title}) RETURN a.title AS title;"))
    assert not pack.get("q").cypher.endswith(";")


def test_a_default_must_fit_its_bounds() -> None:
    msg = error(
        pack_text(
            "MATCH (a:Article {title: $title}) RETURN a.title AS title LIMIT $limit",
            params="title: {type: string}\nlimit: {type: int, default: 0, min: 1, max: 10}",
        )
    )
    assert "parameter limit: default must be >= 1, got 0" in msg


def test_required_with_a_default_is_contradictory() -> None:
    msg = error(
        pack_text(
            "MATCH (a:Article {title: $title}) RETURN a.title AS title",
            params="title: {type: string, required: true, default: x}",
        )
    )
    assert "a required parameter cannot have a default" in msg


def test_min_on_a_string_is_refused() -> None:
    msg = error(
        pack_text(
            "MATCH (a:Article {title: $title}) RETURN a.title AS title",
            params="title: {type: string, min: 1}",
        )
    )
    assert "min applies to int and float only" in msg


def test_load_pack_names_the_file(tmp_path: Path) -> None:
    f = tmp_path / "broken.yaml"
    f.write_text("name: p\nversion: 1\ndescription: d\nqueries: [\n", encoding="utf-8")
    with pytest.raises(CypherPackError, match=r"broken\.yaml: line \d+: invalid YAML"):
        load_pack(f)
    with pytest.raises(CypherPackError, match="no such pack file"):
        load_pack(tmp_path / "missing.yaml")


def test_load_packs_refuses_two_packs_with_one_name(tmp_path: Path) -> None:
    text = pack_text("MATCH (a:Article {title: $title}) RETURN a.title AS title")
    (tmp_path / "a.yaml").write_text(text, encoding="utf-8")
    assert list(load_packs(tmp_path)) == ["test_pack"]
    (tmp_path / "b.yml").write_text(text, encoding="utf-8")
    with pytest.raises(CypherPackError, match="pack name 'test_pack' is also used by"):
        load_packs(tmp_path)


# ---------------------------------------------------------------------------- calling

LIMITED = pack_text(
    "MATCH (a:Article {title: $title}) WHERE a.is_stub = $stub AND a.pagerank >= $rank "
    "RETURN a.title AS title LIMIT $limit",
    params=(
        "title: {type: string}\n"
        "limit: {type: int, default: 10, min: 1, max: 100}\n"
        "stub: {type: bool, default: false}\n"
        "rank: {type: float, default: 0.0, min: 0}"
    ),
)


def test_run_query_passes_checked_params_to_the_store() -> None:
    store = FakeStore()
    rows = run_query(store, parse_pack(LIMITED), "q", title="Ada Lovelace")
    assert rows == [{"title": "X"}]
    cypher, params = store.calls[0]
    assert "$title" in cypher
    assert params == {"title": "Ada Lovelace", "limit": 10, "stub": False, "rank": 0.0}


def test_values_are_coerced_to_the_declared_types() -> None:
    q = parse_pack(LIMITED).get("q")
    bound = q.bind({"title": "T", "limit": "25", "stub": "true", "rank": "0.5"})
    assert bound == {"title": "T", "limit": 25, "stub": True, "rank": 0.5}
    assert q.bind({"title": "T", "limit": 3.0})["limit"] == 3


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({}, "missing required parameter title (string)"),
        ({"title": "T", "limt": 5}, "unknown parameter limt (it takes: title, limit, stub, rank)"),
        ({"title": "T", "limit": 0}, "parameter limit must be >= 1, got 0"),
        ({"title": "T", "limit": 101}, "parameter limit must be <= 100, got 101"),
        ({"title": "T", "limit": "ten"}, "parameter limit must be an integer, got 'ten'"),
        ({"title": "T", "limit": 2.5}, "parameter limit must be an integer, got 2.5"),
        ({"title": "T", "limit": True}, "parameter limit must be an integer, got bool"),
        ({"title": "T", "stub": "maybe"}, "parameter stub must be true or false"),
        ({"title": "T", "rank": float("nan")}, "parameter rank must be a finite number"),
        ({"title": ["T"]}, "parameter title must be a string, got list"),
        ({"title": None}, "parameter title is required, got null"),
    ],
)
def test_bad_call_values_are_one_line_errors(values: dict[str, Any], expected: str) -> None:
    with pytest.raises(CypherPackError) as info:
        run_query(FakeStore(), parse_pack(LIMITED), "q", **values)
    assert str(info.value).startswith(f"query test_pack.q: {expected}")


def test_an_unknown_query_name_lists_the_known_ones() -> None:
    with pytest.raises(CypherPackError, match=r"has no query 'nope' \(it has: q\)"):
        run_query(FakeStore(), parse_pack(LIMITED), "nope")


def test_list_params_and_choices() -> None:
    pack = parse_pack(
        pack_text(
            "MATCH (a:Article) WHERE a.title IN $titles RETURN a.title AS title ORDER BY $order",
            params="titles: {type: 'list[string]'}\n"
            "order: {type: string, default: asc, choices: [asc, desc]}",
        )
    )
    q = pack.get("q")
    assert q.bind({"titles": ("A", "B")}) == {"titles": ["A", "B"], "order": "asc"}
    with pytest.raises(CypherPackError, match="parameter titles must be a list, got str"):
        q.bind({"titles": "A"})
    with pytest.raises(CypherPackError, match="parameter order must be one of 'asc', 'desc'"):
        q.bind({"titles": [], "order": "up"})


def test_params_named_like_run_query_arguments_still_work() -> None:
    pack = parse_pack(
        pack_text(
            "MATCH (a:Article {title: $name}) RETURN a.title AS title",
            params="name: {type: string}",
        )
    )
    store = FakeStore()
    run_query(store, pack, "q", name="Ada Lovelace")
    assert store.calls[0][1] == {"name": "Ada Lovelace"}


# ---------------------------------------------------------------------------- shipped pack


def test_the_shipped_pack_loads_and_has_the_expected_queries() -> None:
    pack = default_pack()
    assert pack.name == "graph_structure"
    for name in (
        "article_neighbours",
        "articles_linking_to",
        "shortest_link_path",
        "category_members",
        "categories_of",
        "sections_mentioning",
        "bridge_articles",
        "common_neighbours",
        "resolve_alias",
        "top_pagerank",
    ):
        assert name in pack, name
    assert load_packs(ROOT / "cypher_packs") == {
        "graph_structure": load_pack(ROOT / "cypher_packs" / "graph_structure.yaml"),
        "infobox_facts": load_pack(ROOT / "cypher_packs" / "infobox_facts.yaml"),
    }
    facts = load_pack(ROOT / "cypher_packs" / "infobox_facts.yaml")
    for name in ("facts_of", "articles_with_fact", "fact_keys", "articles_of_kind"):
        assert name in facts, name


def test_packaged_copies_match_the_project_folders() -> None:
    """The wheel's copy must be the file maintainers edit; re-copy it when this fails."""
    assert default_pack_dir() == ROOT / "kg_agent" / "data" / "cypher_packs"
    for rel in ("cypher_packs/graph_structure.yaml", "few_shot/examples.jsonl"):
        top, packaged = ROOT / rel, ROOT / "kg_agent" / "data" / rel
        assert packaged.read_bytes() == top.read_bytes(), f"cp {rel} kg_agent/data/{rel}"


# ---------------------------------------------------------------------------- intents


@pytest.mark.parametrize(
    ("question", "query", "entities"),
    [
        ("How is Ada Lovelace connected to IBM?", "connection_path", ("Ada Lovelace", "IBM")),
        (
            "How are Alan Turing and Konrad Zuse related?",
            "connection_path",
            ("Alan Turing", "Konrad Zuse"),
        ),
        (
            "What connects Alan Turing and John von Neumann?",
            "connection_path",
            ("Alan Turing", "John von Neumann"),
        ),
        ("What is the connection between ENIAC and EDVAC?", "connection_path", ("ENIAC", "EDVAC")),
        ("What links to Charles Babbage?", "articles_linking_to", ("Charles Babbage",)),
        (
            "Which articles link to 'Analytical Engine'?",
            "articles_linking_to",
            ("Analytical Engine",),
        ),
        ("What is in category Computer pioneers?", "category_members", ("Computer pioneers",)),
        ("What articles are in Category:Early computers", "category_members", ("Early computers",)),
        ("what is in the computer pioneers category", "category_members", ("computer pioneers",)),
        ("What are Charles Babbage's neighbours?", "article_neighbours", ("Charles Babbage",)),
        ("What are the neighbors of ENIAC?", "article_neighbours", ("ENIAC",)),
        ("What is Grace Hopper connected to?", "article_neighbours", ("Grace Hopper",)),
        ("Which categories is Alan Turing in?", "categories_of", ("Alan Turing",)),
        ("Where is Bletchley Park mentioned?", "sections_mentioning", ("Bletchley Park",)),
        (
            "What do Charles Babbage and Ada Lovelace both link to?",
            "common_neighbours",
            ("Charles Babbage", "Ada Lovelace"),
        ),
        (
            "What is mentioned alongside the Jacquard machine?",
            "bridge_articles",
            ("the Jacquard machine",),
        ),
        ("What are the most central articles in the graph?", "top_pagerank", ()),
    ],
)
def test_structural_questions_map_to_pack_queries(
    question: str, query: str, entities: tuple[str, ...]
) -> None:
    intent = structural_intent(question)
    assert intent is not None
    assert (intent.query, intent.entities) == (query, entities)
    pack_query = default_pack().get(intent.query)
    assert set(intent.params) <= set(pack_query.param_names)
    assert set(pack_query.param_names) - set(intent.params) <= {
        p.name for p in pack_query.params if not p.required
    }


def test_content_questions_are_not_structural() -> None:
    import json

    sample = ROOT / "kg_agent" / "data" / "sample" / "questions.jsonl"
    for line in sample.read_text(encoding="utf-8").splitlines():
        question = json.loads(line)["question"]
        assert structural_intent(question) is None, question
    assert structural_intent("") is None
    assert structural_intent("Who linked the two machines in 1950?") is None

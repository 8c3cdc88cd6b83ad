"""End-to-end fixtures: real graphs loaded once per session with the real model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kg_agent.cli import SAMPLE_DUMP
from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadOptions, LoadReport, load_source
from kg_agent.store import GraphStore

if TYPE_CHECKING:
    from kg_agent.agent import KnowledgeGraphAgent

ENWIKI = "wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
LATGALIAN = "wiki/smallwiki-latest-pages-articles.xml"
TWOWIKI_CORPUS = "multihop/2wikimultihopqa/corpus.json"


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return Embedder()


def _load(tmp: Path, source: Path | str, embedder: Embedder) -> tuple[Path, LoadReport]:
    db = tmp / "graph.kuzu"
    report = load_source(source, db, embedder=embedder, options=LoadOptions(progress=False))
    return db, report


@pytest.fixture(scope="session")
def sample_graph(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> tuple[Path, LoadReport]:
    return _load(tmp_path_factory.mktemp("sample"), SAMPLE_DUMP, embedder)


@pytest.fixture(scope="session")
def enwiki_graph(
    tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path
) -> tuple[Path, LoadReport]:
    """The English sample, graph only: its tests are about structure. Embedding its
    long articles took ~2.5 minutes of the suite; vectors of real Wikipedia text are
    tested on three of its articles (``test_update.py``, real revisions)."""
    db = tmp_path_factory.mktemp("enwiki") / "graph.kuzu"
    options = LoadOptions(progress=False, embeddings="none")
    return db, load_source(shared_data_dir / ENWIKI, db, options=options)


@pytest.fixture(scope="session")
def latgalian_graph(
    tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path
) -> tuple[Path, LoadReport]:
    """The whole Latgalian Wikipedia, graph only: its tests are about structure, and
    embedding it cost a minute."""
    db = tmp_path_factory.mktemp("ltg") / "graph.kuzu"
    options = LoadOptions(progress=False, embeddings="none")
    return db, load_source(shared_data_dir / LATGALIAN, db, options=options)


@pytest.fixture(scope="session")
def twowiki_data_dir(tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path) -> Path:
    """The shared data folder with a smaller 2Wiki pool (1,408 of its 6,119 passages: the
    first 60 questions' gold and their neighbours; ``tests/support/twowiki_pool.py``)."""
    from tests.support.twowiki_pool import mirror_data_dir

    return mirror_data_dir(shared_data_dir, tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="session")
def twowiki_graph(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, twowiki_data_dir: Path
) -> tuple[Path, LoadReport]:
    return _load(tmp_path_factory.mktemp("2wiki"), twowiki_data_dir / TWOWIKI_CORPUS, embedder)


@pytest.fixture
def open_store() -> Iterator[object]:
    """Open a graph read-only for the length of one test; closed afterwards."""
    opened: list[GraphStore] = []

    def _open(db: Path) -> GraphStore:
        store = GraphStore.open(db, read_only=True)
        opened.append(store)
        return store

    yield _open
    for s in opened:
        s.close()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second real sentence-transformers model (1 layer, 32 dimensions), made offline."""
    from tests.support.models import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("models") / "tiny")


#: The environment variables that would give an agent a Claude key or endpoint.
ANTHROPIC_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")


@pytest.fixture(scope="module")
def no_key() -> Iterator[None]:
    """No Anthropic credentials in the environment for the whole module."""
    with pytest.MonkeyPatch.context() as mp:
        for name in ANTHROPIC_ENV:
            mp.delenv(name, raising=False)
        yield


@pytest.fixture(scope="module")
def sample_db(sample_graph: tuple[Path, LoadReport]) -> str:
    """The bundled sample's session graph, as a path string."""
    return str(sample_graph[0])


@pytest.fixture(scope="module")
def sample_agent(sample_db: str, embedder: Embedder, no_key: None) -> Iterator[KnowledgeGraphAgent]:
    """An offline agent over the sample graph, shared by a module's tests."""
    from kg_agent.agent import KnowledgeGraphAgent

    with KnowledgeGraphAgent(sample_db, embedder=embedder) as a:
        yield a

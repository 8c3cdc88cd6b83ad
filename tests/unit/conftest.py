"""Unit-test fixtures: the real embedder and a small two-hop world in memory."""

from __future__ import annotations

import pytest

from kg_agent.embedding import Embedder
from tests.support.memory_graph import MemoryArticle, MemoryGraph

# Two hops: the film names its director, whose article names his mother; a war film
# that nothing links to is the text-similar distractor.
FILM = (
    "Polish-Russian War is a 2009 Polish film directed by Xawery Żuławski, based on the "
    "novel of the same name by Dorota Masłowska. It follows a young man from a small town "
    "through a week of parties, fights and failed romances."
)
DIRECTOR = (
    "Xawery Żuławski is a Polish film director and screenwriter. He is the son of the "
    "director Andrzej Żuławski and of the actress Małgorzata Braunek, and studied at the "
    "film school in Łódź before his first feature."
)
MOTHER = (
    "Małgorzata Braunek was a Polish actress of film and theatre, known for her roles in "
    "the films of Andrzej Wajda and Andrzej Żuławski. She later became a teacher of Zen "
    "Buddhism and lived in Warsaw until her death."
)
WRITER = (
    "Dorota Masłowska is a Polish writer and playwright. Her first novel, written when she "
    "was nineteen, became a bestseller and was adapted for the screen; she has since "
    "written plays and two further novels."
)
WAR_FILM = (
    "A war film is a film genre concerned with warfare, typically about naval, air, or land "
    "battles, with combat scenes central to the drama. Films about the war between Poland "
    "and Russia are a small part of the genre."
)
RIVER_FILM = (
    "Dark River is a 2017 British drama film about a woman who returns to her family's "
    "farm in Yorkshire after her father's death and fights her brother for the tenancy "
    "of the land they grew up on."
)
RIVER_NOVEL = (
    "Dark River is a 1990 novel about a river pilot on the Mississippi whose boat runs "
    "aground during a flood, and the trial that follows, told by his daughter many years "
    "after the events took place."
)


def world_articles() -> list[MemoryArticle]:
    return [
        MemoryArticle(
            "Polish-Russian War (film)",
            [("", FILM), ("Cast", "Borys Szyc as Silny. Roma Gąsiorowska as Magda.")],
            links={"Xawery Żuławski": 2, "Dorota Masłowska": 1},
            categories=["2009 films", "Polish films"],
            pagerank=0.08,
        ),
        MemoryArticle(
            "Xawery Żuławski",
            [("", DIRECTOR)],
            links={"Małgorzata Braunek": 1, "Polish-Russian War (film)": 1},
            pagerank=0.05,
        ),
        MemoryArticle("Małgorzata Braunek", [("", MOTHER)], pagerank=0.04),
        MemoryArticle("Dorota Masłowska", [("", WRITER)], pagerank=0.03),
        MemoryArticle("War film", [("", WAR_FILM)], categories=["Film genres"], pagerank=0.30),
        MemoryArticle("Dark River (film)", [("", RIVER_FILM)], pagerank=0.02),
        MemoryArticle("Dark River (novel)", [("", RIVER_NOVEL)], pagerank=0.01),
        MemoryArticle("Anne Law", [("", "Anne Law was an English courtier. " * 5)], pagerank=0.01),
        MemoryArticle("2009", [("", "2009 was a common year starting on Thursday. " * 4)]),
        MemoryArticle("Szamotuły", [], is_stub=True),
    ]


REDIRECTS = {"Braunek": "Małgorzata Braunek", "PRW": "Polish-Russian War (film)"}


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture(scope="session")
def world(embedder: Embedder) -> MemoryGraph:
    """The world with section vectors from the real default model."""
    return MemoryGraph(
        world_articles(), redirects=REDIRECTS, embed=embedder.embed, model=embedder.name
    )


@pytest.fixture(scope="session")
def world_no_vectors() -> MemoryGraph:
    """The same world loaded without embeddings (BM25 and the graph only)."""
    return MemoryGraph(world_articles(), redirects=REDIRECTS)

"""The entity kind of an article: person, place, organisation, work, event, taxon, other.

Why: questions name kinds ("which city…", "who…", "which novel…"); a coarse kind per
article lets answers be filtered without a full ontology. The infobox type is the
best evidence (editors chose the template for the subject), so it decides first;
an article without a telling box falls back to its categories, which nearly every
article has ("1879 births", "Countries in Africa", "1945 novels").

How to extend: add a box type to :data:`BOX_KINDS` (types as
:func:`kg_agent.ingest.infobox.box_type` normalises them, e.g. "u.s. state"), a
word to :data:`BOX_KIND_WORDS` for a family of types ("… biography"), or a
``(pattern, kind, weight)`` row to :data:`CATEGORY_KINDS`. Keep each table in one
place; tests pin the sample articles' kinds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kg_agent.ingest.infobox import box_type

__all__ = [
    "BOX_KINDS",
    "BOX_KIND_WORDS",
    "CATEGORY_KINDS",
    "KINDS",
    "entity_kind",
    "kind_of_box",
    "kind_of_categories",
]

KINDS = ("person", "place", "organisation", "work", "event", "taxon", "other")


def _table(rows: dict[str, str]) -> dict[str, str]:
    """Expand ``kind: "type, type, …"`` rows into ``type → kind``."""
    table: dict[str, str] = {}
    for kind, names in rows.items():
        for name in names.split(","):
            if name.strip():
                table[" ".join(name.split())] = kind
    return table


# Box type → kind. A spaceflight is an event (a mission happens at a time and place);
# deities, diseases, languages, awards, chemicals and units are "other" on purpose.
BOX_KINDS: dict[str, str] = _table(
    {
        "person": """person, officeholder, scientist, writer, musical artist, royalty,
            philosopher, military person, tennis biography, football biography, sportsperson,
            actor, artist, architect, astronaut, baseball biography, basketball biography,
            boxer, chess player, christian leader, cricketer, criminal, economist, engineer,
            ice hockey player, journalist, judge, monarch, noble, pope, president,
            prime minister, religious biography, saint, senator, governor, comedian, model,
            dancer, medical person, spy, swimmer, cyclist, f1 driver, racing driver, golfer,
            gymnast, wrestler, rugby biography, rugby league biography, nfl player,
            nfl biography, mlb player, nba biography, college coach, athlete, skier,
            figure skater, martial artist, mountaineer, poker player, clergy, cardinal,
            bishop, theologian, academic, classical composer, composer, director, youtuber,
            presenter, police officer, first lady, chef, fashion designer, sailor, rower""",
        "place": """settlement, country, former country, u.s. state, city, island, river,
            mountain, mountain range, mountain pass, lake, body of water, ocean, sea,
            province or territory of canada, continent, uk place, german location,
            french commune, italian comune, indian jurisdiction, australian place,
            province, region, state, district, county, municipality, village, town, geobox,
            protected area, park, airport, station, bridge, stadium, venue, historic site,
            nrhp, building, castle, church, religious building, mosque, temple, museum,
            glacier, volcano, desert, valley, cave, waterfall, landform, street, road,
            dam, lighthouse, zoo, hospital, archaeological site, ancient site, u.s. county,
            london borough, english county, scottish council area, canadian city,
            japanese prefecture, state of germany, subdivision, administrative division,
            shopping mall, skyscraper, hotel, mine, port, canal, waterway""",
        "organisation": """company, organization, organisation, university, college,
            school, political party, sports team, football club, sports conference,
            sports league, national military, military unit, government agency, legislature,
            record label, airline, publisher, broadcasting network, television channel,
            tv channel, radio station, non-profit, union, trade union, intergovernmental
            organization, geopolitical organization, religious group, christian denomination,
            law firm, bank, court, police, fire department, band, musical group, orchestra,
            choir, library, think tank, football league, rugby league club, sports club,
            hockey team, baseball team, basketball team, nfl team, government cabinet,
            u.s. cabinet, parliament, dynasty, royal house, brand, laboratory""",
        "work": """book, film, album, song, single, video game, television, television
            episode, television season, software, programming language, musical, opera,
            play, artwork, painting, sculpture, poem, short story, comic, comics,
            animanga/header, website, document, treaty, legislation, uk legislation,
            u.s. legislation, journal, publication, newspaper, magazine, radio show,
            podcast, musical composition, composition, book series, film series,
            television film, anime, manga, board game, standard, file format,
            character encoding, operating system, web browser, hymn, anthem, national anthem""",
        "event": """military conflict, spaceflight, election, olympic games, olympics,
            sports event, tournament, football match, historical event, event,
            civil conflict, protest, earthquake, hurricane, tropical cyclone, storm, flood,
            disaster, rail accident, aircraft occurrence, aviation accident, terrorist attack,
            civilian attack, festival, wrestling event, ufc event, boxing match,
            music festival, concert tour, tour, competition, film festival, referendum,
            summit, pageant, war, battle, space mission, mission, news event, riot,
            oil spill, pandemic, epidemic, award ceremony, sport event, world cup""",
        "taxon": """taxobox, automatic taxobox, speciesbox, subspeciesbox, infraspeciesbox,
            hybridbox, virusbox, ichnobox, oobox""",
        "other": """deity, disease, medical condition, language, language family, award,
            unit, martial art, economy, chembox, drugbox, chemical, element, mineral,
            planet, galaxy, star, ship, aircraft, automobile, weapon, gun, u.s. state symbols,
            dog breed, horse breed, cultivar, food, drink, character, fictional character,
            religion, ideology, philosophical school, currency""",
    }
)

# Last words of box types not in BOX_KINDS: "football biography", "ice hockey player".
BOX_KIND_WORDS: dict[str, str] = _table(
    {
        "person": "biography, person, player, officeholder, artist, writer, scientist, "
        "royalty, athlete, coach, cricketer, footballer, politician, actor, musician, "
        "driver, skier, wrestler, boxer, jockey, cyclist",
        "place": "settlement, city, town, village, island, river, lake, mountain, county, "
        "district, province, region, municipality, place, location, station, airport",
        "organisation": "company, organization, organisation, university, college, school, "
        "party, team, club, league, agency, association, unit",
        "work": "film, album, song, single, book, novel, game, series, episode, show, "
        "software, magazine, newspaper, journal",
        "event": "election, conflict, battle, war, event, tournament, games, championship, "
        "festival, disaster, attack, accident, spaceflight, season",
    }
)

# Category patterns: (regex, kind, weight). Every matching row votes its weight for its
# kind; the kind with most votes wins (ties: the earlier row). Births, deaths and
# "Living people" weigh 3: they are on every biography and on nothing else.
_Y = r"(?:\d{1,4}(?:s)?(?: BC)?|\d{1,2}(?:st|nd|rd|th)-century(?: BC)?)"
CATEGORY_KINDS: list[tuple[re.Pattern[str], str, int]] = [
    (re.compile(p, re.I), kind, weight)
    for p, kind, weight in (
        (rf"^{_Y} births$", "person", 3),
        (rf"^{_Y} deaths$", "person", 3),
        (r"^(?:Living|Possibly living) people$", "person", 3),
        (
            r"^(?:Year of birth|Year of death|Date of birth|Place of birth) (?:missing|unknown)",
            "person",
            3,
        ),
        (r"^People (?:from|of) ", "person", 1),
        (
            r" (?:people|physicists|chemists|mathematicians|philosophers|writers|novelists|"
            r"poets|actors|actresses|politicians|singers|musicians|painters|sculptors|"
            r"composers|engineers|inventors|economists|historians|astronauts|generals|"
            r"monarchs|emperors|kings|queens|saints|players|coaches|directors|screenwriters|"
            r"journalists|lawyers|scientists|businesspeople|anthropologists|alumni|faculty|"
            r"laureates|champions|medalists|sportspeople|autobiographers|essayists)"
            r"(?: .*)?$",
            "person",
            1,
        ),
        (
            r"^(?:Capitals|Countries|Cities|Towns|Villages|Populated places|Provinces|"
            r"States|Regions|Islands|Rivers|Mountains|Lakes|Municipalities|Counties|"
            r"Districts|Communes) (?:in|of) ",
            "place",
            2,
        ),
        (r"^(?:States and territories|Populated places) ", "place", 2),
        (r"^Member states of ", "place", 1),
        (
            r" (?:countries|countries and territories|cities|towns|villages|islands|rivers|"
            r"mountains|lakes|populated places|census-designated places|"
            r"unincorporated communities)$",
            "place",
            1,
        ),
        (r"^(?:Continents|Oceans|Seas|Republics|Landlocked countries)$", "place", 2),
        (r"^(?:Former|Landlocked|Island) countries", "place", 2),
        (r" companies(?: .*)?$", "organisation", 1),
        (
            r"^(?:Companies|Organizations|Organisations) (?:established|based|disestablished) ",
            "organisation",
            2,
        ),
        (
            r" (?:organizations|organisations|political parties|universities|"
            r"universities and colleges|musical groups|sports teams|football clubs|agencies|"
            r"record labels|airlines|publishers|standards organizations)(?: .*)?$",
            "organisation",
            1,
        ),
        (r"^(?:Universities and colleges|Political parties|Sports teams) ", "organisation", 2),
        (
            r"(?:^|\d )(?:novels|films|albums|songs|books|singles|video games|plays|poems|"
            r"paintings|sculptures|operas|musicals|short stories|compositions|"
            r"television series|television episodes|EPs|soundtracks|comics)(?: .*)?$",
            "work",
            1,
        ),
        (
            r" (?:novels|films|albums|songs|books|singles|video games|plays|poems|paintings|"
            r"operas|musicals|novellas|compositions|journals|magazines|newspapers|"
            r"television series|software|symphonic poems)$",
            "work",
            1,
        ),
        (
            r"^(?:Works|Novels|Films|Books|Songs|Albums) (?:by|about|set in|directed by|"
            r"written by|produced by|based on|adapted into) ",
            "work",
            2,
        ),
        (r"^Publications established in ", "work", 1),
        (
            r"(?:^| )(?:battles|wars|conflicts|elections|revolutions|disasters|"
            r"massacres|earthquakes|riots|protests|sieges|tournaments|"
            r"championships|festivals|Olympic Games|missions)(?: .*)?$",
            "event",
            1,
        ),
        (r"^(?:Battles|Wars|Conflicts|Elections) (?:of|in|involving) ", "event", 2),
        (
            r"^(?:\d{4}s? |Sports |Sporting |Annual |Recurring )events\b|^Events (?:in|of) ",
            "event",
            1,
        ),
        (r"^(?:Manned |Crewed )?(?:space)?missions to ", "event", 2),
        (
            r"^(?:Animals|Plants|Species|Taxa|Fossil taxa|Birds|Fish|Insects|Mammals) "
            r"described in \d",
            "taxon",
            2,
        ),
        (r"^Taxa named by ", "taxon", 2),
        (r" (?:genera|taxa|subfamilies)$", "taxon", 1),
        (
            r"^(?!Language |Royal |Noble |Political |Business |Chivalric |Religious |"
            r"Military |Crime |Musical |Font |Word )\w+ (?:orders|classes|families)$",
            "taxon",
            1,
        ),
        # A list names many entities: whatever its members are, it is none of them.
        (r"^Lists? of ", "other", 3),
        (r"^(?:IUCN Red List|Extant .* first appearances|.* first appearances$)", "taxon", 1),
        (r"^(?:Mammals|Birds|Fish|Reptiles|Amphibians|Insects|Plants|Flora|Fauna) of ", "taxon", 1),
    )
]


def _key(name: str) -> str:
    """Normalise a box name or type: "Infobox Settlement" and "settlement" meet."""
    return box_type(name) or " ".join(name.replace("_", " ").split()).lower()


def kind_of_box(name: str) -> str | None:
    """The kind a box type (or a raw template name) names; None for an unknown type."""
    key = _key(name)
    for candidate in (key, key.split("/", 1)[0]):
        kind = BOX_KINDS.get(candidate)
        if kind is not None:
            return kind
    words = key.split("/", 1)[0].split()
    return BOX_KIND_WORDS.get(words[-1]) if words else None


def kind_of_categories(categories: Sequence[str]) -> str:
    """The kind the categories vote for (see :data:`CATEGORY_KINDS`), or "other"."""
    votes: dict[str, int] = {}
    first: dict[str, int] = {}
    for category in categories:
        for row, (pattern, kind, weight) in enumerate(CATEGORY_KINDS):
            if pattern.search(category):
                votes[kind] = votes.get(kind, 0) + weight
                first.setdefault(kind, row)
    if not votes:
        return "other"
    return max(votes, key=lambda k: (votes[k], -first[k]))


def entity_kind(box_types: Sequence[str], categories: Sequence[str]) -> str:
    """One of :data:`KINDS`, from the boxes first, else from the categories.

    ``box_types`` are the article-level boxes in page order (normalised types or raw
    template names). The first box whose type names a kind decides; a box known to be
    "other" (a disease, a language family) makes the article "other" unless a later
    box names a kind; only unknown box types leave the decision to the categories.
    """
    known_other = False
    for name in box_types:
        kind = kind_of_box(name)
        if kind == "other":
            known_other = True
        elif kind is not None:
            return kind
    return "other" if known_other else kind_of_categories(categories)

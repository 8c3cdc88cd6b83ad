"""A newer version of the shipped sample dump, with every kind of change an update meets.

Written from the shipped sample by editing its pages the way Wikipedia's history does:

* **edited**: "Ada Lovelace" gains a sentence naming "Annabella Milbanke" (a new red
  link) and an infobox fact (her spouse, in plain text), and loses nothing else;
  "Jacquard machine" stops linking to "Joseph Marie Jacquard" (its link made plain text);
* **deleted**: "Tommy Flowers" (still linked from "Colossus computer" and "London":
  it must stay as a stub) and "Joseph Marie Jacquard" (no longer linked: it goes,
  with its two categories no other article has);
* **renamed**: "Z3 (computer)" becomes "Z3 computer" (same page id) and its old title a
  redirect, so "Konrad Zuse" and "Turing machine", unchanged, now link to the new title;
* **new article**: "Lord Byron", a red link (stub) until now, whose infobox names
  "Greece" only through a flag template (a stub that only a fact refers to);
* **redirects**: "Turing" now leads to "Turing machine" (so "Bletchley Park", unchanged,
  links there), "ENIAC computer" is gone (so "John von Neumann"'s link to it is a red
  link), "Babbage's engine" is new.
"""

from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "kg_agent" / "data" / "sample" / "pages-articles.xml"

LORD_BYRON = """{{Infobox person
| name = Lord Byron
| birth_date = {{birth date|1788|1|22}}
| death_place = Missolonghi, {{flag|Greece}}
| spouse = [[Annabella Milbanke]] (m. 1815)
}}
'''George Gordon Byron, 6th Baron Byron''' (1788–1824), known as '''Lord Byron''', was an
English poet and a leading figure of the Romantic movement. He was the father of
[[Ada Lovelace]], whom he never knew, and studied at [[Trinity College, Cambridge]].

== Works ==
His long poems include ''Don Juan'' and ''Childe Harold's Pilgrimage''. He died in
Greece in 1824 while fighting in its war of independence.

[[Category:English poets]]
"""


def _page(title: str, page_id: int, revision: int, text: str) -> str:
    return (
        f"  <page>\n    <title>{title}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
        f"    <revision>\n      <id>{revision}</id>\n"
        f"      <timestamp>2025-06-01T09:00:00Z</timestamp>\n"
        f'      <text xml:space="preserve">{text}</text>\n    </revision>\n  </page>\n'
    )


def redirect_page(title: str, page_id: int, target: str) -> str:
    """A redirect's ``<page>``, as Wikimedia's dumps write it."""
    return (
        f"  <page>\n    <title>{title}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
        f'    <redirect title="{target}" />\n    <revision>\n      <id>{page_id}01</id>\n'
        f'      <text xml:space="preserve">#REDIRECT [[{target}]]</text>\n'
        "    </revision>\n  </page>\n"
    )


def _sha1(page: str) -> str:
    """MediaWiki's ``<sha1>``: the text's SHA-1 in base 36, 31 digits."""
    body = re.search(r"<text[^>]*>(.*?)</text>", page, flags=re.S)
    n = int(hashlib.sha1(html.unescape(body.group(1) if body else "").encode()).hexdigest(), 16)
    digits = ""
    while n:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    return digits.rjust(31, "0")


def bump(page: str) -> str:
    """An edited page: a new revision id, and the new text's sha1."""
    page = re.sub(
        r"(<revision>\s*<id>)(\d+)", lambda m: m.group(1) + str(int(m.group(2)) + 1), page
    )
    return re.sub(r"<sha1>\w*</sha1>", f"<sha1>{_sha1(page)}</sha1>", page)


def write_newer_sample(path: Path) -> Path:
    """Write the newer version to ``path`` (a ``…pages-articles.xml`` name: a full dump)."""
    text = SAMPLE.read_text(encoding="utf-8")
    head_end = text.index("  <page>")
    head, body = text[:head_end], text[head_end:]
    pages = re.findall(r"  <page>.*?</page>\n", body, flags=re.S)
    out: list[str] = []
    for page in pages:
        title = re.search(r"<title>(.*?)</title>", page).group(1)  # type: ignore[union-attr]
        if title in ("Tommy Flowers", "Joseph Marie Jacquard", "ENIAC computer"):
            continue
        if title == "Ada Lovelace":
            page = bump(
                page.replace(
                    "== References ==",
                    "Her mother was [[Annabella Milbanke]], who had her tutored in "
                    "mathematics and logic from an early age.\n\n== References ==",
                    1,
                ).replace(
                    "| known_for   = Notes on the [[Analytical Engine]]",
                    "| known_for   = Notes on the [[Analytical Engine]]\n"
                    "| spouse      = William King, 1st Earl of Lovelace",
                    1,
                )
            )
        elif title == "Jacquard machine":
            page = bump(page.replace("[[Joseph Marie Jacquard]]", "Joseph Marie Jacquard"))
        elif title == "Z3 (computer)":
            page = bump(page.replace("<title>Z3 (computer)</title>", "<title>Z3 computer</title>"))
        elif title == "Turing":
            page = bump(page.replace("Alan Turing", "Turing machine"))
        out.append(page)
    out.append(_page("Lord Byron", 901, 90101, LORD_BYRON))
    out.append(redirect_page("Z3 (computer)", 902, "Z3 computer"))
    out.append(redirect_page("Babbage's engine", 903, "Difference Engine"))
    path.write_text(head + "".join(out) + "</mediawiki>\n", encoding="utf-8")
    return path


def pages_of(dump_text: str, page_ids: set[str]) -> list[str]:
    """The ``<page>`` elements of ``dump_text`` whose page id is in ``page_ids``."""
    out = []
    for page in re.findall(r"<page>.*?</page>", dump_text, flags=re.S):
        m = re.search(r"<id>(\d+)</id>", page)
        if m and m.group(1) in page_ids:
            out.append("  " + page + "\n")
    return out


def write_dump(head_from: str, pages: list[str], path: Path) -> Path:
    """A dump of ``pages`` under the ``<mediawiki>`` head (siteinfo) of ``head_from``."""
    head = head_from[: head_from.index("<page>")].rstrip(" ")
    if "<mediawiki" not in head:  # a bare <page> (lintool's single-page exports)
        head = '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.6/" version="0.6">\n'
    path.write_text(head + "".join(pages) + "</mediawiki>\n", encoding="utf-8")
    return path

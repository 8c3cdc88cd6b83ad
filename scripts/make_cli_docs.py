"""Write docs/cli.md from the ``kg-agent`` commands' click definitions.

python scripts/make_cli_docs.py          # rewrite docs/cli.md
python scripts/make_cli_docs.py --check  # exit 1 if it is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

from kg_agent.cli import main
from kg_agent.cli.reference import markdown

TARGET = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def run(argv: list[str]) -> int:
    text = markdown(main)
    if "--check" in argv:
        same = TARGET.exists() and TARGET.read_text(encoding="utf-8") == text
        print(f"{TARGET}: {'up to date' if same else 'out of date'}")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))

"""``python -m kg_agent.cli``: the ``kg-agent`` command without its supervisor."""

from kg_agent.cli import main

main(prog_name="kg-agent")

"""The graph as a long-running service: ``kg-agent serve`` (HTTP API and web page) and
``kg-agent mcp`` (a Model Context Protocol server for agents, over stdio).

Both answer through one :class:`~kg_agent.serve.service.GraphService`: the graph opened
read-only once, a bounded pool of worker threads, the same limits. Needs the ``serve``
extra (``pip install 'kg-agent[serve]'``: FastAPI, uvicorn, the ``mcp`` SDK).
"""

from __future__ import annotations

from kg_agent.serve.service import GraphService, NotFound, ServeOptions, ServiceBusy, ServiceTimeout

__all__ = ["GraphService", "NotFound", "ServeOptions", "ServiceBusy", "ServiceTimeout"]

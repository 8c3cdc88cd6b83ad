"""kg-agent: knowledge-graph question answering over Wikipedia on embedded Kùzu."""

import logging

from kg_agent.exceptions import (
    DatabaseError,
    DatabaseLockedError,
    DatabaseNotFoundError,
    KGAgentError,
    LoadAborted,
    SourceError,
    UnknownFormatError,
)

__version__ = "0.1.0"

# A library logs; the application decides where logs go. Without this, Python's
# last-resort handler prints every warning to stderr, so a degraded LLM call showed
# twice on the CLI: once logged, once from QueryResult.warnings.
logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = [
    "DatabaseError",
    "DatabaseLockedError",
    "DatabaseNotFoundError",
    "KGAgentError",
    "LoadAborted",
    "SourceError",
    "UnknownFormatError",
    "__version__",
]

"""kg-agent: knowledge-graph question answering over Wikipedia on embedded Kùzu."""

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

"""One exception tree, rooted in :class:`KGAgentError`, so callers catch one type.

The CLI turns every ``KGAgentError`` into a one-line message and a non-zero exit;
anything else escaping is a bug.
"""

from __future__ import annotations


def one_line(exc: BaseException, limit: int = 200) -> str:
    """An exception's message on one line (whitespace collapsed, capped), for CLI errors."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


class KGAgentError(Exception):
    """Base class of every error this package raises on purpose."""


class SourceError(KGAgentError):
    """A load source is unreadable: missing, of an unknown format, truncated or malformed.

    ``where`` says where it broke (a page number, a byte offset, a line), so a
    maintainer can look at the file.
    """

    def __init__(self, path: str, message: str, where: str | None = None) -> None:
        self.path = path
        self.message = message
        self.where = where
        loc = f" ({where})" if where else ""
        super().__init__(f"{path}{loc}: {message}")

    def __reduce__(self) -> tuple[type[SourceError], tuple[str, str, str | None]]:
        # raised in parse worker processes and re-raised in the parent
        return (type(self), (self.path, self.message, self.where))


class UnknownFormatError(SourceError):
    """The source's format could not be detected or is not supported."""


class DatabaseError(KGAgentError):
    """The graph database could not be opened or written."""


class DatabaseNotFoundError(DatabaseError):
    """A read path was given a database that does not exist."""


class DatabaseLockedError(DatabaseError):
    """Another process holds the database (Kùzu allows one writer process)."""


class SchemaMismatchError(DatabaseError):
    """The database was built with a different embedding model or schema version."""


class LoadAborted(KGAgentError):
    """A load was interrupted or failed; the database was rolled back to its prior state."""


class InvalidArgumentError(KGAgentError, ValueError):
    """A caller passed a value outside what the API accepts."""

"""What the rules of every aggregate share: the refusal with its code, and stream names.

Games, tables, raffles, the cage and the license import this module; it imports nothing
of the project. A stream is named after its aggregate: ``table:<id>``, ``raffle:<id>``,
``deal:<id>`` (a bell jar deal), and the two singletons ``cage`` and ``license``
(docs/ARCHITECTURE.md "Streams").
"""

from __future__ import annotations

from typing import Final

TABLE_PREFIX: Final = "table:"
RAFFLE_PREFIX: Final = "raffle:"
DEAL_PREFIX: Final = "deal:"
CAGE: Final = "cage"
"""The cage's stream: chips sold and cashed out."""
EXPENSES: Final = "expenses"
"""The expense stream: what the games of chance cost (the GC-7's Part B)."""
LICENSE: Final = "license"
"""The license stream: the organization's license and its occasions."""
DEAL_SERIALS: Final = "deal-serials"
"""The registry of the serial numbers of every bell jar deal of the organization (one
claim per serial, so no serial is registered twice)."""


class RuleError(Exception):
    """A command or configuration that the rules refuse, with a stable protocol error code.

    A refusal is stored as the command's reply, so a retry with the same id gets it again;
    ``stored=False`` marks a refusal that says the server cannot do it now (a secret it
    cannot open), which a retry after the fault is fixed must not meet again."""

    def __init__(self, code: str, message: str, *, stored: bool = True) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.stored = stored

    def __repr__(self) -> str:
        return f"RuleError({self.code!r}, {self.message!r})"


def table_stream(table_id: str) -> str:
    """The stream of table ``table_id``."""
    return f"{TABLE_PREFIX}{table_id}"


def raffle_stream(raffle_id: str) -> str:
    """The stream of raffle ``raffle_id``."""
    return f"{RAFFLE_PREFIX}{raffle_id}"


def deal_stream(deal_id: str) -> str:
    """The stream of bell jar deal ``deal_id``."""
    return f"{DEAL_PREFIX}{deal_id}"


def table_of(stream: str) -> str | None:
    """The table id of a table's stream, None for any other stream."""
    return stream[len(TABLE_PREFIX) :] if stream.startswith(TABLE_PREFIX) else None


def raffle_of(stream: str) -> str | None:
    """The raffle id of a raffle's stream, None for any other stream."""
    return stream[len(RAFFLE_PREFIX) :] if stream.startswith(RAFFLE_PREFIX) else None


def deal_of(stream: str) -> str | None:
    """The deal id of a bell jar deal's stream, None for any other stream."""
    return stream[len(DEAL_PREFIX) :] if stream.startswith(DEAL_PREFIX) else None

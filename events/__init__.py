"""The event vocabulary. Importing this package registers every event type."""

from events import (
    bell_jars,
    black_jack,
    cage,
    dice,
    expenses,
    license,
    merchandise,
    raffles,
    tables,
)
from events.base import Event, event, from_data, registered, to_data, upcaster
from events.envelope import GENESIS_HASH, Envelope, seal

__all__ = [
    "GENESIS_HASH",
    "Envelope",
    "Event",
    "bell_jars",
    "black_jack",
    "cage",
    "dice",
    "event",
    "expenses",
    "from_data",
    "license",
    "merchandise",
    "raffles",
    "registered",
    "seal",
    "tables",
    "to_data",
    "upcaster",
]

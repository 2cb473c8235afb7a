"""Events of a raffle's stream ``raffle:<id>`` (9 NYCRR 4620.22-4620.24).

A raffle spans many occasions and license periods: its whole state lives in its stream.
No event carries personal data: an online sale names its purchaser by an opaque id, the
coarse state the purchaser's device reported, and the reported location sealed under the
purchaser's own key (``services.raffles.vault``), so erasing the person leaves every event,
hash and total as it was (see docs/RULES.md "Raffles").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from events.base import Data, Event, event, upcaster


@event("RaffleOpened", version=2)
@dataclass(frozen=True, slots=True, kw_only=True)
class RaffleOpened(Event):
    """A raffle was set up with its canonical configuration (``kind`` is ``standard``,
    ``fifty_fifty``, ``queen_of_hearts`` or ``treasure_chest``). A Queen of Hearts board
    dealt by the server is committed here: ``config.board.commitments`` holds one
    SHA-256 per position and ``config.board.root`` their combined hash.

    Version 2 adds ``sealed_board``: the dealt board itself (cards and salts by position),
    sealed by the raffle actor's Chance (AES-256-GCM, base64) under the context
    ``<organization>/<raffle>/board``, so the stream holds all a restart needs to reveal
    and nothing a reader can open; ``""`` for a physical board and every other kind."""

    raffle: str
    kind: str
    config: Mapping[str, Any]
    sealed_board: str = ""


@upcaster("RaffleOpened", 1)
def _opened_without_sealed_board(data: Data) -> Data:
    """Version 1 carried no board: a server board dealt then is kept in Redis
    (``keys.raffle_board``) and read from there at each reveal."""
    return {**data, "sealed_board": ""}


@event("DrawingMethodRecorded")
@dataclass(frozen=True, slots=True, kw_only=True)
class DrawingMethodRecorded(Event):
    """The method of drawing the winning tickets, announced before any draw, 4620.22(b)(3):
    ``rng`` (the server's CSPRNG) or ``hand`` (the member in charge draws stubs from the
    drum and enters their serials)."""

    method: str
    description: str


@event("TicketSold")
@dataclass(frozen=True, slots=True, kw_only=True)
class TicketSold(Event):
    """Tickets sold in one sale: consecutive ``serials`` for ``amount`` cents, for the
    drawing of ``round`` (the week of a Queen of Hearts, the occasion of a Treasure Chest,
    1 otherwise). ``face_hash`` is the SHA-256 of the ticket face every ticket carries
    (4620.22(a)(1)); ``price`` is the single-ticket price printed on it.

    ``channel`` is ``door`` or ``online``; an online sale carries ``purchaser`` (an opaque
    id), ``location_state`` (the state the device reported) and ``location_sealed`` (the
    full reported location, base64 of the purchaser-key ciphertext), 4620.22(b)(7).
    ``at`` is when the sale was made (unix ms)."""

    round: int
    serials: tuple[int, ...]
    amount: int
    price: int
    channel: str
    face_hash: str
    at: int
    occasion: str | None = None
    purchaser: str | None = None
    location_state: str | None = None
    location_sealed: str | None = None


@event("RaffleSalesClosed")
@dataclass(frozen=True, slots=True, kw_only=True)
class RaffleSalesClosed(Event):
    """No more tickets for the drawing of ``round``: the drum is closed before the draw."""

    round: int


class Winner(NamedTuple):
    """One ticket drawn: its ``serial``, in draw order; ``key`` is the Treasure Chest key
    hung under the key ticket drawn for it (4620.24(b)(7)), else None."""

    serial: int
    key: int | None


@event("DrawingHeld")
@dataclass(frozen=True, slots=True, kw_only=True)
class DrawingHeld(Event):
    """A drawing of ``round`` was held: the ``winners`` in draw order, drawn by ``method``
    (``rng`` or ``hand``) from ``eligible`` tickets; ``drawing`` counts the raffle's
    drawings (1, 2, …); ``at`` is when it was held (unix ms)."""

    round: int
    drawing: int
    method: str
    eligible: int
    winners: tuple[Winner, ...]
    at: int


@event("ProceedsAllocated")
@dataclass(frozen=True, slots=True, kw_only=True)
class ProceedsAllocated(Event):
    """How a Treasure Chest occasion's ticket money was split, to the cent: ``sales`` =
    ``profit`` + ``prizes`` + ``pool``, 4620.24(b)(2)-(4), (b)(10). ``pool`` went into the
    chest; ``prizes`` is the primary prize pool paid at once (``PrizeAwarded``) and
    ``profit`` the licensee's share (also recorded by ``ProfitKept``)."""

    round: int
    sales: int
    profit: int
    prizes: int
    pool: int


@event("PrizeAwarded")
@dataclass(frozen=True, slots=True, kw_only=True)
class PrizeAwarded(Event):
    """A prize to the holder of ticket ``serial``: ``prize`` names it (``prize`` of a
    standard raffle, ``fifty_fifty``, ``consolation``, ``grand``, ``primary``,
    ``secondary``), ``amount`` its value in cents, ``cash`` whether it is paid in cash."""

    round: int
    serial: int
    prize: str
    amount: int
    cash: bool
    description: str


@event("ProfitKept")
@dataclass(frozen=True, slots=True, kw_only=True)
class ProfitKept(Event):
    """Money the licensee keeps as raffle profit (e.g. the 40 % of 4620.23(b)(11)); a
    negative amount is a prize the licensee paid beyond the ticket money (a Queen of
    Hearts consolation prize, docs/RULES.md)."""

    round: int
    amount: int
    reason: str


@event("CardRevealed")
@dataclass(frozen=True, slots=True, kw_only=True)
class CardRevealed(Event):
    """The winner holding ``serial`` picked ``position`` (1-54) and it was turned face up,
    4620.23(b)(7). ``salt`` is set on a server-dealt board: SHA-256 of
    ``salt:position:card`` equals the position's commitment in ``RaffleOpened``."""

    round: int
    serial: int
    position: int
    card: str
    salt: str | None
    queen_of_hearts: bool


@event("KeyTried")
@dataclass(frozen=True, slots=True, kw_only=True)
class KeyTried(Event):
    """The winner holding ``serial`` tried ``key`` on the chest, 4620.24(b)(7)."""

    round: int
    serial: int
    key: int
    opened: bool


@event("ChestCarriedOver")
@dataclass(frozen=True, slots=True, kw_only=True)
class ChestCarriedOver(Event):
    """No key of ``round`` opened the chest: those keys left play and ``chest`` cents wait
    for the next occasion, 4620.24(b)(8)-(10)."""

    round: int
    chest: int
    keys_removed: tuple[int, ...]
    keys_left: int


@event("AnnouncementRaised")
@dataclass(frozen=True, slots=True, kw_only=True)
class AnnouncementRaised(Event):
    """An announcement the raffle makes by itself, e.g. the 170-day announcement of a
    Treasure Chest, 4620.24(b)(12)."""

    round: int
    kind: str
    text: str


@event("RaffleEnded")
@dataclass(frozen=True, slots=True, kw_only=True)
class RaffleEnded(Event):
    """The raffle is over (its last prize was awarded); later commands get
    ``raffle_ended``."""

    reason: str

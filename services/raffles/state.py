"""A raffle's state, folded from its stream, and the commands it takes.

One state type serves every raffle family; the fields a family does not use keep their
defaults. Money is integer cents. Every field is immutable (frozen dataclass, frozensets,
tuples and read-only mappings), so ``decide`` can never change the state by accident.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from services.raffles.purchasers import PurchaserAccount
from services.raffles.serials import Runs

Method = Literal["rng", "hand"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RaffleState:
    """A raffle folded from its stream; ``version`` is the seq of the last event folded."""

    raffle: str
    version: int = 0
    kind: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)
    face_hash: str = ""
    opened: bool = False
    ended: bool = False
    method: str | None = None
    round: int = 1
    """The drawing the tickets now sold are for: the week of a Queen of Hearts, the
    occasion of a Treasure Chest; always 1 for a standard raffle and a 50/50."""
    sales_open: bool = True
    sold: Runs = ()
    """Every serial ever sold in this raffle (runs of consecutive serials): none is sold
    twice."""
    top_serial: int = 0
    round_serials: Runs = ()
    """The serials sold for the current round."""
    round_sales: int = 0
    """Cents taken for the current round and not yet allocated to prizes or profit."""
    total_sales: int = 0
    tickets: int = 0
    first_sale_ms: int | None = None
    drawings: int = 0
    last_drawing_ms: int | None = None
    excluded: frozenset[int] = frozenset()
    """Standard raffle: tickets that already won (one prize per ticket)."""
    pool: int = 0
    """Money waiting for a prize: the Queen of Hearts grand prize pool, the Treasure Chest."""
    awarded: int = 0
    """Every prize awarded so far (cents), for the series limit."""
    profit: int = 0
    # Queen of Hearts.
    sealed_board: str = ""
    """A server board dealt by the raffle actor's adapter, sealed (``RaffleOpened`` v2);
    ``""`` for a physical board, or a server board dealt before that version (kept in
    Redis, ``services.raffles.board``)."""
    revealed: Mapping[int, str] = field(default_factory=dict)
    """Position (1-54) -> card turned face up."""
    searchers: tuple[tuple[int, int], ...] = ()
    """Winners still to search, in draw order: (week, serial)."""
    # Treasure Chest.
    keys_in_play: frozenset[int] = frozenset()
    handed: Mapping[int, int] = field(default_factory=dict)
    """Keys handed to this round's winners and not yet tried: key -> serial."""
    tried: tuple[int, ...] = ()
    """Keys of the current round tried without opening the chest."""
    drawn_in_round: frozenset[int] = frozenset()
    announced_round: int | None = None
    """The round in which the 170-day announcement of 4620.24(b)(12) was made."""
    event_round: int = 0
    """The round the last event folded belongs to (its ``round``; events' correlation)."""


# Commands: imperatives, as the gateway parsed them. ``now_ms`` is stamped by the gateway.


@dataclass(frozen=True, slots=True, kw_only=True)
class SetupRaffle:
    kind: str
    config: Mapping[str, Any]
    board_commitments: tuple[str, ...] = ()
    """A server-dealt Queen of Hearts board: one commitment per position (see
    ``queen_of_hearts.commit``), written in by the raffle actor's adapter when it deals."""
    sealed_board: str = ""
    """The board the adapter dealt, sealed by its Chance (``services.raffles.actor``);
    recorded in ``RaffleOpened`` with the commitments. Never from a client."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordDrawingMethod:
    method: str
    description: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OnlinePurchase:
    """The facts of an online sale, looked up by the gateway in the purchaser vault.

    ``account`` is personal data: it lives only in memory for the decision (its ``repr``
    redacts every field) and never reaches an event; ``location_sealed`` is the reported
    location sealed under the purchaser's key (base64)."""

    purchaser: str
    account: PurchaserAccount | None
    excluded: bool
    location_state: str | None
    location_sealed: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SellTicket:
    count: int
    amount: int
    now_ms: int
    serial: int | None = None
    occasion: str | None = None
    online: OnlinePurchase | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CloseSales:
    now_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class HoldDrawing:
    now_ms: int
    draws: tuple[int, ...] | None = None
    """``rng`` method: indices drawn by the actor's CSPRNG (``draw_sizes``)."""
    serials: tuple[int, ...] = ()
    """``hand`` method: the serials of the stubs the member in charge drew, in order."""
    keys: tuple[int, ...] = ()
    """``hand`` method, Treasure Chest: the key tickets drawn, one per winner, in order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RevealCard:
    now_ms: int
    position: int
    card: str | None = None
    salt: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TryKey:
    now_ms: int
    key: int
    opened: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class RaiseDueAnnouncements:
    """The server's clock looking in on a raffle (no client sends it): whatever the raffle
    must announce by ``now_ms`` is raised now, even if no one touches the raffle."""

    now_ms: int


RaffleCommand = (
    SetupRaffle
    | RecordDrawingMethod
    | SellTicket
    | CloseSales
    | HoldDrawing
    | RevealCard
    | TryKey
    | RaiseDueAnnouncements
)

"""The audit's commitment check: every card the server committed to before anyone saw it
opens its commitment when it is revealed (docs/AUDIT.md, "What the audit recomputes").

- Black Jack in RNG mode (docs/RULES.md, "The shoe's commitments"): each shuffle publishes
  one commitment per position of its box (``ShoeShuffled``); every card dealt face up and
  the hole card turned up carry their salt, and SHA-256 of ``card:salt`` must be the
  commitment of their position; a retired shuffle's ``ShoeRevealed`` gives its seed and its
  box, and the seed must give that very order (``shuffle_order``), every commitment of it
  (``commitments``) and every card dealt from it.
- A Queen of Hearts board the server dealt (4620.23(b)(7)): ``RaffleOpened`` holds one
  commitment per position and their root; the root must be the hash of the commitments
  (``board_root``) and every ``CardRevealed`` of that board must open its position's
  commitment with its salt (SHA-256 of ``salt:position:card``).

Pure: reads the shuffles, cards and board events only, one small record per table and
per raffle."""

from __future__ import annotations

from dataclasses import dataclass, field

from events.black_jack import CardDealt, HoleCardRevealed, ShoeRevealed, ShoeShuffled
from events.envelope import Envelope
from events.raffles import CardRevealed, RaffleOpened
from events.tables import TableOpened
from services.aggregates import RAFFLE_PREFIX, TABLE_PREFIX
from services.audit.checking import RuleChecker, body
from services.games import black_jack_shoe as shoe
from services.games.black_jack import BLACK_JACK
from services.raffles import queen_of_hearts as qoh

RNG_MODE = "rng"
"""The mode in which the server deals from a committed shoe (docs/RULES.md)."""


@dataclass(slots=True)
class _Shuffle:
    """A committed box: its commitments and the cards seen from it, by position."""

    commitments: tuple[str, ...]
    seen: dict[int, str] = field(default_factory=dict)


@dataclass(slots=True)
class _Shoe:
    """A Black Jack table's committed shuffles and the hole card dealt face down."""

    shuffles: dict[int, _Shuffle] = field(default_factory=dict)
    hole: tuple[int, int] | None = None


class CommitmentChecker(RuleChecker):
    """Every revealed card against the commitment made before it was dealt."""

    name: str = "commitments"
    types: frozenset[str] | None = frozenset(
        {
            TableOpened.NAME,
            ShoeShuffled.NAME,
            CardDealt.NAME,
            HoleCardRevealed.NAME,
            ShoeRevealed.NAME,
            RaffleOpened.NAME,
            CardRevealed.NAME,
        }
    )

    def __init__(self) -> None:
        super().__init__()
        self.shoes: dict[str, _Shoe] = {}
        self.boards: dict[str, tuple[str, ...]] = {}
        self.skipped: set[str] = set()

    def abandon(self, stream: str) -> None:
        """A table or raffle whose event cannot be read is checked no further."""
        self.skipped.add(stream)
        self.shoes.pop(stream, None)
        self.boards.pop(stream, None)

    def read(self, envelope: Envelope) -> None:
        """Record a commitment; check a reveal against it."""
        if envelope.stream in self.skipped:
            return
        ev = body(self, envelope)
        if ev is None:
            return
        stream = envelope.stream
        if stream.startswith(TABLE_PREFIX):
            if isinstance(ev, TableOpened):
                if ev.game == BLACK_JACK.name and ev.outcome_mode == RNG_MODE:
                    self.shoes[stream] = _Shoe()
                return
            table = self.shoes.get(stream)
            if table is None:
                return  # dealer mode (the dealer enters every card), or not read from its start
            match ev:
                case ShoeShuffled():
                    table.shuffles[ev.shuffle] = _Shuffle(tuple(ev.commitments))
                    self.checked["shuffles committed"] += 1
                case CardDealt() if not ev.face_up:
                    table.hole = (ev.shuffle, -1 if ev.position is None else ev.position)
                case CardDealt():
                    self._card(envelope, table, ev.shuffle, ev.position, ev.card, ev.salt)
                case HoleCardRevealed():
                    if table.hole is None:
                        self.differs(envelope, "hole card revealed: none was dealt", None, ev.card)
                    else:
                        self._card(envelope, table, *table.hole, ev.card, ev.salt)
                        table.hole = None
                case ShoeRevealed():
                    self._revealed(envelope, table, ev)
        elif stream.startswith(RAFFLE_PREFIX):
            if isinstance(ev, RaffleOpened):
                self._board(envelope, ev)
            elif isinstance(ev, CardRevealed):
                self._reveal(envelope, ev)

    # --- Black Jack -------------------------------------------------------------------------

    def _card(
        self,
        envelope: Envelope,
        table: _Shoe,
        shuffle: int,
        position: int | None,
        card: str | None,
        salt: str | None,
    ) -> None:
        """A card turned up at ``position`` of ``shuffle`` opens its commitment (at an RNG
        table every card comes from a committed position, with its salt)."""
        self.checked["cards"] += 1
        committed = table.shuffles.get(shuffle)
        what = f"{envelope.type}: card {position} of shuffle {shuffle}"
        if position is None or committed is None or not 0 <= position < len(committed.commitments):
            self.differs(envelope, f"{what}: no commitment", "a committed position", position)
            return
        if card is None or salt is None:
            self.differs(envelope, f"{what}: salt", "the card and its salt", [card, salt])
            return
        commitment = committed.commitments[position]
        if not shoe.opens(commitment, card, salt):
            self.differs(envelope, f"{what} opens its commitment", commitment, card)
        committed.seen[position] = card

    def _revealed(self, envelope: Envelope, table: _Shoe, ev: ShoeRevealed) -> None:
        """A retired shuffle's seed gives its box's order, every commitment and every card
        dealt from it."""
        self.checked["shuffles revealed"] += 1
        committed = table.shuffles.get(ev.shuffle)
        what = f"ShoeRevealed shuffle {ev.shuffle}"
        if committed is None:
            self.differs(envelope, f"{what}: it was never committed", None, ev.shuffle)
            return
        try:
            seed = bytes.fromhex(ev.seed)
        except ValueError:
            self.differs(envelope, f"{what}: seed", "hex", ev.seed)
            return
        cards = tuple(ev.cards)
        order = shoe.shuffle_order(seed, cards)
        if order != cards:
            self.differs(envelope, f"{what}: the seed's order", list(order), list(cards))
        if shoe.commitments(seed, cards) != committed.commitments:
            self.differs(
                envelope, f"{what}: the commitments of its box", "those of ShoeShuffled", "others"
            )
        for position, card in sorted(committed.seen.items()):
            if position >= len(cards) or cards[position] != card:
                revealed = cards[position] if position < len(cards) else None
                self.differs(envelope, f"{what}: card {position} dealt", card, revealed)

    # --- Queen of Hearts --------------------------------------------------------------------

    def _board(self, envelope: Envelope, ev: RaffleOpened) -> None:
        board = ev.config.get("board") if ev.kind == "queen_of_hearts" else None
        if not isinstance(board, dict) or board.get("mode") != "server":
            return
        commitments = tuple(board.get("commitments", ()))
        self.checked["boards committed"] += 1
        root = qoh.board_root(commitments)
        if len(commitments) != qoh.POSITIONS or root != board.get("root"):
            self.differs(envelope, "RaffleOpened: the board's root", root, board.get("root"))
        self.boards[envelope.stream] = commitments

    def _reveal(self, envelope: Envelope, ev: CardRevealed) -> None:
        commitments = self.boards.get(envelope.stream)
        if commitments is None:
            return  # a physical board: the card is read off it, nothing was committed
        self.checked["positions revealed"] += 1
        what = f"CardRevealed position {ev.position}"
        if not 1 <= ev.position <= len(commitments):
            self.differs(envelope, f"{what}: no such position", len(commitments), ev.position)
            return
        committed = commitments[ev.position - 1]
        if ev.salt is None or qoh.commitment(ev.salt, ev.position, ev.card) != committed:
            self.differs(envelope, f"{what} opens its commitment", committed, ev.card)

"""The raffle actor's rules adapter: raffle rules, chance, and replies.

Raffle money is cash at the door or online, not chips: no balance moves. Randomness and the
server's secrets enter a raffle here and nowhere else, from the server's Chance (a CSPRNG,
unbiased), against the exact state the command is decided on; the pure rules take what was
drawn as data:

- a drawing's random indices (a sale queued just before the drawing is in the drum);
- a server-dealt Queen of Hearts board, when a ``SetupRaffle`` opens the raffle: a
  Fisher-Yates shuffle of the deck from ``below``, a salt per position, the commitments,
  and the board sealed (:func:`seal_board`), all carried in ``RaffleOpened``;
- at a ``RevealCard`` on that board, the position's card and salt, opened from the sealed
  board in the raffle's state.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

import structlog

from events.base import Event
from events.envelope import Envelope
from services.aggregates import RAFFLE_PREFIX, RuleError
from services.games.base import Chance
from services.raffles import queen_of_hearts as qoh
from services.raffles import rules
from services.raffles.state import (
    HoldDrawing,
    RaffleCommand,
    RaffleState,
    RevealCard,
    SetupRaffle,
)

log = structlog.get_logger(__name__)

Board = tuple[tuple[str, ...], tuple[str, ...]]
"""A dealt board: the cards by position (``cards[i]`` at position ``i + 1``) and their salts."""


def board_context(org: str, raffle: str) -> str:
    """What a raffle's board is sealed for: ``<organization>/<raffle>/board`` (ids hold no
    ``/``), so a sealed board opens for its own raffle of its own organization only."""
    return f"{org}/{raffle}/board"


def deal_board(chance: Chance) -> Board:
    """The deck on the 54 positions, shuffled by Fisher-Yates from the last position down
    (each swap index uniform by ``chance.below``, unbiased), and a fresh salt per position."""
    cards = list(qoh.DECK)
    for i in range(len(cards) - 1, 0, -1):
        j = chance.below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards), tuple(chance.salt() for _ in cards)


def seal_board(chance: Chance, context: str, board: Board) -> str:
    """The board sealed for ``context``: the compact JSON ``{"cards": [...], "salts":
    [...]}`` (by position) sealed by ``chance.seal``."""
    cards, salts = board
    plain = json.dumps({"cards": list(cards), "salts": list(salts)}, separators=(",", ":"))
    return chance.seal(context, plain.encode())


def open_board(chance: Chance, context: str, sealed: str) -> Board:
    """The board :func:`seal_board` sealed; ValueError when it was not sealed by this
    server for ``context`` (another secret, another raffle, or altered) or is not a board."""
    try:
        value = json.loads(chance.unseal(context, sealed))
        cards, salts = tuple(value["cards"]), tuple(value["salts"])
    except (KeyError, TypeError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"no board sealed for {context}") from e
    if len(cards) != qoh.POSITIONS or len(salts) != qoh.POSITIONS:
        raise ValueError(f"no board sealed for {context}")
    return cards, salts


class RaffleRules:
    """What the generic actor needs to run one raffle's stream."""

    def __init__(self, chance: Chance, org: str) -> None:
        self.chance = chance
        self.org = org
        """The organization whose raffles these are (part of a board's seal context)."""

    def initial(self, stream: str) -> RaffleState:
        return RaffleState(raffle=stream.removeprefix(RAFFLE_PREFIX))

    def decide(self, state: RaffleState, command: RaffleCommand) -> list[Event]:
        if isinstance(command, HoldDrawing) and command.draws is None and state.method == "rng":
            sizes = rules.draw_sizes(state)
            draws = tuple(self.chance.below(size) for size in sizes)
            command = dataclasses.replace(command, draws=draws)
        elif isinstance(command, SetupRaffle):
            command = self._deal(state, command)
        elif isinstance(command, RevealCard) and state.sealed_board:
            command = self._card(state, command)
        return rules.decide(state, command)

    def _deal(self, state: RaffleState, command: SetupRaffle) -> SetupRaffle:
        """A setup that opens a Queen of Hearts raffle with a server board gets the board
        dealt now: its commitments and its sealed form. A raffle already open is never dealt
        again (the rules compare the setup with the board it has)."""
        if (
            state.opened
            or command.kind != "queen_of_hearts"
            or command.config.get("board") != "server"
        ):
            return command
        board = deal_board(self.chance)
        return dataclasses.replace(
            command,
            board_commitments=qoh.commit(*board),
            sealed_board=seal_board(self.chance, board_context(self.org, state.raffle), board),
        )

    def _card(self, state: RaffleState, command: RevealCard) -> RevealCard:
        """The card and salt at the position asked for, opened from the raffle's sealed board
        (whatever card the command named); the rules check them against the commitment. A
        position off the board is left for the rules to refuse."""
        if not 1 <= command.position <= qoh.POSITIONS:
            return command
        try:
            cards, salts = open_board(
                self.chance, board_context(self.org, state.raffle), state.sealed_board
            )
        except ValueError:
            # Not transient: the server's secret is not the one the board was dealt under.
            log.error("raffle_board_unreadable", raffle=state.raffle)
            raise RuleError(
                "board_unreadable",
                "the sealed board cannot be opened with this server's secret; nothing was revealed",
                stored=False,
            ) from None
        i = command.position - 1
        return dataclasses.replace(command, card=cards[i], salt=salts[i])

    def evolve(self, state: RaffleState, event: Event) -> RaffleState:
        return rules.evolve(state, event)

    def correlation(self, state: RaffleState) -> str | None:
        """Events carry the raffle and the round they belong to (``qoh-1#12``: week 12)."""
        if not state.opened:
            return None
        return f"{state.raffle}#{state.event_round or state.round}"

    def moves(self, events: Sequence[Event]) -> list[tuple[str, int]]:
        return []

    def debtors(self, state: RaffleState, command: RaffleCommand) -> Sequence[str]:
        return ()

    def result(self, state: RaffleState, envelopes: Sequence[Envelope]) -> dict[str, Any]:
        """The reply: the last seq and the round; what the command's events decided."""
        out: dict[str, Any] = {
            "seq": envelopes[-1].seq if envelopes else state.version,
            "round": state.round,
        }
        prizes: list[dict[str, Any]] = []
        for env in envelopes:
            data = env.data
            match env.type:
                case "TicketSold":
                    out["serials"] = data["serials"]
                    out["amount"] = data["amount"]
                    out["round"] = data["round"]
                case "DrawingHeld":
                    out["drawing"] = data["drawing"]
                    out["winners"] = data["winners"]
                case "CardRevealed":
                    out["card"] = data["card"]
                    out["position"] = data["position"]
                    out["queen_of_hearts"] = data["queen_of_hearts"]
                case "KeyTried":
                    out["opened"] = data["opened"]
                case "ChestCarriedOver":
                    out["chest"] = data["chest"]
                case "PrizeAwarded":
                    prizes.append(
                        {"serial": data["serial"], "prize": data["prize"], "amount": data["amount"]}
                    )
                case "RaffleEnded":
                    out["ended"] = True
        if prizes:
            out["prizes"] = prizes
        return out

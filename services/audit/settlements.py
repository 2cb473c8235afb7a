"""The audit's settlement check: every ``Settled``, every ``PartSettled`` (each part of a
Black Jack hand, each roll of a dice game) and every ``RoundEnded`` of a table's stream is
what the table's pure rules give from that stream's own events and its configuration
(``TableOpened.config``): each bet's result, amount and paid, and the wagered and paid
totals (docs/AUDIT.md, "What the audit recomputes"; docs/RULES.md for each game's rules).

The checker folds each table's stream with the table's pure rules
(``services.tables.rules.evolve``, and through it the game's own), keeping one running
state per stream. No command is stored, so a settling step is rebuilt from the events
that record it, and the game's own pure function is called on the state before it:

- a round of one outcome (roulette, the wheels, the merchandise wheel, Joker Seven and the
  dice games of one roll): at its ``OutcomeRecorded``, ``outcome_and_settlement`` of the
  recorded outcome over the bets on the layout;
- a dice game of several rolls (Beat the Dealer, Bang): at each ``DiceRolled``, the game's
  ``decide`` of the roll rebuilt from it (the faces entered, or the draw they came from);
- Black Jack: at each ``PartSettled``, the part recomputed from the hands and the dealer's
  cards as the stream deals them (``black_jack_part``);
- a voided round: at ``RoundVoided``, the game's ``void``; a table closing with wagers
  riding (Bang): the game's ``closing``.

The settlements the rules give are then matched, in order, against those the command
recorded (the events sharing the step's ``causation``). Pure: envelopes in, data kept."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import events.black_jack
import events.dice
import events.merchandise
import events.tables
from events.base import Event
from events.dice import DiceRolled
from events.envelope import Envelope
from events.records import replacer
from events.tables import (
    BetPlaced,
    BetSettlement,
    OutcomeRecorded,
    PartSettled,
    RoundEnded,
    RoundVoided,
    Settled,
    TableOpened,
)
from services.aggregates import TABLE_PREFIX, RuleError
from services.audit.base import JSONValue
from services.audit.checking import RuleChecker, body, module_events, type_names
from services.games.base import JSON, PlacedBet, Round
from services.games.black_jack import BLACK_JACK, INSURANCE_ODDS, BlackJack, _Run
from services.games.black_jack_state import (
    BLACKJACK,
    DEALER_STANDS_ON,
    BlackJackPlay,
    Hand,
    against_dealer_natural,
    hand_total,
    is_natural,
    showdown,
    turn_hand,
)
from services.games.dice_rounds import RollDice
from services.games.single_outcome import SingleOutcome
from services.tables.rules import TableState, evolve, placed_on, round_view, table_game

TABLE_TYPES = type_names(
    module_events(events.tables),
    module_events(events.black_jack),
    module_events(events.dice),
    module_events(events.merchandise),
)
"""Every event type a table's stream holds: the checker folds them all."""
SETTLING = frozenset({Settled.NAME, PartSettled.NAME, RoundEnded.NAME})
"""The events whose figures the rules must give (docs/AUDIT.md)."""
_TRIGGERS = frozenset({OutcomeRecorded.NAME, DiceRolled.NAME, RoundVoided.NAME})
"""The first event of a settling step, from which the step is rebuilt."""

Settlement = Settled | PartSettled | RoundEnded


@dataclass(slots=True, kw_only=True)
class _Table:
    """One table's running state as the audit folds it."""

    state: TableState
    expected: deque[Event] = field(default_factory=deque)
    """What the step being read settles, by the rules, not yet matched."""
    causation: str | None = None
    """The command (``causation``) whose step gave :attr:`expected`."""
    last: Envelope | None = None
    """The last envelope of that command read so far (where a missing event is named)."""
    refused: str | None = None
    """A command whose step the rules refuse (reported once, its settlements unmatched)."""
    skipped: bool = False
    """Not read from its start, or an event the rules could not fold: no longer checked."""
    placing: list[Envelope] = field(default_factory=list)
    """Bets placed not folded yet (:meth:`SettlementChecker._place`)."""
    bets_only_on_layout: bool = False
    """The table's game keeps nothing of a bet in its own state (a round of one outcome
    but the merchandise wheel): a bet placed is folded as the table's ``evolve`` folds it,
    from the stored data, without the game's ``evolve`` (which returns its state as it is)."""


_BET_PLACED = BetPlaced.NAME
_bet_placed = replacer(TableState, "version", "placed")
"""``replace(state, version=, placed=)``: the table's fold of a bet placed at a game that
keeps nothing of it (``services.tables.rules.evolve``, its ``BetPlaced`` branch)."""


def keeps_nothing_of_bets(game: object) -> bool:
    """Whether ``game``'s own fold ignores a bet placed: a round of one outcome whose game
    does not override the adapter's ``evolve`` (every one but the merchandise wheel)."""
    return isinstance(game, SingleOutcome) and type(game).evolve is SingleOutcome.evolve


def rebuilt_roll(roll: DiceRolled, outcome_mode: str) -> RollDice:
    """The ``roll`` step that recorded ``roll``: at an RNG table the server's draw (one
    integer below 6 per die is its face less one, ``services.games.dice.drawn_roll``), at
    a dealer table the faces and the thrower as the dealer entered them."""
    if outcome_mode == "rng":
        return RollDice(player=roll.player, draw=tuple(face - 1 for face in roll.dice))
    return RollDice(player=roll.player, dice=list(roll.dice), thrown_by=roll.thrown_by)


ENTERED_THROWER = "cage"
"""A thrower every dice game of one roll takes (4620.11(b), 4620.12, 4620.13), standing in
for ``rng`` when a drawn roll is read again as the dealer would enter it."""


def device_outcome(
    game: SingleOutcome,
    config: Mapping[str, JSON],
    outcome: Mapping[str, JSON],
    previous: str | None,
    outcome_mode: str,
) -> dict[str, JSON]:
    """The recorded ``outcome`` read again by the game's own ``check_outcome`` against the
    table's previous result: what the rules record for it (RuleError when it is not an
    outcome of the device, or, at roulette, not spun from the previous pocket,
    4620.4(c)(2)-(3)). A roll is entered as its faces and thrower (its total is derived);
    a drawn roll's thrower ``rng`` is the source check's (``sources.py``)."""
    raw = dict(outcome)
    roll = "dice" in raw and "thrown_by" in raw
    if roll:
        raw.pop("total", None)
        if outcome_mode == "rng":
            raw["thrown_by"] = ENTERED_THROWER
    canonical = dict(game.game.check_outcome(config, raw, previous))
    if roll and outcome_mode == "rng":
        canonical["thrown_by"] = outcome["thrown_by"]
    return canonical


def check_phase(state: TableState, ev: RoundVoided | OutcomeRecorded) -> None:
    """The table's own rule on when a round's outcome or its void may come: RuleError
    ``round_not_open`` when no round is in play, ``bets_open`` for an outcome before no
    more bets (4620.4(c)(1); ``services.tables.rules`` and ``single_outcome``)."""
    if state.phase == "idle":
        raise RuleError("round_not_open", f"no round of {state.table} is in play")
    if isinstance(ev, OutcomeRecorded) and state.phase == "betting":
        raise RuleError("bets_open", f"round {state.round}: an outcome before no more bets")


def hand_result(tie_option: int, play: BlackJackPlay, hand: Hand) -> tuple[str, bool] | None:
    """How Black Jack settles ``hand`` now, as (result, paid at the natural's odds), or None
    when the rules settle it later: against a dealer's natural a natural ties under the
    option and any other hand loses, 4620.5(h)(1); a count over 21 loses at once, (e),
    (h)(3); a natural (two cards, never a split hand) is paid at once, (h)(2), (k)(5); once
    every hand is done and the dealer stands on 17 or more, each hand against the dealer's
    count, (i)-(j), ties under the license's option (h), BJ-4."""
    total = hand_total(hand.cards)[0]
    if play.dealer_natural:
        return against_dealer_natural(tie_option, hand.cards), False
    if total > BLACKJACK:
        return "lost", False
    if not hand.split and is_natural(hand.cards):
        return "won", True
    if turn_hand(play) is not None or play.hole is not None or not play.hole_dealt:
        return None  # not the dealer's turn yet: no hand is compared
    dealer = hand_total(play.dealer_cards)[0]
    if dealer < DEALER_STANDS_ON:
        return None  # the dealer draws on 16 or less, 4620.5(i)(2)
    return showdown(tie_option, total, dealer), False


def black_jack_part(
    config: Mapping[str, JSON], play: BlackJackPlay, view: Round, part: str
) -> PartSettled | None:
    """The ``PartSettled`` the Black Jack rules give for ``part`` in the state before it
    (None: the rules settle no such part now). ``insurance``: after the peek, each open
    insurance wins 2 to 1 on a dealer's natural, else loses, 4620.5(m); ``hand:<id>``: the
    hand settled as :func:`hand_result` says, by the game's own ``settle_hand``."""
    if part == "insurance":
        open_insurance = [i for i in play.insurance if not i.settled]
        if not play.peeked or not open_insurance:
            return None
        won = play.dealer_natural
        settlements = tuple(
            BetSettlement(
                i.wager_id,
                i.player,
                i.amount,
                "won" if won else "lost",
                i.amount + i.amount * INSURANCE_ODDS[0] // INSURANCE_ODDS[1] if won else 0,
            )
            for i in open_insurance
        )
        return PartSettled(
            round=play.round,
            part="insurance",
            settlements=settlements,
            wagered=sum(s.amount for s in settlements),
            paid=sum(s.paid for s in settlements),
        )
    if not part.startswith("hand:"):
        return None
    hand = next((h for h in play.hands if h.hand == part[len("hand:") :]), None)
    if hand is None or hand.settled:
        return None
    result = hand_result(int(config["tie_option"]), play, hand)
    if result is None:
        return None
    run = _Run(BLACK_JACK, config, play, view, None)  # the game's own payoff code
    run.settle_hand(hand, result[0], natural_paid=result[1])
    settled = run.events[0]
    assert isinstance(settled, PartSettled)
    return settled


def _round_over(play: BlackJackPlay) -> bool:
    """Black Jack ends a round only when every hand and every insurance is settled."""
    return all(h.settled for h in play.hands) and all(i.settled for i in play.insurance)


def label(ev: Event) -> str:
    """A settlement event as a discrepancy names it: ``Settled round 212``,
    ``PartSettled round 3 hand:1.0``."""
    text = f"{ev.NAME} round {getattr(ev, 'round', '?')}"
    if isinstance(ev, PartSettled):
        text += f" {ev.part}"
    return text


def summary(ev: Event | None) -> JSONValue:
    """A settlement event as plain data, for a discrepancy's figures."""
    if ev is None:
        return None
    out: dict[str, JSONValue] = {"type": ev.NAME, "round": getattr(ev, "round", None)}
    if isinstance(ev, Settled | PartSettled):
        out["settlements"] = [dict(s._asdict()) for s in ev.settlements]
        out["wagered"] = ev.wagered
        out["paid"] = ev.paid
    if isinstance(ev, PartSettled):
        out["part"] = ev.part
    return out


class SettlementChecker(RuleChecker):
    """Every settlement of every table recomputed with the pure rules (module docstring)."""

    name: str = "settlements"
    types: frozenset[str] | None = TABLE_TYPES

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, _Table] = {}

    def read(self, envelope: Envelope) -> None:
        """Fold one event of a table's stream; check it if it settles."""
        table = self.tables.get(envelope.stream)
        if table is None:
            if not envelope.stream.startswith(TABLE_PREFIX):
                return
            table = _Table(state=TableState(table=envelope.stream.removeprefix(TABLE_PREFIX)))
            self.tables[envelope.stream] = table
            if envelope.seq != 1:
                table.skipped = True
                self.checked["tables not read from their start"] += 1
        if table.bets_only_on_layout and envelope.type == _BET_PLACED:
            table.placing.append(envelope)  # folded with the next event (:meth:`_place`)
            return
        if table.placing:
            self._place(table)
        if table.skipped:
            return
        ev = body(self, envelope)
        if ev is None:
            table.skipped = True
            return
        if table.causation is not None and envelope.causation != table.causation:
            self._unmatched(table)
        if envelope.type in _TRIGGERS:
            self._expect(table, envelope, ev)
        if envelope.type in SETTLING:
            self._settled(table, envelope, ev)
        if table.causation == envelope.causation:
            table.last = envelope
        try:
            table.state = evolve(table.state, ev)
            if isinstance(ev, TableOpened):
                table.bets_only_on_layout = keeps_nothing_of_bets(table_game(table.state))
        except Exception as e:  # a tampered event the rules cannot fold: named, not fatal
            self.differs(
                envelope, f"{envelope.type}: the table's rules cannot fold it", None, repr(e)
            )
            table.skipped = True

    def _place(self, table: _Table) -> None:
        """The bets placed since the table's last other event, folded as the table's
        ``evolve`` folds each (the game keeps nothing of them), read from their data: the
        one event of a night that outnumbers all the others, so the table's state is
        copied once for the run of them rather than once per bet."""
        placing, table.placing = table.placing, []
        if table.skipped:
            return
        if table.causation is not None:
            self._unmatched(table)
        state = table.state
        node = state.placed
        for seq, envelope in enumerate(placing, start=state.version + 1):
            data = envelope.data
            try:
                placed = PlacedBet(
                    bet_id=data["bet_id"],
                    player=data["player"],
                    bet=data["bet"],
                    amount=data["amount"],
                )
            except (KeyError, TypeError) as e:
                self.differs(
                    envelope, "BetPlaced cannot be read as its type", "a valid body", repr(e)
                )
                table.skipped = True
                return
            node = placed_on(placed, seq, node)
        table.state = _bet_placed(state, state.version + len(placing), node)

    def abandon(self, stream: str) -> None:
        """A table whose event cannot be read is checked no further."""
        table = self.tables.get(stream)
        if table is not None:
            table.skipped = True
            table.placing = []
            table.expected.clear()

    def finish(self) -> None:
        """A step's settlements that never came are named at the end of the log."""
        for table in self.tables.values():
            if table.placing:
                self._place(table)
            self._unmatched(table)

    # --- what the rules give ------------------------------------------------------------

    def _expect(self, table: _Table, envelope: Envelope, ev: Event) -> None:
        """The settlements of the step ``ev`` begins, by the rules, on the state before it."""
        self._unmatched(table)
        state = table.state
        if not state.opened:
            return
        game = table_game(state)
        view = round_view(state)
        produced: list[Event] | None = None
        try:
            if isinstance(ev, RoundVoided | OutcomeRecorded):
                check_phase(state, ev)
            if isinstance(ev, RoundVoided):
                produced = game.void(state.config, state.play, view)
            elif isinstance(ev, OutcomeRecorded) and isinstance(game, SingleOutcome):
                canonical = device_outcome(
                    game, state.config, ev.outcome, state.play.last_outcome, state.outcome_mode
                )
                if canonical != dict(ev.outcome):
                    self.differs(
                        envelope,
                        f"OutcomeRecorded round {state.round}: the outcome as the rules read it",
                        canonical,
                        dict(ev.outcome),
                    )
                produced = game.outcome_and_settlement(
                    state.config, state.play, view, ev.outcome, ev.source
                )
            elif isinstance(ev, DiceRolled) and not isinstance(game, SingleOutcome | BlackJack):
                step = rebuilt_roll(ev, state.outcome_mode)
                produced = game.decide(state.config, state.play, view, step)
        except RuleError as e:
            self.differs(
                envelope,
                f"{envelope.type} round {state.round}: the rules refuse this step ({e.code})",
                "a step the rules allow",
                e.message,
            )
            table.refused = envelope.causation
            return
        if produced is None:
            return
        table.expected = deque(p for p in produced if p.NAME in SETTLING)
        table.causation = envelope.causation
        table.last = envelope

    def _direct(self, table: _Table, envelope: Envelope, ev: Event) -> Event | None:
        """What the rules settle at ``ev`` when no step read before gave it: a Black Jack
        part or round end, or the wagers a table closing returns (``TableHooks.closing``)."""
        state = table.state
        if not state.opened:
            return None
        game = table_game(state)
        if isinstance(game, BlackJack):
            play: BlackJackPlay = state.play
            if isinstance(ev, PartSettled):
                return black_jack_part(state.config, play, round_view(state), ev.part)
            if isinstance(ev, RoundEnded):
                return RoundEnded(round=play.round) if _round_over(play) else None
            return None
        closing: Any = getattr(game, "closing", None)
        if closing is not None and state.phase == "idle" and isinstance(ev, PartSettled):
            produced: list[Event] = [
                p
                for p in closing(state.config, state.play, round_view(state))
                if p.NAME in SETTLING
            ]
            if produced:
                table.expected = deque(produced[1:])
                table.causation = envelope.causation
                table.last = envelope
                return produced[0]
        return None

    # --- matching -------------------------------------------------------------------------

    def _settled(self, table: _Table, envelope: Envelope, ev: Event) -> None:
        if table.refused == envelope.causation:
            return  # its step is already named as refused
        if table.expected and table.causation == envelope.causation:
            expected: Event | None = table.expected.popleft()
        else:
            expected = self._direct(table, envelope, ev)
        self.compare(envelope, expected, ev)

    def _unmatched(self, table: _Table) -> None:
        """Settlements the rules gave for a step that its command did not record."""
        while table.expected:
            missing = table.expected.popleft()
            if table.last is not None:
                self.differs(
                    table.last,
                    f"{label(missing)}: the rules settle it, the stream does not record it",
                    summary(missing),
                    None,
                )
        table.causation = None
        table.last = None

    def compare(self, envelope: Envelope, expected: Event | None, found: Event) -> None:
        """Name every figure of the recorded settlement ``found`` that differs from what the
        rules give (``expected``; None when they settle nothing there)."""
        what = label(found)
        self.checked["rounds ended" if isinstance(found, RoundEnded) else "settlements"] += 1
        if expected is None:
            self.differs(envelope, f"{what}: the rules settle nothing here", None, summary(found))
            return
        if expected.NAME != found.NAME:
            self.differs(envelope, f"{what}: event", expected.NAME, found.NAME)
            return
        expected_round, found_round = (
            getattr(expected, "round", None),
            getattr(found, "round", None),
        )
        if expected_round != found_round:
            self.differs(envelope, f"{what}: round", expected_round, found_round)
        if (
            isinstance(expected, PartSettled)
            and isinstance(found, PartSettled)
            and expected.part != found.part
        ):
            self.differs(envelope, f"{what}: part", expected.part, found.part)
        if (
            isinstance(expected, Settled)
            and isinstance(found, Settled)
            and dict(expected.outcome) != dict(found.outcome)
        ):
            self.differs(envelope, f"{what}: outcome", dict(expected.outcome), dict(found.outcome))
        if isinstance(expected, Settled | PartSettled) and isinstance(found, Settled | PartSettled):
            self._bets(envelope, what, expected, found)

    def _bets(
        self,
        envelope: Envelope,
        what: str,
        expected: Settled | PartSettled,
        found: Settled | PartSettled,
    ) -> None:
        if (
            expected.settlements == found.settlements
            and expected.wagered == found.wagered
            and expected.paid == found.paid
        ):
            self.checked["bets"] += len(expected.settlements)
            return  # every bet as the rules give it (compared one by one only if not)
        recorded = {s.bet_id: s for s in found.settlements}
        if len(recorded) != len(found.settlements):
            self.differs(envelope, f"{what}: a bet settled twice", 1, len(found.settlements))
        for want in expected.settlements:
            self.checked["bets"] += 1
            got = recorded.pop(want.bet_id, None)
            if got is None:
                self.differs(envelope, f"{what}: bet {want.bet_id}", dict(want._asdict()), None)
                continue
            for field_name in ("player", "amount", "result", "paid"):
                a, b = getattr(want, field_name), getattr(got, field_name)
                if a != b:
                    self.differs(envelope, f"{what}: bet {want.bet_id} {field_name}", a, b)
        for extra in recorded.values():
            self.differs(
                envelope,
                f"{what}: bet {extra.bet_id} is not one the rules settle here",
                None,
                dict(extra._asdict()),
            )
        if expected.wagered != found.wagered:
            self.differs(envelope, f"{what}: wagered", expected.wagered, found.wagered)
        if expected.paid != found.paid:
            self.differs(envelope, f"{what}: paid", expected.paid, found.paid)

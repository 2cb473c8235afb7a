"""The audit's raffle check: every drawing's winners, pools, prizes and the share the
licensee kept are what the raffle's pure rules give from its own stream (docs/AUDIT.md,
"What the audit recomputes"; 4620.22-4620.24, docs/RULES.md "Raffles").

Per raffle the checker folds the stream with ``services.raffles.rules.evolve`` and reads
it one command at a time (the events sharing a ``causation``). No command is stored, so
each sale, drawing, reveal and key tried is rebuilt from the events that record it:

- a sale (``TicketSold``): ``SellTicket`` of its count, amount, first serial and occasion
  at its time (its price, serials never sold before, the sales window, the prize limits,
  4620.22(b)(1), (9), (10)); an online sale's purchaser, checked against the purchaser
  vault when it was made (4620.22(b)(7)), is personal data the log does not hold;
- a drawing (``DrawingHeld``): ``HoldDrawing`` with the winners as drawn (by hand the
  serials and keys; by the CSPRNG the indices into the drum and the keys that give them,
  which exist only when every winner was in the drum), at the drawing's time;
- a Queen of Hearts reveal (``CardRevealed``): ``RevealCard`` of its position, card and
  salt; a Treasure Chest key (``KeyTried``): ``TryKey`` of that key and whether it opened.

``services.raffles.rules.decide`` of the rebuilt command, on the state before it, must
give the events recorded: the drawing, the split of the sales into profit, prizes and pool
(``ProceedsAllocated``), each prize (``PrizeAwarded``), the share kept (``ProfitKept``),
a chest carried over and the raffle's end, field for field. A rebuilt command the rules
refuse (a winner not in the drum, a drawing out of turn) is named with its code."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import events.raffles
from events.base import Event
from events.envelope import Envelope
from events.raffles import (
    AnnouncementRaised,
    CardRevealed,
    ChestCarriedOver,
    DrawingHeld,
    KeyTried,
    PrizeAwarded,
    ProceedsAllocated,
    ProfitKept,
    RaffleEnded,
    TicketSold,
)
from services.aggregates import RAFFLE_PREFIX, RuleError
from services.audit.base import JSONValue
from services.audit.checking import RuleChecker, body, module_events, type_names
from services.raffles import queen_of_hearts, standard, treasure_chest
from services.raffles.rules import decide, evolve
from services.raffles.state import (
    HoldDrawing,
    RaffleCommand,
    RaffleState,
    RevealCard,
    SellTicket,
    TryKey,
)

RAFFLE_TYPES = type_names(module_events(events.raffles))
"""Every event type of a raffle's stream: the checker folds them all."""
RECOMPUTED = frozenset(
    cls.NAME
    for cls in (
        DrawingHeld,
        ProceedsAllocated,
        PrizeAwarded,
        ProfitKept,
        ChestCarriedOver,
        RaffleEnded,
        CardRevealed,
        KeyTried,
        TicketSold,
    )
)
"""The events of a sale, a drawing, a reveal or a key whose every field the rules give."""
ONLINE_FIELDS = ("channel", "purchaser", "location_state", "location_sealed")
"""What an online sale records of its purchaser, checked when it was decided against the
purchaser vault (4620.22(b)(7)): personal data the log does not hold, so not recomputed."""


@dataclass(slots=True, kw_only=True)
class _Raffle:
    state: RaffleState
    before: RaffleState
    """The state before the command being read."""
    causation: str | None = None
    command: list[tuple[Envelope, Event]] = field(default_factory=list)
    skipped: bool = False


def drum(state: RaffleState) -> tuple[int, ...]:
    """The tickets in the drum for the next drawing, ascending (each family's rule:
    4620.22(a), 4620.23(b)(3), 4620.24(b)(6))."""
    if state.kind == "queen_of_hearts":
        return queen_of_hearts.eligible(state)
    if state.kind == "treasure_chest":
        return treasure_chest.eligible(state)
    return standard.eligible(state)


def indices(pool: Sequence[int], drawn: Sequence[int]) -> tuple[int, ...] | None:
    """The CSPRNG's indices that draw ``drawn`` from ``pool`` without replacement (the
    inverse of ``services.raffles.tickets.pick``); None when one was not in what was left."""
    left = list(pool)
    out: list[int] = []
    for item in drawn:
        if item not in left:
            return None
        i = left.index(item)
        out.append(i)
        left.pop(i)
    return tuple(out)


def rebuilt_drawing(state: RaffleState, held: DrawingHeld) -> HoldDrawing | str:
    """The ``HoldDrawing`` that recorded ``held`` on ``state``, or why none can have."""
    serials = tuple(w.serial for w in held.winners)
    keys = tuple(w.key for w in held.winners if w.key is not None)
    if state.method != "rng":
        return HoldDrawing(now_ms=held.at, serials=serials, keys=keys)
    draws = indices(drum(state), serials)
    if draws is None:
        return "a winner that was not in the drum"
    if keys:
        key_draws = indices(sorted(state.keys_in_play), keys)
        if key_draws is None:
            return "a key ticket that was not in play"
        draws += key_draws
    return HoldDrawing(now_ms=held.at, draws=draws)


def rebuilt_command(
    state: RaffleState, recorded: Sequence[tuple[Envelope, Event]]
) -> RaffleCommand | str | None:
    """The command a sale, a drawing, a reveal or a key tried was recorded by (None: a
    command whose figures are not recomputed here, such as closing the drum). A sale is
    rebuilt as sold at the door: an online sale's purchaser fields are copied from it."""
    for env, ev in recorded:
        if isinstance(ev, TicketSold):
            serial = ev.serials[0] if ev.serials else None
            return SellTicket(
                count=len(ev.serials), amount=ev.amount, now_ms=ev.at, serial=serial,
                occasion=ev.occasion,
            )  # fmt: skip
        if isinstance(ev, DrawingHeld):
            return rebuilt_drawing(state, ev)
        if isinstance(ev, CardRevealed):
            return RevealCard(now_ms=env.ts, position=ev.position, card=ev.card, salt=ev.salt)
        if isinstance(ev, KeyTried):
            return TryKey(now_ms=env.ts, key=ev.key, opened=ev.opened)
    return None


def _plain(value: object) -> JSONValue:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | bool) or value is None:
        return value
    return repr(value)


class DrawingChecker(RuleChecker):
    """Every drawing, reveal and key of every raffle recomputed with the pure rules."""

    name: str = "raffles"
    types: frozenset[str] | None = RAFFLE_TYPES

    def __init__(self) -> None:
        super().__init__()
        self.raffles: dict[str, _Raffle] = {}

    def read(self, envelope: Envelope) -> None:
        """Fold one event of a raffle's stream; at a command's end, recompute it."""
        if not envelope.stream.startswith(RAFFLE_PREFIX):
            return
        raffle = self.raffles.get(envelope.stream)
        if raffle is None:
            state = RaffleState(raffle=envelope.stream.removeprefix(RAFFLE_PREFIX))
            raffle = _Raffle(state=state, before=state, skipped=envelope.seq != 1)
            self.raffles[envelope.stream] = raffle
            if raffle.skipped:
                self.checked["raffles not read from their start"] += 1
        if raffle.skipped:
            return
        ev = body(self, envelope)
        if ev is None:
            raffle.skipped = True
            return
        if envelope.causation != raffle.causation:
            self._command_read(envelope.stream, raffle)
            if raffle.skipped:
                return
            raffle.before = raffle.state
            raffle.causation = envelope.causation
        raffle.command.append((envelope, ev))
        try:
            raffle.state = evolve(raffle.state, ev)
        except Exception as e:  # a tampered event the rules cannot fold: named, not fatal
            self.differs(
                envelope, f"{envelope.type}: the raffle's rules cannot fold it", None, repr(e)
            )
            raffle.skipped = True

    def abandon(self, stream: str) -> None:
        """A raffle whose event cannot be read is checked no further."""
        raffle = self.raffles.get(stream)
        if raffle is not None:
            raffle.skipped = True
            raffle.command = []

    def finish(self) -> None:
        """The last command of each raffle."""
        for stream, raffle in self.raffles.items():
            if not raffle.skipped:
                self._command_read(stream, raffle)

    def _command_read(self, stream: str, raffle: _Raffle) -> None:
        """:meth:`_recompute` the command just read; whatever a tampered command raises is
        named at its last event."""
        if not raffle.command:
            return
        last = raffle.command[-1][0]
        try:
            self._recompute(raffle)
        except Exception as e:  # a tampered command no rule expects: named, not fatal
            self.differs(last, f"{last.type}: the rules cannot read it", None, repr(e))
            self.abandon(stream)

    def _recompute(self, raffle: _Raffle) -> None:
        recorded, raffle.command = raffle.command, []
        state = raffle.before
        while recorded and isinstance(recorded[0][1], AnnouncementRaised):
            state = evolve(state, recorded[0][1])  # decide raises them before the command
            recorded = recorded[1:]
        if not recorded:
            return
        command = rebuilt_command(state, recorded)
        if command is None:
            return
        first = recorded[0][0]
        if isinstance(command, str):
            self.differs(first, f"{first.type}: the rules draw no such winner", None, command)
            return
        kind = {HoldDrawing: "drawings", SellTicket: "sales"}.get(type(command), "reveals")
        self.checked[kind] += 1
        try:
            expected = [e for e in decide(state, command) if e.NAME in RECOMPUTED]
            if isinstance(command, SellTicket):
                sold = next(ev for _env, ev in recorded if isinstance(ev, TicketSold))
                expected = [
                    dataclasses.replace(e, **{f: getattr(sold, f) for f in ONLINE_FIELDS})
                    if isinstance(e, TicketSold)
                    else e
                    for e in expected
                ]
        except RuleError as e:
            self.differs(first, f"{first.type}: the rules refuse it ({e.code})", None, e.message)
            return
        found = [(env, ev) for env, ev in recorded if ev.NAME in RECOMPUTED]
        for i, want in enumerate(expected):
            if i >= len(found):
                self.differs(
                    recorded[-1][0],
                    f"{want.NAME}: the rules give it, the stream does not record it",
                    _fields(want),
                    None,
                )
                continue
            self._compare(found[i][0], want, found[i][1])
        for env, extra in found[len(expected) :]:
            self.differs(env, f"{extra.NAME}: the rules give no such event", None, _fields(extra))

    def _compare(self, envelope: Envelope, want: Event, got: Event) -> None:
        self.checked["events"] += 1
        if want.NAME != got.NAME:
            self.differs(envelope, "event", want.NAME, got.NAME)
            return
        what = f"{got.NAME} round {getattr(got, 'round', '')}".rstrip()
        for f in dataclasses.fields(want):  # type: ignore[arg-type]
            a, b = getattr(want, f.name), getattr(got, f.name)
            if a != b:
                self.differs(envelope, f"{what}: {f.name}", _plain(a), _plain(b))


def _fields(ev: Event) -> JSONValue:
    return {f.name: _plain(getattr(ev, f.name)) for f in dataclasses.fields(ev)}  # type: ignore[arg-type]

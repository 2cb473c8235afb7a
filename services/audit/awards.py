"""The audit's merchandise check: every item a merchandise wheel awards is what its shelf
gives each winner, and the wheel never passes its aggregate prize limit (docs/AUDIT.md,
"What the audit recomputes"; 4620.10(d)-(e), GML 189(6)(a)(1)).

Per merchandise wheel the checker folds the wheel's own state (the game's ``evolve``: the
shelf as stocked and awarded, each round's exposure) and, at each ``Settled``, computes
with the game's pure ``awards`` what the round's winners are handed: the oldest item of
the winning section's prize class for each winning bet, in the order placed, the running
aggregate, and a ``PrizeLimitReached`` when the wheel must close. Those are matched, in
order, against the ``MerchandiseAwarded`` and ``PrizeLimitReached`` events the command
recorded; an award with no settlement before it, or an aggregate past the limit, is named
too. The settlement's own figures are the settlement check's (``settlements.py``)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from events.base import Event
from events.envelope import Envelope
from events.merchandise import MerchandiseAwarded, MerchandiseStocked, PrizeLimitReached
from events.tables import BetCancelled, BetPlaced, RoundOpened, Settled, TableOpened
from services.aggregates import TABLE_PREFIX, RuleError
from services.audit.base import JSONValue
from services.audit.checking import RuleChecker, body
from services.games.merchandise import MERCHANDISE, MERCHANDISE_WHEEL, MerchandisePlay, awards

_AWARDING = frozenset({MerchandiseAwarded.NAME, PrizeLimitReached.NAME})


@dataclass(slots=True, kw_only=True)
class _Wheel:
    config: Mapping[str, Any]
    play: MerchandisePlay
    expected: deque[Event] = field(default_factory=deque)
    causation: str | None = None
    last: Envelope | None = None


def _plain(ev: Event | None) -> JSONValue:
    if isinstance(ev, MerchandiseAwarded):
        return {
            "bet_id": ev.bet_id,
            "item": ev.item,
            "prize": ev.prize,
            "value": ev.value,
            "aggregate": ev.aggregate,
        }
    if isinstance(ev, PrizeLimitReached):
        return {"type": ev.NAME, "aggregate": ev.aggregate, "limit": ev.limit}
    return None


class AwardChecker(RuleChecker):
    """Every merchandise award against the shelf and the aggregate prize limit."""

    name: str = "awards"
    types: frozenset[str] | None = frozenset(
        {
            TableOpened.NAME,
            RoundOpened.NAME,
            BetPlaced.NAME,
            BetCancelled.NAME,
            Settled.NAME,
            MerchandiseStocked.NAME,
            MerchandiseAwarded.NAME,
            PrizeLimitReached.NAME,
        }
    )

    def __init__(self) -> None:
        super().__init__()
        self.wheels: dict[str, _Wheel] = {}

    def read(self, envelope: Envelope) -> None:
        """Fold a merchandise wheel's event; match its awards against the shelf's."""
        if not envelope.stream.startswith(TABLE_PREFIX):
            return
        if envelope.type == TableOpened.NAME:
            if envelope.data.get("game") != MERCHANDISE_WHEEL:
                return
            opened = body(self, envelope)
            if isinstance(opened, TableOpened):
                config = opened.config
                play = MERCHANDISE.evolve(config, MERCHANDISE.initial(config), opened)
                self.wheels[envelope.stream] = _Wheel(config=config, play=play)
            return
        wheel = self.wheels.get(envelope.stream)
        if wheel is None:
            return  # not a merchandise wheel (or not read from its opening)
        ev = body(self, envelope)
        if ev is None:
            return
        if wheel.causation is not None and envelope.causation != wheel.causation:
            self._unmatched(wheel)
        if isinstance(ev, Settled):
            self._expect(wheel, envelope, ev)
        elif envelope.type in _AWARDING:
            self._match(wheel, envelope, ev)
        try:
            wheel.play = MERCHANDISE.evolve(wheel.config, wheel.play, ev)
        except Exception as e:  # a tampered award of an item the shelf never held
            self.differs(
                envelope, f"{envelope.type}: the wheel's rules cannot fold it", None, repr(e)
            )
            del self.wheels[envelope.stream]

    def abandon(self, stream: str) -> None:
        """A wheel whose event cannot be read is checked no further."""
        self.wheels.pop(stream, None)

    def finish(self) -> None:
        """Awards the rules give that the log never recorded."""
        for wheel in self.wheels.values():
            self._unmatched(wheel)

    def _expect(self, wheel: _Wheel, envelope: Envelope, ev: Settled) -> None:
        self._unmatched(wheel)
        wheel.causation = envelope.causation
        wheel.last = envelope
        if not ev.outcome:
            return  # a voided round: nothing won, nothing awarded
        self.checked["rounds"] += 1
        try:
            section = int(ev.outcome["section"])
            expected = awards(wheel.play.shelf, wheel.config, ev.round, section, ev.settlements)
        except (RuleError, KeyError, TypeError, ValueError) as e:
            self.differs(
                envelope,
                f"Settled round {ev.round}: the shelf cannot honour its winners",
                "an item for every winner under the limit",
                str(e),
            )
            return
        wheel.expected = deque(expected)

    def _match(self, wheel: _Wheel, envelope: Envelope, ev: Event) -> None:
        self.checked["awards" if isinstance(ev, MerchandiseAwarded) else "limits reached"] += 1
        wheel.last = envelope
        limit = wheel.play.shelf.limit
        if isinstance(ev, MerchandiseAwarded) and ev.aggregate > limit:
            self.differs(
                envelope,
                f"MerchandiseAwarded {ev.item}: aggregate over the limit",
                limit,
                ev.aggregate,
            )
        if not wheel.expected or wheel.causation != envelope.causation:
            self.differs(envelope, f"{envelope.type}: no winner is owed it", None, _plain(ev))
            return
        want = wheel.expected.popleft()
        if want != ev:
            what = f"{envelope.type} round {getattr(ev, 'round', '')}".rstrip()
            self.differs(envelope, what, _plain(want), _plain(ev))

    def _unmatched(self, wheel: _Wheel) -> None:
        while wheel.expected:
            missing = wheel.expected.popleft()
            if wheel.last is not None:
                what = f"{missing.NAME}: the shelf gives it, the stream does not record it"
                self.differs(wheel.last, what, _plain(missing), None)
        wheel.causation = None
        wheel.last = None

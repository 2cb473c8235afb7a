"""What the audit's rule checkers share: the counts and discrepancies a checker keeps, and
the rebuilding of a stream's event bodies from their envelopes (docs/AUDIT.md, "What the
audit recomputes"). Pure: a checker is fed envelopes and keeps only data."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from events.base import Event, event_class
from events.envelope import Envelope
from services.audit.base import Discrepancy, JSONValue


def type_names(*modules_classes: Iterable[type[Event]]) -> frozenset[str]:
    """The registered names of the event classes given."""
    return frozenset(cls.NAME for classes in modules_classes for cls in classes)


def module_events(module: object) -> list[type[Event]]:
    """Every event class a module of ``events`` defines (registered under its own name)."""
    out: list[type[Event]] = []
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, Event) and value is not Event:
            name = getattr(value, "NAME", None)
            if name is not None and event_class(name) is value:
                out.append(value)
    return out


class RuleChecker:
    """The part of :class:`services.audit.base.Checker` every rule checker shares."""

    name: str = ""
    types: frozenset[str] | None = frozenset()

    def __init__(self) -> None:
        self.checked: Counter[str] = Counter()
        self.discrepancies: list[Discrepancy] = []

    def differs(
        self,
        env: Envelope,
        what: str,
        expected: JSONValue,
        found: JSONValue,
        *,
        seq: int | None = -1,
    ) -> None:
        """Record that the event ``env`` holds ``found`` where the rules give ``expected``
        (``seq`` None: a figure of the whole stream)."""
        self.discrepancies.append(
            Discrepancy(
                check=self.name,
                stream=env.stream,
                seq=env.seq if seq == -1 else seq,
                what=what,
                expected=expected,
                found=found,
                log_id=env.log_id,
            )
        )

    def observe(self, envelope: Envelope) -> None:
        """Check one event (:meth:`read`). Tampered data may hold what no rule expects (a
        face that is not a number, a card that is not a string): whatever it raises is
        named as a discrepancy of that event, and its stream is checked no further
        (:meth:`abandon`), so one forged event never stops the audit."""
        try:
            self.read(envelope)
        except Exception as e:  # any fault of a tampered event: named, not fatal
            self.differs(
                envelope, f"{envelope.type}: the rules cannot read it", "data of its type", repr(e)
            )
            self.abandon(envelope.stream)

    def read(self, envelope: Envelope) -> None:
        """Check and fold one event of one of :attr:`types`, in log order."""
        raise NotImplementedError

    def abandon(self, stream: str) -> None:
        """Check ``stream`` no further (after an event of it that cannot be read)."""

    def finish(self) -> None:
        """Nothing is left to check at the end of the log (a checker that keeps pending
        expectations overrides this)."""


def body(checker: RuleChecker, env: Envelope) -> Event | None:
    """The typed body of ``env``, or None (a discrepancy recorded) when it cannot be read
    as its type: a tampered event whose data no longer fits its schema."""
    try:
        return env.event()
    except Exception as e:  # any malformed data: the event is named, the audit goes on
        checker.differs(env, f"{env.type} cannot be read as its type", "a valid body", repr(e))
        return None

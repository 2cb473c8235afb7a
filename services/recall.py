"""Game recall: one round of a table as it happened, from the table's own events.

``GET /api/tables/{id}/rounds/{n}`` and ``casino-night recall --table T --round N``
(docs/AUDIT.md, "Game recall"). :func:`recall_round` is the pure builder: from the events
of one round it gives the bets, every step and card, the outcome and its source, the
settlement, the voids and cancellations, each with who did it (the envelope's actor) and
when (its ts). :func:`read_round` finds those events in the table's stream in at most
:data:`MAX_RECALL_READS` reads, whatever the stream holds: the table's round index (a sorted
set the append script writes with each ``RoundOpened``, ``keys.rounds``) gives the seq of
the round's ``RoundOpened``, checked against the event; where it does not place the round
(a stream begun before the index was kept), a binary search over the seqs (a table's round
numbers never go down along its stream) of at most :data:`MAX_SEARCH_READS` probes of
:data:`PROBE_PAGE` entries, refused past them (:class:`RecallTooCostly`); then range reads
of growing size (at most :data:`MAX_ROUND_EVENTS` events) take the round.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from events.codec import decode
from events.envelope import Envelope
from services.aggregates import table_stream
from services.store.redis_store import EventStore

PROBE_PAGE = 8
"""Entries one probe of the search reads: enough to step over the few events of a table
that belong to no round (a shuffle, a seating, a restock) in one read."""
MAX_SEARCH_READS = 40
"""The most probes one recall's search may read, when the table's round index does not
place the round (a stream begun before the index was kept; an entry that does not match
its event): enough for the binary search of a stream of 2^40 events whose rounds are
close together. A search that runs out (long runs of events of no round) answers
:class:`RecallTooCostly`, never more reads."""
MAX_ROUND_EVENTS = 20_000
"""The most events one recall reads after the round's ``RoundOpened``: a round of
thousands of bets fits; a longer one is answered cut short (``complete`` false)."""
FIRST_ROUND_PAGE = 64
"""Entries the first read of the round takes (a round of a few bets fits); each next read
takes twice as many, up to :data:`LAST_ROUND_PAGE`, so a short round does not pay for
reading the rounds after it."""
LAST_ROUND_PAGE = 2048
AFTER_END_EVENTS = 16
"""The events of no round after the round's end that a recall shows ("after the round": a
retired shoe revealed, a prize limit reached, the table closed, which come right after
it); a longer run before the next round (a dealer's seatings) is not read further."""


def _round_reads() -> int:
    """The most reads the round itself takes: pages of 64, 128, … 2,048 entries until
    :data:`MAX_ROUND_EVENTS`, plus the read that finds the stream's end."""
    reads, size, taken = 0, FIRST_ROUND_PAGE, 0
    while taken < MAX_ROUND_EVENTS:
        reads, taken, size = reads + 1, taken + size, min(2 * size, LAST_ROUND_PAGE)
    return reads + 1


MAX_ROUND_READS = _round_reads()
"""The most reads that take the round once its ``RoundOpened`` is found (15)."""
MAX_RECALL_READS = 1 + 1 + 1 + MAX_SEARCH_READS + MAX_ROUND_READS
"""Every read one recall may make, whatever the stream holds: the table's ``TableOpened``,
one round trip to the round index, the read that checks the indexed ``RoundOpened``, at
most :data:`MAX_SEARCH_READS` probes and :data:`MAX_ROUND_READS` reads of the round (58).
With the index whole (every table stream the append script began), a recall takes 3 reads
and those of its round: 4 for a round of a few bets, whatever the stream holds between
rounds."""
MAX_ROUND_NUMBER = 2**53 - 1
"""The largest round number a request may name (the protocol's largest safe integer)."""

ROUND_ENDS = frozenset({"Settled", "RoundEnded"})
"""The events that end a round: a round of one outcome ends with its ``Settled``, one of
many steps with its ``RoundEnded`` (events/tables.py)."""
OUTCOME_EVENTS = frozenset({"OutcomeRecorded", "DiceRolled", "CardDealt", "HoleCardRevealed"})
"""The events that carry what decided the round, each with its source: an outcome entered
or drawn (``source``), a roll (``thrown_by``), a card (dealer mode, or RNG mode with the salt
that opens its commitment)."""


@dataclass(frozen=True, slots=True)
class RoundSpan:
    """What :func:`read_round` read: the table's ``TableOpened`` (None if the stream has
    none), the round's events from its ``RoundOpened`` to the next round's (excluded), and
    how many range reads it took."""

    opened: Envelope | None
    events: tuple[Envelope, ...]
    reads: int
    cut_short: bool


class RecallTooCostly(Exception):
    """The round could not be placed within :data:`MAX_SEARCH_READS` probes (a stream with
    no complete round index and long runs of events of no round): the recall is refused
    (``unavailable``) rather than read without bound."""


def parse_round_number(text: str) -> int | None:
    """A round number as a request or a command line gives it: decimal digits only, 1 to
    :data:`MAX_ROUND_NUMBER`; None for anything else."""
    if not (text.isascii() and text.isdigit()) or len(text) > 16:
        return None
    number = int(text)
    return number if 1 <= number <= MAX_ROUND_NUMBER else None


def _round_of(env: Envelope) -> int | None:
    value = env.data.get("round")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _first_round(page: Sequence[Envelope]) -> int | None:
    """The round of the first event of ``page`` that belongs to one."""
    for env in page:
        number = _round_of(env)
        if number is not None:
            return number
    return None


async def read_round(store: EventStore, table: str, number: int, head: int) -> RoundSpan | None:
    """The events of round ``number`` of ``table``, whose stream holds ``head`` events;
    None when the stream holds no such round. At most :data:`MAX_RECALL_READS` reads:
    the round index (``keys.rounds``, kept by the append script) gives the seq of the
    round's ``RoundOpened``, checked against the event itself; where it does not place the
    round, a binary search over the seqs between the nearest indexed rounds, of at most
    :data:`MAX_SEARCH_READS` probes (:class:`RecallTooCostly` past them)."""
    stream = table_stream(table)
    reads = 0

    async def page(after: int, limit: int) -> list[Envelope]:
        nonlocal reads
        reads += 1
        return [
            decode(raw, log_id) for _i, raw, log_id in await store.read_raw(stream, after, limit)
        ]

    if head < 1:
        return None
    first = await page(0, 1)
    opened = first[0] if first and first[0].type == "TableOpened" else None
    marks = await store.round_marks(stream, number)
    reads += 1
    start: int | None = None
    if marks.exact is not None and 1 <= marks.exact <= head:
        got = await page(marks.exact - 1, 1)
        if got and got[0].type == "RoundOpened" and _round_of(got[0]) == number:
            start = marks.exact
    if start is None:
        if marks.complete and marks.exact is None:
            return None  # every round of the stream is indexed: this one was never opened
        lo = marks.before[1] + 1 if marks.before is not None else 1
        hi = min(marks.after[1], head + 1) if marks.after is not None else head + 1
        start = await _search(page, number, lo, max(lo, hi), head)
        if start is None:
            return None
    return await _take_round(page, opened, number, start, head, lambda: reads)


async def _search(
    page: Callable[[int, int], Awaitable[list[Envelope]]],
    number: int,
    lo: int,
    hi: int,
    head: int,
) -> int | None:
    """The seq in ``[lo, hi)`` from which the next event of a round is of round >=
    ``number`` (None past ``head``): a binary search whose probes read :data:`PROBE_PAGE`
    entries each, at most :data:`MAX_SEARCH_READS` in all (:class:`RecallTooCostly`)."""
    probes = 0

    async def round_at_or_after(seq: int) -> int:
        """The round of the first event at seq >= ``seq`` that has one (past the end:
        beyond every round)."""
        nonlocal probes
        after = seq - 1
        while after < head:
            if probes == MAX_SEARCH_READS:
                raise RecallTooCostly(f"round {number} not placed in {MAX_SEARCH_READS} reads")
            probes += 1
            got = await page(after, PROBE_PAGE)
            if not got:
                break
            found = _first_round(got)
            if found is not None:
                return found
            after = got[-1].seq
        return MAX_ROUND_NUMBER + 1

    while lo < hi:
        mid = (lo + hi) // 2
        if await round_at_or_after(mid) >= number:
            hi = mid
        else:
            lo = mid + 1
    return lo if lo <= head else None


async def _take_round(
    page: Callable[[int, int], Awaitable[list[Envelope]]],
    opened: Envelope | None,
    number: int,
    start: int,
    head: int,
    reads: Callable[[], int],
) -> RoundSpan | None:
    """The round's events from seq ``start`` (its ``RoundOpened``, or the events of no
    round before it) to the next round's ``RoundOpened`` or seq ``head``, in at most
    :data:`MAX_ROUND_READS` reads; after the round's end, at most :data:`AFTER_END_EVENTS`
    events of no round."""
    events: list[Envelope] = []
    after = start - 1
    cut_short = True
    size = FIRST_ROUND_PAGE
    scanned = 0  # entries read, the events of no round before the RoundOpened included
    after_end = -1  # events taken after the round's end (-1: not ended yet)
    while scanned < MAX_ROUND_EVENTS:
        got = await page(after, min(size, MAX_ROUND_EVENTS - scanned))
        size = min(2 * size, LAST_ROUND_PAGE)
        if not got:
            cut_short = False
            break
        scanned += len(got)
        for env in got:
            other = _round_of(env) not in (None, number)
            if events and env.type == "RoundOpened" and other:
                cut_short = False  # the next round: this one is whole
                break
            if not events and other:
                return None  # the search landed on another round: this one was never opened
            if after_end == AFTER_END_EVENTS:
                cut_short = False  # whole, and what follows it is not the round's
                break
            if events or (env.type == "RoundOpened" and _round_of(env) == number):
                events.append(env)
                if after_end >= 0:
                    after_end += 1
                elif env.type in ROUND_ENDS:
                    after_end = 0
        else:
            after = got[-1].seq
            if after >= head:  # the stream's last event: no read to find its end
                cut_short = False
                break
            continue
        break
    if not events:
        if cut_short:  # a run of events of no round longer than a round may be
            raise RecallTooCostly(f"round {number} not found in {MAX_ROUND_EVENTS} events")
        return None
    return RoundSpan(opened, tuple(events), reads(), cut_short)


def _who(env: Envelope) -> dict[str, Any]:
    """Where, who and when of one event: its seq, the envelope's actor, its ts (unix ms)
    and the command it answered (causation)."""
    return {"seq": env.seq, "actor": env.actor, "ts": env.ts, "command": env.causation}


def _settlement_lines(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "bet_id": s["bet_id"],
            "player": s["player"],
            "amount": s["amount"],
            "result": s["result"],
            "paid": s["paid"],
        }
        for s in data["settlements"]
    ]


def recall_round(
    table: str, number: int, events: Sequence[Envelope], opened: Envelope | None = None
) -> dict[str, Any]:
    """Round ``number`` of ``table`` as it happened, from its events in stream order (from
    its ``RoundOpened``; :func:`read_round` gives them) and the table's ``TableOpened``.

    ``bets``: each bet with who placed it and when, its cancellation, the wagers added to
    it (a double, a split, an insurance, 4620.5(k)-(m)) and its settlement; ``steps``:
    every event of the round in order (every card, roll and call), each with its actor
    and ts; ``outcomes``: what decided the round with its source (an outcome entered by the
    dealer or drawn, ``dealer``/``rng``; a roll's thrower; a card); ``settlement``: every
    ``Settled`` or ``PartSettled`` with its lines, and the totals; ``voided``: the void
    (who, why) if the round was voided; ``status``: ``in_play``, ``settled``, ``voided``.
    Events after the round's end and before the next round (a shoe revealed, a prize
    limit reached, the table closed) are among the steps, marked ``after_end``. Pure."""
    bets: dict[str, dict[str, Any]] = {}
    wagers: dict[str, dict[str, Any]] = {}
    steps: list[dict[str, Any]] = []
    outcomes: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    awards: list[dict[str, Any]] = []
    voided: dict[str, Any] | None = None
    ended: dict[str, Any] | None = None
    started: dict[str, Any] | None = None
    for env in events:
        data = env.data
        steps.append({**_who(env), "type": env.type, "data": data, "after_end": ended is not None})
        if ended is not None:
            continue
        match env.type:
            case "RoundOpened":
                started = _who(env)
            case "BetPlaced":
                bet = {
                    "bet_id": data["bet_id"],
                    "player": data["player"],
                    "bet": data["bet"],
                    "amount": data["amount"],
                    "placed": _who(env),
                    "cancelled": None,
                    "wagers": [],
                    "settlement": [],
                }
                bets[data["bet_id"]] = bet
                wagers[data["bet_id"]] = bet
            case "BetCancelled":
                if data["bet_id"] in bets:
                    bets[data["bet_id"]]["cancelled"] = _who(env)
            case "WagerAdded":
                wager = {
                    "wager_id": data["wager_id"],
                    "kind": data["kind"],
                    "amount": data["amount"],
                    "placed": _who(env),
                }
                owner = bets.get(data["bet_id"])
                if owner is not None:
                    owner["wagers"].append(wager)
                    wagers[data["wager_id"]] = owner
            case "OutcomeRecorded":
                outcomes.append(
                    {
                        **_who(env),
                        "type": env.type,
                        "outcome": data["outcome"],
                        "source": data["source"],
                    }
                )
            case "DiceRolled":
                outcomes.append(
                    {
                        **_who(env),
                        "type": env.type,
                        "outcome": {
                            "dice": data["dice"],
                            "total": data["total"],
                            "turn": data["turn"],
                        },
                        "source": data["thrown_by"],
                    }
                )
            case "CardDealt" | "HoleCardRevealed" if data.get("card") is not None:
                outcomes.append(
                    {
                        **_who(env),
                        "type": env.type,
                        "outcome": {"card": data["card"], "to": data.get("to", "dealer")},
                        "source": "rng" if data.get("salt") else "dealer",
                    }
                )
            case "Settled" | "PartSettled":
                lines = _settlement_lines(data)
                parts.append(
                    {
                        **_who(env),
                        "type": env.type,
                        "part": data.get("part", "round"),
                        "wagered": data["wagered"],
                        "paid": data["paid"],
                        "settlements": lines,
                    }
                )
                for line in lines:
                    owner = wagers.get(line["bet_id"])
                    if owner is not None:
                        owner["settlement"].append(line)
            case "MerchandiseAwarded":
                awards.append(
                    {
                        **_who(env),
                        "bet_id": data["bet_id"],
                        "player": data["player"],
                        "item": data["item"],
                        "prize": data["prize"],
                        "value": data["value"],
                    }
                )
            case "RoundVoided":
                voided = {**_who(env), "reason": data["reason"]}
        if env.type in ROUND_ENDS:
            ended = _who(env)
    status = "in_play" if ended is None else "voided" if voided is not None else "settled"
    config = opened.data if opened is not None else {}
    return {
        "table": table,
        "round": number,
        "game": config.get("game"),
        "outcome_mode": config.get("outcome_mode"),
        "status": status,
        "opened": started,
        "ended": ended,
        "voided": voided,
        "bets": list(bets.values()),
        "outcomes": outcomes,
        "settlement": {
            "wagered": sum(p["wagered"] for p in parts),
            "paid": sum(p["paid"] for p in parts),
            "parts": parts,
        },
        "merchandise": awards,
        "steps": steps,
        "first_seq": events[0].seq if events else None,
        "last_seq": events[-1].seq if events else None,
    }


async def recall_from_store(store: EventStore, table: str, number: int) -> dict[str, Any] | None:
    """Round ``number`` of ``table`` (:func:`recall_round`) read from ``store``
    (:func:`read_round`); None when the table's stream holds no such round."""
    head = (await store.head(table_stream(table))).version
    span = await read_round(store, table, number, head)
    if span is None:
        return None
    recalled = recall_round(table, number, span.events, span.opened)
    recalled["complete"] = not span.cut_short
    return recalled

"""The ops dashboard: the ``dashboard`` view's data and the alerts it shows.

:func:`dashboard_view` is a pure function of the runtime's parts (the night, the tables'
states, the projections, the alert ring, the log position and the time, all passed in):
no I/O, no clock. :class:`Alerts` is the process's ring of recent alerts;
:class:`NightWatch` raises the alerts the folded log shows (a table or wheel closed, a
wheel at 80 % of its limit) and :class:`LagWatch` those of projections behind the log;
the runtime feeds them (``services.runtime``). Money is in cents (docs/CONSOLES.md, "Ops
dashboard", says where each figure comes from).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from projections.bankroll import TABLE_FIELDS, Bankrolls
from projections.control_sheets import ControlSheets
from projections.raffles import Raffles
from projections.timeline import Timeline
from services.aggregates import TABLE_PREFIX
from services.games.base import Round
from services.tables.rules import BetNode, TableState, table_game


class TableSpecLike(Protocol):
    """What the view reads of a night's table (``services.night.TableSpec``)."""

    @property
    def id(self) -> str: ...
    @property
    def game(self) -> str: ...
    @property
    def outcome_mode(self) -> str: ...


class Night(Protocol):
    """What the view reads of the night (``services.night.Night``, whose module parses
    dates: this one stays clear of the clock)."""

    @property
    def organization_name(self) -> str: ...
    @property
    def occasion(self) -> str: ...
    @property
    def occasion_name(self) -> str: ...
    @property
    def occasion_starts_at(self) -> int | None: ...
    @property
    def occasion_ends_at(self) -> int | None: ...
    @property
    def tables(self) -> tuple[TableSpecLike, ...]: ...


DASHBOARD_KEY = "night"
"""The one key of the ``dashboard`` view (a subscribe names no key)."""
DASHBOARD_READERS = frozenset({"ops", "auditor"})
"""Who may watch the dashboard; any other role is ``forbidden``."""
DASHBOARD_PUSH_SECONDS = 0.25
"""The dashboard is pushed at most this often, and only after the log's tail folded a page
or an alert was raised: four times a second is live to a reader, and the view (every
table, the cage, the raffles) is computed at most that often, never per event."""
ALERTS_KEPT = 200
"""Alerts one process keeps in memory (the oldest go)."""
ALERTS_SHOWN = 50
"""The newest alerts the dashboard view carries."""
LIMIT_ALERT_PERCENT = 80
"""A merchandise wheel whose prize aggregate reaches this share of its aggregate prize
limit (GML 189(6)(a)(1)) raises ``limit_80``, once per wheel."""
REFUSAL_ALERT_MS = 10_000
"""At most one ``unavailable`` and one ``busy`` alert per this many ms; each carries the
count of such replies since the previous one, so a storm is one line every 10 s."""
PROJECTION_LAG_ALERT_MS = 2_000
"""``projection_lag``: the projections (every figure of the dashboard and the read API)
have not yet folded an org-log entry that was the log's end this many ms ago."""
ALERT_CHECK_SECONDS = 1.0
"""How often the runtime looks at the projections' lag and flushes the refusal counts."""
RECENT_OUTCOMES = 10
"""Outcomes shown per table (the game view's recent ones, newest first)."""
REFUSAL_KINDS = frozenset({"unavailable", "busy"})
"""Reply codes counted into alerts (their own kind each)."""
BANKROLL_NAMES = {"bets": "bets_placed"}
"""A table row's names for the bankroll projection's table figures, where they differ."""
CLOSING_KINDS = {"closed": "table_closed", "prize_limit": "wheel_closed"}
"""The alert kind of each reason a table closes (``projections.timeline``)."""


def log_position(log_id: str) -> tuple[int, int]:
    """An org-log id ``"<ms>-<n>"`` (or ``"0"``) as a pair to compare."""
    ms, _, n = log_id.partition("-")
    return int(ms or 0), int(n or 0)


class Alerts:
    """The process's ring of recent alerts, each ``{"id", "at", "kind", "subject",
    "message"}`` with ids increasing from 1. ``on_raised`` is called after each one."""

    def __init__(self, kept: int = ALERTS_KEPT) -> None:
        self.ring: deque[dict[str, Any]] = deque(maxlen=kept)
        self.last_id = 0
        self.on_raised: Callable[[], None] | None = None
        self._pending: dict[str, int] = {}
        """Refusals counted since the kind's last alert, by kind."""
        self._last_at: dict[str, int] = {}

    def raise_alert(self, kind: str, subject: str, message: str, now_ms: int) -> dict[str, Any]:
        """Add an alert; return it."""
        self.last_id += 1
        alert = {
            "id": self.last_id,
            "at": now_ms,
            "kind": kind,
            "subject": subject,
            "message": message,
        }
        self.ring.append(alert)
        if self.on_raised is not None:
            self.on_raised()
        return alert

    def count(self, kind: str, now_ms: int) -> None:
        """One more reply of ``kind`` (``unavailable``, ``busy``): an alert at once unless
        one of that kind was raised less than :data:`REFUSAL_ALERT_MS` ago (then
        :meth:`flush` raises it when that time is up)."""
        self._pending[kind] = self._pending.get(kind, 0) + 1
        self._flush_kind(kind, now_ms)

    def flush(self, now_ms: int) -> None:
        """Raise the counted refusals whose kind's quiet time is over."""
        for kind in sorted(self._pending):
            self._flush_kind(kind, now_ms)

    def _flush_kind(self, kind: str, now_ms: int) -> None:
        n = self._pending.get(kind, 0)
        last = self._last_at.get(kind)
        if not n or (last is not None and now_ms - last < REFUSAL_ALERT_MS):
            return
        del self._pending[kind]
        self._last_at[kind] = now_ms
        what = "reply" if n == 1 else "replies"
        since = "" if last is None else f" in the last {(now_ms - last) / 1000:.0f} s"
        self.raise_alert(
            kind, "commands", f"{n} {what} {kind}{since} (clients retry with the same id)", now_ms
        )

    def newest(self, n: int = ALERTS_SHOWN) -> list[dict[str, Any]]:
        """The ``n`` newest alerts, newest first (copies)."""
        out: list[dict[str, Any]] = []
        for alert in reversed(self.ring):
            if len(out) >= n:
                break
            out.append(dict(alert))
        return out


class NightWatch:
    """Raises the alerts the folded log shows: a table closed (``table_closed``), a wheel
    closed by its limit (``wheel_closed``), a wheel at :data:`LIMIT_ALERT_PERCENT` of its
    limit (``limit_80``, once per wheel). :meth:`seed` once the projections have caught up
    at start: what happened before this process ran is on the dashboard's grid, not in its
    alerts."""

    def __init__(self, alerts: Alerts) -> None:
        self.alerts = alerts
        self.closings_seen = 0
        self.near_limit: set[str] = set()

    def seed(self, timeline: Timeline, sheets: ControlSheets) -> None:
        self.closings_seen = len(timeline.closings)
        self.near_limit = {t for t, s in sheets.sheets.items() if _near_limit(s)}

    def page(
        self,
        touched: Iterable[str] | None,
        timeline: Timeline,
        sheets: ControlSheets,
        now_ms: int,
    ) -> None:
        """After the projections folded a page whose entries were of the ``touched``
        streams (None: look at every wheel; the closings are counted either way, so a look
        now and then also finds what was folded without a page, at start)."""
        closings = timeline.closings
        while self.closings_seen < len(closings):
            c = closings[self.closings_seen]
            self.closings_seen += 1
            kind = CLOSING_KINDS[c["reason"]]
            message = (
                f"{c['table']} closed at its aggregate prize limit"
                if kind == "wheel_closed"
                else f"{c['table']} closed"
            )
            self.alerts.raise_alert(kind, c["table"], message, now_ms)
        streams = touched if touched is not None else [TABLE_PREFIX + t for t in sheets.sheets]
        for stream in streams:
            if not stream.startswith(TABLE_PREFIX):
                continue
            table = stream[len(TABLE_PREFIX) :]
            sheet = sheets.sheets.get(table)
            if sheet is None or table in self.near_limit or not _near_limit(sheet):
                continue
            self.near_limit.add(table)
            self.alerts.raise_alert(
                "limit_80",
                table,
                f"{table} has awarded {sheet['aggregate']} of its {sheet['limit']} cents"
                f" aggregate prize limit ({LIMIT_ALERT_PERCENT} % reached)",
                now_ms,
            )


def _near_limit(sheet: Mapping[str, Any]) -> bool:
    limit = int(sheet["limit"])
    return limit > 0 and 100 * int(sheet["aggregate"]) >= LIMIT_ALERT_PERCENT * limit


class LagWatch:
    """Whether the projections lag the log: a log end seen at one look (``mark``) that the
    projections have still not folded :data:`PROJECTION_LAG_ALERT_MS` after it was appended
    is a lag of at least that long. One alert per episode; an episode ends once the
    projections fold past the mark."""

    def __init__(self, threshold_ms: int = PROJECTION_LAG_ALERT_MS) -> None:
        self.threshold_ms = threshold_ms
        self.mark: str | None = None
        self.alerted = False

    def observe(self, folded: str, head: str, now_ms: int) -> int | None:
        """The lag (ms) to raise an alert for, or None. ``folded``: the last org-log id the
        projections folded; ``head``: the log's last id, read now."""
        at = log_position(folded)
        if self.mark is not None and at >= log_position(self.mark):
            self.mark = None
            self.alerted = False
        if self.mark is None and at < log_position(head):
            self.mark = head
        if self.mark is None or self.alerted:
            return None
        lag = now_ms - log_position(self.mark)[0]
        if lag <= self.threshold_ms:
            return None
        self.alerted = True
        return lag


class RoundTally:
    """Each table's count and sum of the bets of its current round, kept between two
    computations of the view: a round's bets are a linked list, newest first, that only
    grows (``TableState.placed``), so each computation walks only the bets placed since
    the previous one (all of them again when a bet was cancelled or a round began)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[int, BetNode | None, frozenset[str], int, int]] = {}

    def tally(self, state: TableState) -> tuple[int, int]:
        """``(bets, staked)`` of the table's current round (bets not cancelled)."""
        kept = self._kept.get(state.table)
        stop: BetNode | None = None
        bets = staked = 0
        if kept is not None and kept[0] == state.round and kept[2] is state.cancelled:
            _round, stop, _cancelled, bets, staked = kept
        node = state.placed
        cancelled = state.cancelled
        while node is not None and node is not stop:
            if node.bet.bet_id not in cancelled:
                bets += 1
                staked += node.bet.amount
            node = node.previous
        if node is not stop:  # the list kept is not a tail of this one: count afresh
            return self._afresh(state)
        self._kept[state.table] = (state.round, state.placed, state.cancelled, bets, staked)
        return bets, staked

    def _afresh(self, state: TableState) -> tuple[int, int]:
        self._kept.pop(state.table, None)
        return self.tally(state)


def recent_outcomes(state: TableState) -> tuple[Any, list[Any] | None]:
    """The table's last outcome and its recent ones (newest first), as its game's public
    view shows them; None for a game whose view has none (a round of many steps)."""
    if not state.opened:
        return None, None
    # Only the outcome keys are read: no game's view reads the round's bets.
    round_ = Round(
        table=state.table,
        number=state.round,
        phase=state.phase,
        outcome_mode=state.outcome_mode,
        bets=(),
        next_seq=state.version + 1,
    )
    view = table_game(state).view(state.config, state.play, round_)
    recent = view.get("recent_outcomes")
    return view.get("last_outcome"), (
        list(recent)[:RECENT_OUTCOMES] if recent is not None else None
    )


def hold(house_win: int, handle: int) -> float | None:
    """The house's hold: house result over handle (a fraction, 4 digits), None with no
    handle."""
    return round(house_win / handle, 4) if handle else None


def raised(bankrolls: Bankrolls, occasion: str, raffles: Raffles) -> dict[str, Any]:
    """The night's total raised for the cause so far (docs/CONSOLES.md): the occasion's
    house result at the tables plus the licensee's share the raffles kept (to date: a
    raffle may run over several occasions). No expenses are deducted."""
    totals = bankrolls.occasions.get(occasion) or bankrolls.organization
    tables = int(totals["house_win"])
    kept = sum(int(r["profit_kept"]) for r in raffles.raffles.values())
    return {"tables": tables, "raffles": kept, "total": tables + kept, "expenses": None}


def _table_row(
    spec_game: str,
    spec_mode: str,
    table: str,
    state: TableState | None,
    figures: Mapping[str, int],
    tally: RoundTally,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "table": table,
        "game": spec_game,
        "outcome_mode": spec_mode,
        "phase": None,
        "round": 0,
        "closed": False,
        "bets": 0,
        "staked": 0,
    }
    if state is not None:
        row["phase"] = state.phase
        row["round"] = state.round
        row["closed"] = state.closed
        row["bets"], row["staked"] = tally.tally(state)
    for name in TABLE_FIELDS:
        # The bankroll's ``bets`` (every bet of every round) is ``bets_placed`` here: the
        # row's ``bets`` are the current round's.
        row[BANKROLL_NAMES.get(name, name)] = int(figures.get(name, 0))
    row["hold"] = hold(row["house_win"], row["handle"])
    last, recent = recent_outcomes(state) if state is not None else (None, None)
    row["last_outcome"] = last
    row["recent_outcomes"] = recent
    return row


def _raffle_row(r: Mapping[str, Any]) -> dict[str, Any]:
    board = r.get("board")
    return {
        "raffle": r["raffle"],
        "kind": r["kind"],
        "name": r.get("name"),
        "round": r.get("round"),
        "tickets": r["tickets"],
        "sales": r["sales"],
        "pool": r["pool"],
        "prizes_paid": r["prizes_paid"],
        "profit_kept": r["profit_kept"],
        "rounds": {k: dict(v) for k, v in r["rounds"].items()},
        "occasions": {k: dict(v) for k, v in r["occasions"].items()},
        "board": None
        if board is None
        else {"mode": board.get("mode"), "revealed": dict(board["revealed"])},
        "keys_in_play": None if r.get("keys_in_play") is None else list(r["keys_in_play"]),
        "sales_open": r["sales_open"],
        "ended": r["ended"],
    }


def dashboard_view(
    night: Night,
    tables: Mapping[str, TableState | None],
    bankrolls: Bankrolls,
    control_sheets: ControlSheets,
    raffles: Raffles,
    timeline: Timeline,
    alerts: Alerts,
    log_id: str,
    now_ms: int,
    tally: RoundTally | None = None,
    reports: Iterable[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The ``dashboard`` view (docs/PROTOCOL.md, "Views"): every table of the night with
    its round and its money, the cage, the raised total and the house result's series,
    the occasion's window, each merchandise wheel's position against its limit, each
    raffle, and the newest alerts. ``tables``: each night table's state by id;
    ``log_id``: the org-log id the projections have folded; ``now_ms``: the server's time.
    ``tally`` keeps the rounds' counts between calls (a fresh one counts from scratch).
    ``reports``: the forms that are or will be due (``GET /api/reports``'s lines), shown
    with their deadlines, soonest first."""
    tally = tally if tally is not None else RoundTally()
    org = bankrolls.organization
    occasion_figures = bankrolls.occasions.get(night.occasion)
    return {
        "log_id": log_id,
        "now": now_ms,
        "organization": night.organization_name,
        "tables": [
            _table_row(
                spec.game,
                spec.outcome_mode,
                spec.id,
                tables.get(spec.id),
                bankrolls.tables.get(spec.id, {}),
                tally,
            )
            for spec in night.tables
        ],
        "cage": {
            "issued": org["issued"],
            "redeemed": org["redeemed"],
            "outstanding": org["outstanding"],
            "occasion": None if occasion_figures is None else dict(occasion_figures),
        },
        "occasion": {
            "id": night.occasion,
            "name": night.occasion_name,
            "starts_at": night.occasion_starts_at,
            "ends_at": night.occasion_ends_at,
        },
        "raised": raised(bankrolls, night.occasion, raffles),
        "house_result": {"occasion": night.occasion, "points": timeline.points(night.occasion)},
        "control_sheets": [
            {
                "table": s["table"],
                "aggregate": s["aggregate"],
                "limit": s["limit"],
                "distance_to_limit": s["distance_to_limit"],
                "closed": s["closed"],
                "awarded": len(s["awarded"]),
            }
            for _t, s in sorted(control_sheets.sheets.items())
        ],
        "raffles": [_raffle_row(raffles.raffles[k]) for k in sorted(raffles.raffles)],
        "alerts": alerts.newest(),
        "reports": [
            {k: r[k] for k in ("code", "key", "period", "due", "overdue", "days_left", "pdf")}
            for r in reports
        ],
    }

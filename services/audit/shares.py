"""The audit's pass shared among processes (docs/AUDIT.md, "Cost"): each share reads the
whole org log, in order, and checks the streams it owns; the first share's results and
the others' are then merged into one report, the same report one process would give.

Who owns what. A table's stream is read by the table checks only (its settlements,
awards, commitments, sources), each of which keeps one state per stream, so the tables
are dealt out among the shares: the k-th table stream the log names goes to share
k mod n. Every share reads the same log in the same order, so each deals them the same
way without a word to the others. Every other stream (the cage, the raffles, the deals,
whose commingled banks span several streams, the expenses) stays with the first share.
The balances are sums, so each share adds up the moves of its own streams and the first
sums the shares' before it checks them. An ``OccasionStarted`` is read by every share
(what the report covers follows the occasions in log order), and the first share alone
checks the checkpoints themselves and the signed log entries.

The shares other than the first run :func:`run_share` in processes of their own (a
``spawn`` pool: nothing of the parent's event loop or connections is inherited); each
reaches the store by its URL. Pure but for that read."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from services.aggregates import TABLE_PREFIX
from services.audit.base import Discrepancy, JSONValue

if TYPE_CHECKING:
    from services.audit.balances import BalanceChecker
    from services.audit.chains import SignedCheckpoint
    from services.audit.engine import Audit, AuditReport, Scope

MAX_SHARES = 8
"""The most processes an audit shares its pass among (each reads the whole log: past the
machine's cores, more only cost)."""


@dataclass(frozen=True, slots=True)
class Share:
    """Share ``index`` (0 is the first, run by the audit's own process) of ``of``."""

    index: int
    of: int

    def __post_init__(self) -> None:
        if not 0 <= self.index < self.of:
            raise ValueError(f"no share {self.index} of {self.of}")


class Owners:
    """Which streams a share checks, dealt as the log first names them (module docstring)."""

    __slots__ = ("owned", "share", "tables")

    def __init__(self, share: Share) -> None:
        self.share = share
        self.owned: dict[str, bool] = {}
        """Each stream seen so far: whether this share checks it."""
        self.tables = 0

    def assign(self, stream: str) -> bool:
        """Deal ``stream`` (first seen now) to its share; whether it is this one's."""
        if stream.startswith(TABLE_PREFIX):
            mine = self.tables % self.share.of == self.share.index
            self.tables += 1
        else:
            mine = self.share.index == 0
        self.owned[stream] = mine
        return mine


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareJob:
    """What a share's process needs: where the store is and what to read."""

    share: Share
    redis_url: str
    organization: str
    log_head: str
    checkpoints: Sequence[SignedCheckpoint]
    scope: Scope


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareResult:
    """A share's report, and what the first share merges before it checks the balances and
    the streams' own heads: its players' summed moves and its streams' last seq and hash."""

    report: AuditReport
    balances: Mapping[str, int] = field(default_factory=dict)
    tips: Mapping[str, tuple[int, str]] = field(default_factory=dict)


def run_share(job: ShareJob) -> ShareResult:
    """A share's whole pass, in its own process (the pool's entry point)."""
    return asyncio.run(_share(job))


async def _share(job: ShareJob) -> ShareResult:
    from services.audit.balances import BalanceChecker
    from services.audit.engine import Audit, read_log
    from services.audit.rules import RULE_CHECKERS
    from services.store.redis_store import EventStore, close_redis, open_redis

    client = await open_redis(job.redis_url)
    try:
        store = EventStore(client, job.organization)
        balances = BalanceChecker(None, tally_only=True)
        engine = Audit(
            job.organization,
            [*(make() for make in RULE_CHECKERS), balances],
            checkpoints=job.checkpoints,
            scope=job.scope,
            share=job.share,
        )
        await read_log(engine, store, job.log_head)
        return share_result(engine, balances)
    finally:
        await close_redis(client)


def share_result(engine: Audit, balances: BalanceChecker) -> ShareResult:
    """What a share other than the first hands back once its pass is over (``balances``:
    its tally-only balance checker)."""
    return ShareResult(
        report=engine.finish(), balances=dict(balances.balances), tips=engine.chains.tips
    )


def tips(first: Audit, results: Sequence[ShareResult]) -> dict[str, tuple[int, str]]:
    """Every stream's last seq and hash in the log, whichever share read it."""
    out = dict(first.chains.tips)
    for result in results:
        out.update(result.tips)
    return out


def combine(
    first: Audit,
    balances: BalanceChecker,
    results: Sequence[ShareResult],
    *,
    also: Sequence[Discrepancy] = (),
) -> AuditReport:
    """The report of the whole pass: the first share (``first``, whose balance checker is
    ``balances``) sums the others' balances, finishes (``also``: what was found outside the
    pass) and merges the others' reports with its own (:func:`merge`)."""
    for result in results:
        balances.absorb(result.balances)
    return merge(first.finish(also=also), [r.report for r in results])


def merge(first: AuditReport, others: Sequence[AuditReport]) -> AuditReport:
    """One report of the whole pass from the first share's and the others': counts summed
    check by check, every discrepancy once, listed check by check in the report's order
    and within a check in log order (those of no one event last); each share's figures
    (the deals' banks are all the first share's) in share order."""
    if not others:
        return first
    reports = [first, *others]
    checks = []
    for i, summary in enumerate(first.checks):
        counted: Counter[str] = Counter()
        found = 0
        for r in reports:
            counted.update(r.checks[i].checked)
            found += r.checks[i].discrepancies
        checks.append(replace(summary, checked=dict(counted), discrepancies=found))
    order = {c.name: 2 * i for i, c in enumerate(first.checks)}
    order.setdefault("checkpoints", order.get("chains", 0) + 1)
    found_all = [d for r in reports for d in r.discrepancies]
    figures: dict[str, list[dict[str, JSONValue]]] = {}
    for r in reports:
        for name, rows in r.figures.items():
            figures.setdefault(name, []).extend(rows)
    return replace(
        first,
        events=sum(r.events for r in reports),
        events_in_scope=sum(r.events_in_scope for r in reports),
        checks=tuple(checks),
        discrepancies=tuple(
            sorted(found_all, key=lambda d: (order.get(d.check, len(order) * 2), *_place(d)))
        ),
        figures=figures,
    )


def _place(d: Discrepancy) -> tuple[int, int, str, int]:
    """Where a discrepancy stands in the log: its entry's id, else last (by stream, seq)."""
    if d.log_id:
        ms, _, seq = d.log_id.partition("-")
        if ms.isdigit() and (seq or "0").isdigit():
            return int(ms), int(seq or 0), d.stream, d.seq or 0
    return 2**63, 0, d.stream, -1 if d.seq is None else d.seq

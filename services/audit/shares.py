"""The audit's pass shared among processes (docs/AUDIT.md, "Cost"): the first share reads
the org log, in order, checks the streams it keeps and deals every other share the entries
of its streams; each share checks its own; the first merges their results with its own
into one report, the same report one process would give.

Who checks what. A table's stream is read by the table checks only (its settlements,
awards, commitments, sources), each of which keeps one state per stream, so the tables are
dealt out among the shares as the log first names them
(``services.audit.dealing.Owners``). Every other
stream (the cage, the raffles, the deals, whose commingled banks span several streams, the
expenses) stays with the first share. The balances are sums, so each share adds up the
moves of its own streams and the first sums the shares' before it checks them. An
``OccasionStarted`` is dealt to every share (what the report covers follows the occasions
in log order), and the first share alone checks the checkpoints themselves and the signed
log entries.

The other shares run :func:`run_share` in processes of their own (``spawn``: nothing of the
parent's event loop or connections is inherited), fed through a pipe one page at a time:
they never reach the store, so only one process reads the log from Redis. Pure but for
the pipe."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING

import msgspec

from services.audit.base import Discrepancy, JSONValue
from services.audit.dealing import Share

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from services.audit.balances import BalanceChecker
    from services.audit.chains import SignedCheckpoint
    from services.audit.engine import Audit, AuditReport, Scope

MAX_SHARES = 8
"""The most processes an audit shares its pass among (past the machine's cores, more
only cost)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareJob:
    """What a share's process needs besides its entries."""

    share: Share
    organization: str
    checkpoints: Sequence[SignedCheckpoint]
    scope: Scope


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareResult:
    """A share's report, and what the first share merges before it checks the balances and
    the streams' own heads: its players' summed moves and its streams' last seq and hash."""

    report: AuditReport
    balances: Mapping[str, int] = field(default_factory=dict)
    tips: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    scoped: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """Per stream it checked, the first and last seq in scope."""


_END = b""
"""What the first share sends a share when the log is over."""
encode_page = msgspec.msgpack.Encoder().encode
"""A page of entries dealt to a share, as the pipe carries it (msgpack, ids and payloads
as bytes)."""
decode_page = msgspec.msgpack.Decoder().decode


def run_share(conn: Connection, job: ShareJob) -> None:
    """A share's whole pass, in its own process: the entries the first share deals it, page
    by page, until the end; then its result (or why it failed) back on the same pipe."""
    from services.audit.balances import BalanceChecker
    from services.audit.engine import Audit, cyclic_gc_paused
    from services.audit.rules import RULE_CHECKERS

    try:
        balances = BalanceChecker(None, tally_only=True)
        engine = Audit(
            job.organization,
            [*(make() for make in RULE_CHECKERS), balances],
            checkpoints=job.checkpoints,
            scope=job.scope,
            share=job.share,
        )
        with cyclic_gc_paused():
            while page := conn.recv_bytes():
                engine.feed_raw(decode_page(page))
        conn.send(("ok", share_result(engine, balances)))
    except BaseException as e:  # any fault: the first share reports it and stops
        conn.send(("failed", repr(e)))
    finally:
        conn.close()


class ShareError(RuntimeError):
    """A share's process failed or ended without its result: the audit cannot run."""


class Shares:
    """The first share's side of a shared pass: the other shares' processes and pipes."""

    def __init__(self, jobs: Sequence[ShareJob]) -> None:
        context = multiprocessing.get_context("spawn")
        self._conns: list[Connection] = []
        self.processes: list[BaseProcess] = []
        """The other shares' processes, in share order."""
        try:
            for job in jobs:
                mine, theirs = context.Pipe(duplex=True)
                self._conns.append(mine)
                process = context.Process(target=run_share, args=(theirs, job), daemon=True)
                process.start()
                theirs.close()
                self.processes.append(process)
        except BaseException:
            self.close()  # the shares already started
            raise

    def deal(self, engine: Audit) -> None:
        """Send each share the entries ``engine`` (the first share's) dealt it from the
        page just fed. Blocks while a share is still reading the page before: a share
        behind holds the first back, so no more than a page waits for anyone."""
        for k, box in enumerate(engine.outbox[1:], start=1):
            if box:
                self._send(k, encode_page(box))
                box.clear()

    def _send(self, k: int, message: bytes) -> None:
        conn = self._conns[k - 1]
        try:
            conn.send_bytes(message)
        except OSError as e:
            raise ShareError(f"share {k} of the audit stopped: {self._why(conn, e)}") from None

    @staticmethod
    def _why(conn: Connection, error: OSError) -> str:
        """What a share that stopped taking pages said before it went (``run_share`` sends
        why it failed), else the pipe's own error."""
        try:
            if conn.poll(1.0):
                status, value = conn.recv()
                if status != "ok":
                    return f"it failed: {value}"
        except (EOFError, OSError, ValueError):
            pass
        return str(error)

    async def results(self) -> list[ShareResult]:
        """Tell every share the log is over; their results, in share order."""
        for k in range(1, len(self._conns) + 1):
            self._send(k, _END)
        out = []
        for k, conn in enumerate(self._conns, start=1):
            try:
                status, value = await asyncio.to_thread(conn.recv)
            except (EOFError, OSError):
                raise ShareError(f"share {k} of the audit ended without its result") from None
            if status != "ok":
                raise ShareError(f"share {k} of the audit failed: {value}")
            out.append(value)
        return out

    def close(self) -> None:
        for conn in self._conns:
            conn.close()
        for process in self.processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()


@contextlib.contextmanager
def shares(jobs: Sequence[ShareJob]) -> Iterator[Shares]:
    """The other shares' processes, started now and stopped (killed if need be) after."""
    started = Shares(jobs)
    try:
        yield started
    finally:
        started.close()


def share_result(engine: Audit, balances: BalanceChecker) -> ShareResult:
    """What a share other than the first hands back once its pass is over (``balances``:
    its tally-only balance checker)."""
    return ShareResult(
        report=engine.finish(),
        balances=dict(balances.balances),
        tips=engine.chains.tips,
        scoped=engine.scoped_seqs,
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
        first.absorb_scope(result.scoped)
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

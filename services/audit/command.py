"""``casino-night audit``: recompute every figure the org log records, from the log alone,
and check its chains against the signed checkpoints (docs/AUDIT.md, "casino-night audit").

Exit status 0 when clean, 1 on any discrepancy, 2 when the audit cannot run. It never
writes to the store, and reads the log only up to the entry that was last when it began.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from events.envelope import Envelope
from services.audit import report as audit_report
from services.audit.balances import BalanceChecker
from services.audit.base import Discrepancy
from services.audit.chains import SignedCheckpoint, weigh_checkpoint
from services.audit.dealing import Share
from services.audit.engine import (
    WHOLE_LOG,
    Audit,
    AuditReport,
    Scope,
    cyclic_gc_paused,
    read_log,
    snapshot,
    stream_heads,
)
from services.audit.rules import RULE_CHECKERS
from services.audit.shares import MAX_SHARES, ShareError, ShareJob, combine, shares, tips
from services.store.redis_store import EventStore


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options (docs/AUDIT.md)."""
    parser.add_argument("--night", default="examples/night.toml")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--occasion", default=None, help="report only the events of this occasion")
    parser.add_argument(
        "--since",
        default=None,
        help="report only events that occurred at or after this time (ISO 8601; a date or a"
        " time without offset is in the organization's timezone; or unix ms)",
    )
    parser.add_argument(
        "--until", default=None, help="report only events that occurred before this time"
    )
    parser.add_argument(
        "--checkpoint",
        action="append",
        default=[],
        metavar="FILE",
        help="a signed checkpoint file or history (repeatable; default: the data directory's"
        " latest.json and history.jsonl)",
    )
    parser.add_argument(
        "--public-key",
        default=None,
        help="the PEM public key the checkpoints are checked with (default: the server's key)",
    )
    parser.add_argument(
        "--export",
        default=None,
        metavar="FILE",
        help="audit an export (casino-night export) instead of a store: no server, no Redis",
    )
    parser.add_argument(
        "--out", default=None, metavar="DIR", help="write audit.json and audit.md there"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument(
        "--workers",
        type=worker_count,
        default=default_workers(),
        metavar="N",
        help=f"processes to share a store's pass among (default: the cores, at most "
        f"{MAX_SHARES}; 1: this process alone)",
    )


def worker_count(text: str) -> int:
    """``--workers``: a whole number from 1 to :data:`MAX_SHARES` (argparse exits 2 with
    the reason otherwise)."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= count <= MAX_SHARES:
        raise argparse.ArgumentTypeError(f"{count} is not from 1 to {MAX_SHARES}")
    return count


def default_workers() -> int:
    """The audit's processes by default: one a core, at most :data:`MAX_SHARES`."""
    return max(1, min(os.cpu_count() or 1, MAX_SHARES))


def parse_moment(text: str, zone: str) -> int:
    """A ``--since``/``--until`` value as unix ms: digits alone are unix ms; otherwise ISO
    8601, a date meaning its midnight, and a time without an offset read in ``zone``."""
    from services.cli import CliError

    if text.isdigit():
        return int(text)
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise CliError(f"{text!r} is neither an ISO 8601 date or time nor unix ms") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=ZoneInfo(zone))
    return int(moment.timestamp() * 1000)


def read_checkpoints(
    args: argparse.Namespace, organization: str
) -> tuple[list[SignedCheckpoint], str | None]:
    """The checkpoints ``--checkpoint`` names (or the data directory's: its history and its
    newest), each line weighed once with ``--public-key`` (or the server's own key); and,
    when there are none, why."""
    from services.cli import CliError, data_dir
    from services.settings import Settings
    from services.store import anchor

    settings = Settings.from_env(data_dir=data_dir(args))
    if args.checkpoint:
        files = [Path(f) for f in args.checkpoint]
        for f in files:
            if not f.is_file():
                raise CliError(f"no checkpoint file {f}")
    else:
        directory = anchor.checkpoint_dir(settings.data_dir, organization)
        files = [
            directory / name
            for name in (anchor.HISTORY_FILE + ".1", anchor.HISTORY_FILE, anchor.LATEST_FILE)
            if (directory / name).is_file()
        ]
        if not files:
            return [], (
                f"no signed checkpoint of {organization} in {directory}: nothing outside the "
                "store vouches for these chains (give the auditor's copy with --checkpoint "
                "and --public-key)"
            )
    if args.public_key is not None:
        public_key = anchor.load_public_key(Path(args.public_key))
    else:
        key_path = anchor.key_file(settings.data_dir, settings.anchor_key)
        try:
            public_key = anchor.load_signing_key(key_path).public_key()
        except anchor.AnchorError as e:
            raise CliError(f"cannot check the checkpoints: {e}; give --public-key") from None
    weighed = [
        weigh_checkpoint(source, line, public_key, organization)
        for source, line in checkpoint_lines(files)
    ]
    return weighed, None


def checkpoint_lines(files: Iterable[Path]) -> list[tuple[str, str]]:
    """Each distinct checkpoint of ``files`` (a file of one, or a history of one a line)
    with where it stands (``history.jsonl line 3``): the newest is the history's last line
    too, so a checkpoint in two files is given once."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for f in files:
        lines = [line.strip() for line in f.read_text().splitlines() if line.strip()]
        for n, line in enumerate(lines, 1):
            if line not in seen:
                seen.add(line)
                out.append((f.name if len(lines) == 1 else f"{f.name} line {n}", line))
    return out


async def audit_store(args: argparse.Namespace, scope: Scope) -> AuditReport:
    """Audit the night's store as ``offline_store`` reaches it (:func:`audit`)."""
    from services.cli import CliError, offline_store
    from services.night import load_night

    organization = load_night(Path(args.night)).organization
    checkpoints, none_because = read_checkpoints(args, organization)
    async with offline_store(args) as store:
        try:
            return await audit(
                store,
                checkpoints,
                no_checkpoint=none_because,
                scope=scope,
                progress=not args.no_progress,
                workers=args.workers,
            )
        except ShareError as e:
            raise CliError(str(e)) from None


def audit_export(args: argparse.Namespace, scope: Scope) -> AuditReport:
    """Audit an export file alone (``--export FILE``): the file whole (its signed trailer,
    ``services.export.check_file``), its events with every rule checker, the chains against
    its checkpoints and any ``--checkpoint`` of the auditor's own, each checked with
    ``--public-key`` (else with the key the file carries, which proves only that the file
    is as its signer wrote it). An export of one occasion holds only some streams: its
    checkpoints are held to those streams."""
    from services import export
    from services.cli import CliError
    from services.store import anchor

    try:
        exported = export.read_export(args.export)
    except (OSError, export.ExportError) as e:
        raise CliError(str(e)) from None
    organization = exported.organization
    key = exported.public_key
    if args.public_key is not None:
        key = anchor.load_public_key(Path(args.public_key))
    texts = [(f"export checkpoint {n}", t) for n, t in enumerate(exported.checkpoints, 1)]
    kept = [Path(f) for f in args.checkpoint]
    for f in kept:
        if not f.is_file():
            raise CliError(f"no checkpoint file {f}")
    texts += checkpoint_lines(kept)
    streams = exported.header.get("scope", {}).get("streams", "all")
    checkpoints = []
    for source, text in texts:
        weighed = weigh_checkpoint(source, text, key, organization)
        if streams != "all" and weighed.checkpoint is not None:
            # Held to the streams the file holds; its log entry may be another stream's.
            held = {s: h for s, h in weighed.checkpoint.streams.items() if s in streams}
            weighed = replace(
                weighed, checkpoint=replace(weighed.checkpoint, streams=held, log_id="0")
            )
        checkpoints.append(weighed)
    unread: list[Discrepancy] = []

    def damaged(number: int, reason: str, event: dict[str, Any] | None) -> None:
        # Named with its stream and seq when the line still says them, else by line number.
        said = event or {}
        stream, seq = said.get("stream"), said.get("seq")
        known = isinstance(stream, str) and seq.__class__ is int
        unread.append(
            Discrepancy(
                check="export",
                stream=stream if known and isinstance(stream, str) else "export",
                seq=seq if known and isinstance(seq, int) else None,
                what=f"line {number} is no event the audit can read: {reason}",
                expected="an event line",
                found=None,
                log_id=said.get("log_id") if isinstance(said.get("log_id"), str) else None,
            )
        )

    report = audit_events(
        organization,
        exported.envelopes(damaged),
        checkpoints,
        no_checkpoint=None if checkpoints else "the export holds no signed checkpoint",
        scope=scope,
        progress=not args.no_progress,
    )
    whole = [
        Discrepancy(
            check="export", stream="export", seq=None, what=problem, expected=None, found=None
        )
        for problem in export.check_file(args.export, key)
    ]
    return replace(report, discrepancies=(*whole, *unread, *report.discrepancies))


async def audit(
    store: EventStore,
    checkpoints: Sequence[SignedCheckpoint],
    *,
    no_checkpoint: str | None = None,
    scope: Scope = WHOLE_LOG,
    progress: bool = False,
    workers: int = 1,
) -> AuditReport:
    """Audit a store against ``checkpoints`` (read before this is called: every head they
    signed is then in the store before the log's head is read): the log's head, length and
    guarded balances in one transaction, the log up to that head with every rule checker,
    the chains and the balances, then each stream's own record against the log. Never
    writes; the progress bar (tqdm) on stderr with ``progress``.

    ``workers`` > 1: the pass is shared among that many processes, this one and
    ``workers - 1`` others it deals their tables' entries to as it reads the log
    (``services.audit.shares``); the report is the one a single pass gives."""
    moment = await snapshot(store)
    balances = BalanceChecker(moment.guarded)
    checkers = [*(make() for make in RULE_CHECKERS), balances]
    count = max(1, min(workers, MAX_SHARES))
    engine = Audit(
        store.org,
        checkers,
        checkpoints=checkpoints,
        no_checkpoint=no_checkpoint,
        scope=scope,
        share=Share(0, count) if count > 1 else None,
    )
    jobs = [
        ShareJob(
            share=Share(k, count), organization=store.org, checkpoints=checkpoints, scope=scope
        )
        for k in range(1, count)
    ]
    with shares(jobs) as others, progress_bar(progress, total=moment.length) as bar:

        def page_read(n: int) -> None:
            others.deal(engine)
            bar.update(n)

        await read_log(engine, store, moment.log_head, on_page=page_read)
        results = await others.results()
    heads = await stream_heads(store, tips(engine, results), moment.generated)
    return combine(engine, balances, results, also=heads)


def audit_events(
    organization: str,
    envelopes: Iterable[Envelope],
    checkpoints: Sequence[SignedCheckpoint],
    *,
    no_checkpoint: str | None = None,
    scope: Scope = WHOLE_LOG,
    guarded: Mapping[str, int] | None = None,
    progress: bool = False,
) -> AuditReport:
    """Audit any source of the log's events in log order (an export's reader, with no
    store): every rule checker, the chains against ``checkpoints``, the balances (against
    ``guarded`` when the source carries the guarded balances). The progress bar counts
    events read."""
    checkers = [*(make() for make in RULE_CHECKERS), BalanceChecker(guarded)]
    engine = Audit(
        organization, checkers, checkpoints=checkpoints, no_checkpoint=no_checkpoint, scope=scope
    )
    with cyclic_gc_paused(), progress_bar(progress, envelopes) as events:
        engine.feed(events)
    return engine.finish()


def progress_bar(shown: bool, iterable: Iterable[Envelope] | None = None, total: int = 0) -> Any:
    """The audit's progress bar on stderr (tqdm): events read, of ``total`` when known, or
    of ``iterable`` as it is consumed; nothing is drawn unless ``shown``."""
    from tqdm import tqdm

    return tqdm(
        iterable,
        total=total or None,
        unit="ev",
        unit_scale=True,
        file=sys.stderr,
        disable=not shown,
        desc="audit",
    )


def run(args: argparse.Namespace) -> int:
    """Run the audit; print the readable report; exit 1 on any discrepancy."""
    from services.cli import CliError
    from services.night import load_night

    night = Path(args.night)
    # An auditor holding only an export may have no night file: times are then UTC.
    zone = "UTC" if args.export is not None and not night.is_file() else load_night(night).timezone
    scope = Scope(
        occasion=args.occasion,
        since_ms=None if args.since is None else parse_moment(args.since, zone),
        until_ms=None if args.until is None else parse_moment(args.until, zone),
    )
    if (
        scope.since_ms is not None
        and scope.until_ms is not None
        and scope.since_ms >= scope.until_ms
    ):
        raise CliError(f"--since {args.since} is not before --until {args.until}")
    if args.export is not None:
        report = audit_export(args, scope)
    else:
        report = asyncio.run(audit_store(args, scope))
    if scope.occasion is not None and scope.occasion not in report.occasions:
        known = ", ".join(report.occasions) or "none"
        raise CliError(f"the log started no occasion {scope.occasion} (it started: {known})")
    if args.out is not None:
        as_json, as_markdown = audit_report.write(report, Path(args.out))
        print(f"wrote {as_json} and {as_markdown}", file=sys.stderr)
    print(audit_report.markdown(report), end="")
    return 0 if report.ok else 1

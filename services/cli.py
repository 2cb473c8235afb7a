"""``casino-night``: serve, token, replay, verify, exclusions, anchor-key, checkpoint."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from services.settings import Settings
from services.store.redis_store import EventStore, close_redis, open_redis

if TYPE_CHECKING:
    from services.gateway.metrics import Metrics
    from services.store.anchor import Checkpoint


def _serve(args: argparse.Namespace) -> int:
    from services import logging as app_logging
    from services.gateway.app import create_app
    from services.gateway.auth import load_secret
    from services.night import NightError, load_night
    from services.runtime import Runtime

    settings = Settings.from_env(
        night=Path(args.night),
        host=args.host,
        port=args.port,
        data_dir=_data_dir(args),
        node=args.node,
        reuse_port=args.reuse_port or None,
    )
    app_logging.configure(settings.log_format)
    try:
        night = load_night(settings.night)
    except NightError as e:
        print(f"casino-night: refusing to start: [{e.code}] {e}", file=sys.stderr)
        return 2
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    secret = load_secret(settings.data_dir, create=True)
    runtime = Runtime(settings=settings, night=night, secret=secret)
    app = create_app(runtime)
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover - uvloop is optional off Linux
        pass
    return asyncio.run(_run_site(app, settings, night, secret))


async def _run_site(app: Any, settings: Settings, night: Any, secret: bytes) -> int:
    """Start the site, print where it listens and a token per role, run until a signal."""
    import signal

    from aiohttp import web

    from services.gateway.app import app_runner
    from services.gateway.auth import issue
    from services.gateway.pages import page_link

    runner = app_runner(app, settings, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, settings.host, settings.port, reuse_port=settings.reuse_port)
    await site.start()
    from services.gateway.transport import RUNTIME

    stop_gc = tune_gc(app[RUNTIME].metrics)
    now = int(time.time())
    base = f"http://{settings.host}:{settings.port}"
    tables = tuple(t.id for t in night.tables)
    lines = [
        f"Casino Night is open for {night.organization_name} ({night.occasion_name})",
        f"  listening on {base}  (websocket {base.replace('http', 'ws')}/ws)",
        "  tokens (valid 12h; mint more with `casino-night token`, revoke one with"
        " `casino-night token --revoke ID`):",
        f"    {'role':<17} {'id':<32}  token",
    ]
    for role in ("dealer", "cashier", "auditor", "ops", "member_in_charge", "seller"):
        issued = issue(
            secret,
            role=role,
            sub=role,
            ttl_seconds=BANNER_TOKEN_TTL,
            now=now,
            tables=tables if role == "dealer" else (),
        )
        lines.append(f"    {role:<17} {issued.jti:<32}  {issued.token}")
        for table in tables if role == "dealer" else (None,):
            query = {} if table is None else {"table": table}
            link = page_link(base, ROLE_PAGES[role], issued.token, **query)
            lines.append(f"      open {table or ROLE_PAGES[role]}: {link}")
    for player in night.players:
        issued = issue(
            secret,
            role="player",
            sub=player,
            player=player,
            ttl_seconds=BANNER_TOKEN_TTL,
            now=now,
        )
        lines.append(f"    {'player ' + player:<17} {issued.jti:<32}  {issued.token}")
        lines.append(f"      open player: {page_link(base, 'player', issued.token)}")
    # The room's big screen reads the raffles only: a player token with no account.
    screen = issue(secret, role="player", sub="big-screen", ttl_seconds=BANNER_TOKEN_TTL, now=now)
    lines.append(f"    {'big screen':<17} {screen.jti:<32}  {screen.token}")
    lines.append(f"      open screen: {page_link(base, 'screen', screen.token)}")
    print("\n".join(lines), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    stop_gc()
    await runner.cleanup()
    return 0


ROLE_PAGES = {
    "dealer": "dealer",
    "cashier": "cashier",
    "auditor": "ops",
    "ops": "ops",
    "member_in_charge": "raffle",
    "seller": "raffle",
}
"""The page each role's banner link opens (a dealer's, one per table)."""

BANNER_TOKEN_TTL = 43200
"""Lifetime of the tokens the ``serve`` banner prints, in seconds (12 hours)."""


def tune_gc(metrics: Metrics) -> Callable[[], None]:
    """Set the cyclic garbage collector up for a long-running server, once it has started
    (``services.gc_tuning``): freeze what start-up left, then young passes only, each
    pass's survivors frozen, a full pass when the frozen heap has doubled (from a task,
    when called on the event loop); every pass timed into ``metrics``. Returns the function
    that undoes it (the frozen objects stay frozen)."""
    from services.gc_tuning import YoungPassesOnly

    plan = YoungPassesOnly()
    plan.install()
    unwatch = metrics.watch_gc()
    task: asyncio.Task[None] | None = None
    with contextlib.suppress(RuntimeError):  # no running loop: no full passes
        task = asyncio.get_running_loop().create_task(plan.run(), name="gc-full-pass")

    def stop() -> None:
        unwatch()
        plan.uninstall()
        if task is not None:
            task.cancel()

    return stop


def _data_dir(args: argparse.Namespace) -> Path:
    return Path(args.data_dir or os.environ.get("CASINO_DATA_DIR", "var"))


data_dir = _data_dir
"""The command's data directory (``--data-dir``, else ``CASINO_DATA_DIR``, else ``var``),
for the commands that live in their own modules (:data:`COMMAND_MODULES`)."""


def _token(args: argparse.Namespace) -> int:
    """``casino-night token``: mint a token (stdout; its id and expiry on stderr), or
    ``--revoke`` one, or ``--inspect`` one."""
    from services.gateway.auth import issue, load_secret, parse_ttl

    if args.revoke is not None or args.inspect is not None:
        minting = [f"--{n}" for n in ("role", "sub", "player") if getattr(args, n) is not None]
        if args.tables:
            minting.append("--tables")
        if args.revoke is not None and args.inspect is not None:
            minting.append("--inspect")
        if minting:
            what = "--revoke" if args.revoke is not None else "--inspect"
            raise CliError(f"{what} does not go with {', '.join(minting)}")
        if args.revoke is not None:
            return asyncio.run(_revoke(args))
        return _inspect(args)
    if args.role is None or args.sub is None:
        raise CliError("minting a token needs --role and --sub")
    secret = load_secret(_data_dir(args), create=False)
    tables = tuple(t for t in (args.tables or "").split(",") if t)
    issued = issue(
        secret,
        role=args.role,
        sub=args.sub,
        ttl_seconds=parse_ttl(args.ttl),
        now=int(time.time()),
        tables=tables,
        player=args.player,
    )
    print(issued.token)
    print(f"token id {issued.jti}, expires {_utc(issued.exp)}", file=sys.stderr)
    return 0


def _utc(seconds: int) -> str:
    """Unix seconds as an ISO 8601 UTC date-time, with the seconds beside it."""
    from datetime import UTC, datetime

    return f"{datetime.fromtimestamp(seconds, UTC).isoformat()} ({seconds})"


def _inspect(args: argparse.Namespace) -> int:
    """Print the claims of a token signed with this server's secret (expired or not) as
    JSON on stdout, and whether it is still valid on stderr (it does not ask the store
    whether the token was revoked)."""
    import jwt

    from services.gateway.auth import AuthError, load_secret, read_claims

    secret = load_secret(_data_dir(args), create=False)
    try:
        who = read_claims(secret, args.inspect)
    except AuthError as e:
        raise CliError(f"not a token of this server: {e}") from None
    claims = jwt.decode(args.inspect, options={"verify_signature": False})
    print(json.dumps(claims, indent=2, sort_keys=True))
    state = "expired" if who.exp <= time.time() else "expires"
    print(f"token id {who.jti}, {state} {_utc(who.exp)}", file=sys.stderr)
    return 0


async def _revoke(args: argparse.Namespace) -> int:
    """Revoke a token for every server of the organization (``token --revoke``): by its
    id, or by the whole token (then its entry is pruned once it has expired)."""
    from services.gateway.auth import AuthError, load_secret, read_claims, valid_jti
    from services.gateway.revocations import Revocations

    target: str = args.revoke.strip()
    exp: int | None = None
    if "." in target:  # a whole token: its id and expiry are in it
        try:
            who = read_claims(load_secret(_data_dir(args), create=False), target)
        except AuthError as e:
            raise CliError(f"not a token of this server: {e}") from None
        jti, exp = who.jti, who.exp
    elif valid_jti(target):
        jti = target
    else:
        raise CliError(f"{target!r} is neither a token id nor a token")
    async with _offline_store(args) as store:
        new = await Revocations(store.redis, store.org).revoke(jti, exp)
    print(f"revoked token {jti}" if new else f"token {jti} was already revoked")
    return 0


@contextlib.asynccontextmanager
async def _offline_store(args: argparse.Namespace) -> AsyncIterator[EventStore]:
    """The night's event store for ``replay`` and ``verify``: ``REDIS_URL``; else the
    embedded Redis a running server has on the data directory; else one started here on
    that directory for the duration of the command."""
    from services import logging as app_logging
    from services.night import load_night
    from services.store.embedded import EmbeddedRedis, running_url

    settings = Settings.from_env(data_dir=_data_dir(args))
    app_logging.configure("console")  # to stderr: stdout carries the command's report
    night = load_night(Path(args.night))
    embedded = None
    url = settings.redis_url or running_url(settings.data_dir / "redis")
    if url is None:
        if not (settings.data_dir / "redis").is_dir():
            raise CliError(f"no event store in {settings.data_dir}: nothing was ever served there")
        embedded = EmbeddedRedis(settings.data_dir / "redis", appendfsync=settings.appendfsync)
        embedded.start()
        url = embedded.url
    client = await open_redis(url)
    try:
        yield EventStore(client, night.organization)
    finally:
        await close_redis(client)
        if embedded is not None:
            embedded.stop()


async def _replay(args: argparse.Namespace) -> int:
    """Rebuild every projection from the org log (``casino-night replay``)."""
    from projections.bankroll import Bankrolls
    from projections.bell_jars import BellJars
    from projections.cash_control import CashControl
    from projections.control_sheets import ControlSheets
    from projections.expenses import Expenses
    from projections.raffles import Raffles
    from projections.runner import ProjectionRunner, checkpoint_key
    from projections.timeline import Timeline
    from services.gateway.auth import load_secret
    from services.night import load_night

    try:
        mac_key: bytes | None = checkpoint_key(load_secret(_data_dir(args), create=False))
    except FileNotFoundError:
        mac_key = None  # rebuild and report all the same; only the checkpoint needs the key
    zone = load_night(Path(args.night)).timezone
    async with _offline_store(args) as store:
        bankrolls = Bankrolls()
        control_sheets = ControlSheets()
        raffles = Raffles()
        bell_jars = BellJars(zone)
        timeline = Timeline()
        expenses = Expenses()
        cash_control = CashControl()
        runner = ProjectionRunner(
            store,
            [bankrolls, control_sheets, raffles, bell_jars, timeline, expenses, cash_control],
            mac_key=mac_key,
        )
        started = time.perf_counter()
        count = await runner.catch_up()
        elapsed = time.perf_counter() - started
        if mac_key is not None:
            await runner.save_checkpoint()
        else:
            print(
                f"casino-night replay: no secret (CASINO_SECRET or {_data_dir(args)}/secret): "
                "the projection checkpoint was not saved",
                file=sys.stderr,
            )
        report = {
            "events": count,
            "seconds": round(elapsed, 3),
            "last_id": runner.last_id,
            "bankrolls": bankrolls.snapshot() if args.show else None,
            "control_sheets": control_sheets.snapshot()["sheets"] if args.show else None,
            "raffles": raffles.views() if args.show else None,
            "bell_jars": bell_jars.report() if args.show else None,
            "house_result": timeline.snapshot() if args.show else None,
            "expenses": expenses.snapshot()["items"] if args.show else None,
        }
        print(json.dumps(report, indent=2))
        return 0


MAX_FINDINGS = 20
"""Commands applied twice that ``verify`` lists one by one; it counts the rest."""


def _verify_checkpoint(
    args: argparse.Namespace, org: str
) -> tuple[Checkpoint | None, str | None, bool]:
    """The checkpoint ``verify`` checks against: (checkpoint or None, why none, none found).

    ``--checkpoint FILE`` or the data directory's newest; its signature is checked with
    ``--public-key FILE``, else the server's own key (``CASINO_ANCHOR_KEY`` or
    ``<data-dir>/anchor.key``). A file given that cannot be read stops the command."""
    from services.store import anchor

    settings = Settings.from_env(data_dir=_data_dir(args))
    given = args.checkpoint is not None
    path = (
        Path(args.checkpoint)
        if given
        else (anchor.checkpoint_dir(settings.data_dir, org) / anchor.LATEST_FILE)
    )
    try:
        text = path.read_text()
    except FileNotFoundError:
        if given:
            raise CliError(f"no checkpoint file {path}") from None
        return (
            None,
            f"no signed checkpoint of {org} in {path.parent}: nothing outside Redis vouches "
            "for these chains (give the auditor's copy with --checkpoint and --public-key)",
            True,
        )
    if args.public_key is not None:
        public_key = anchor.load_public_key(Path(args.public_key))
    else:
        key_path = anchor.key_file(settings.data_dir, settings.anchor_key)
        try:
            public_key = anchor.load_signing_key(key_path).public_key()
        except anchor.AnchorError as e:
            return None, f"cannot check {path}: {e}; give --public-key", False
    try:
        return anchor.parse(text, public_key, org), None, False
    except anchor.CheckpointError as e:
        return None, f"{path}: {e}", False


async def _verify(args: argparse.Namespace) -> int:
    """Walk every stream's hash chain and the org log, look for a command applied twice,
    check the chains against the newest signed checkpoint and the balances against the
    events (``casino-night verify``)."""
    from services.audit import verify_balances
    from services.store.anchor import check_anchor
    from services.store.verify import LOG, CommandCheck, proven, verify_all

    async with _offline_store(args) as store:
        # The checkpoint first: every head it signed was in the store before the walk.
        checkpoint, problem, none_found = _verify_checkpoint(args, store.org)
        commands = CommandCheck()
        signed = checkpoint.streams if checkpoint is not None else ()
        reports = await verify_all(store, also=signed, commands=commands)
        anchored = await check_anchor(
            store, checkpoint, reports, problem=problem, none_found=none_found
        )
        broken = 0
        for r in reports:
            pinned = None if r.stream == LOG else anchored.stream_break(r.stream)
            if r.ok and pinned is None:
                print(f"ok      {r.stream}: {r.events} events, chain intact")
            else:
                broken += 1
                b = r.breaks[0] if r.breaks else pinned
                assert b is not None
                print(f"BROKEN  {r.stream}: first break at seq {b.seq}: {b.reason}")
        proven_to = {r.stream: proven(r) for r in reports if r.stream != LOG}
        duplicates = await commands.findings(store, proven_to)
        if duplicates:
            broken += 1
            for d in duplicates[:MAX_FINDINGS]:
                print(f"BROKEN  commands: {d.describe()}")
            if len(duplicates) > MAX_FINDINGS:
                print(f"BROKEN  commands: … and {len(duplicates) - MAX_FINDINGS} more")
        else:
            print(
                f"ok      commands: {commands.runs} commands wrote {commands.events} events, "
                "none applied twice"
            )
        print(anchored.line())
        if not anchored.ok:
            broken += 1
        balances = await verify_balances(store)
        if balances.ok:
            print(f"ok      balances: {balances.players} players, as the events give them")
        elif not balances.settled:
            broken += 1
            print("BROKEN  balances: the log never stood still long enough to compare")
        else:
            broken += 1
            player, folded, guarded = balances.mismatches[0]
            print(
                f"BROKEN  balances: {len(balances.mismatches)} players differ; {player}: "
                f"the events give {folded}, the store guards {guarded}"
            )
        return 1 if broken else 0


def _anchor_key(args: argparse.Namespace) -> int:
    """Print the public key that checks the server's checkpoints (``casino-night
    anchor-key``), with its fingerprint; ``--out FILE`` writes the PEM to a file."""
    from services.store import anchor

    settings = Settings.from_env(data_dir=_data_dir(args))
    key = anchor.load_signing_key(anchor.key_file(settings.data_dir, settings.anchor_key))
    public = key.public_key()
    pem = anchor.public_pem(public)
    if args.out:
        Path(args.out).write_text(pem)
        print(f"wrote the public key to {args.out}")
    else:
        print(pem, end="")
    print(f"fingerprint: {anchor.fingerprint(public)}")
    return 0


def _checkpoint(args: argparse.Namespace) -> int:
    """Export the organization's newest signed checkpoint (``casino-night checkpoint``),
    after checking its signature: to ``--out FILE``, else to stdout."""
    from services.night import load_night
    from services.store import anchor

    settings = Settings.from_env(data_dir=_data_dir(args))
    org = load_night(Path(args.night)).organization
    path = anchor.checkpoint_dir(settings.data_dir, org) / anchor.LATEST_FILE
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise CliError(f"no checkpoint of {org} in {path.parent}: serve writes one") from None
    key = anchor.load_signing_key(anchor.key_file(settings.data_dir, settings.anchor_key))
    try:
        checkpoint = anchor.parse(text, key.public_key(), org)
    except anchor.CheckpointError as e:
        raise CliError(f"{path}: {e}") from None
    if not args.out:
        print(text, end="")
        return 0
    Path(args.out).write_text(text)
    print(
        f"wrote {checkpoint.title()} to {args.out}: {len(checkpoint.streams)} streams, "
        f"log entry {checkpoint.log_id}"
    )
    return 0


async def _exclusions(args: argparse.Namespace) -> int:
    """Load a self-exclusion CSV into the purchaser vault (``casino-night exclusions``),
    4620.22(b)(7)(iv). Prints only the number of entries: never a name."""
    from services.gateway.auth import load_secret
    from services.raffles.vault import PurchaserVault, master_key_from_secret

    secret = load_secret(_data_dir(args), create=False)
    async with _offline_store(args) as store:
        vault = PurchaserVault(store.redis, store.org, master_key_from_secret(secret))
        count = await vault.load_exclusion_file(args.file, replace=args.replace)
        print(f"{'replaced the list with' if args.replace else 'added'} {count} entries")
        return 0


offline_store = _offline_store
"""The night's event store, as ``replay`` and ``verify`` reach it (for the commands of
:data:`COMMAND_MODULES`, whose arguments include ``--night`` and ``--data-dir``)."""


class CliError(Exception):
    """A command that cannot run: its message is printed, exit status 2."""


class CommandModule(Protocol):
    """A command that lives in a module of its own: it declares its arguments and runs."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


COMMAND_MODULES = {
    "audit": ("services.audit.command", "recompute every figure the org log records"),
    "recall": ("services.recall_command", "show one round of a table as it happened"),
    "export": ("services.export", "write the log, its chains and checkpoints for an auditor"),
    "forms": ("services.reports.command", "write the regulator's forms as CSV and PDF"),
}
"""Each command's module and its help: the module is imported only when the command runs."""


def _command_module(name: str) -> CommandModule:
    module: CommandModule = importlib.import_module(COMMAND_MODULES[name][0])
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="casino-night")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the server")
    serve.add_argument("--night", default="examples/night.toml")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--data-dir", default=None)
    serve.add_argument(
        "--node", default=None, help="this process's node id (default: from host and data dir)"
    )
    serve.add_argument(
        "--reuse-port",
        action="store_true",
        help="share the port with other processes on this machine (SO_REUSEPORT)",
    )

    tok = sub.add_parser("token", help="mint a signed token, revoke one or show one's claims")
    tok.add_argument("--role", default=None)
    tok.add_argument("--sub", default=None)
    tok.add_argument("--tables", default="")
    tok.add_argument("--player", default=None)
    tok.add_argument("--ttl", default="12h")
    tok.add_argument("--data-dir", default=None)
    tok.add_argument(
        "--revoke",
        metavar="ID",
        default=None,
        help="revoke the token with this id (or this whole token) on every server",
    )
    tok.add_argument(
        "--inspect", metavar="TOKEN", default=None, help="print a token's claims and its id"
    )
    tok.add_argument("--night", default="examples/night.toml", help="with --revoke")

    for name, text in (
        ("replay", "rebuild every projection from the org log"),
        ("verify", "check every stream's hash chain against the newest signed checkpoint"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("--night", default="examples/night.toml")
        p.add_argument("--data-dir", default=None)
        if name == "replay":
            p.add_argument(
                "--show",
                action="store_true",
                help="print the rebuilt bankrolls, control sheets and raffles",
            )
        else:
            p.add_argument(
                "--checkpoint",
                default=None,
                help="a signed checkpoint file (e.g. an auditor's copy); default: the data "
                "directory's newest",
            )
            p.add_argument(
                "--public-key",
                default=None,
                help="the PEM public key to check it with (as `anchor-key` prints it); "
                "default: the server's key",
            )

    ak = sub.add_parser("anchor-key", help="print the public key that checks the checkpoints")
    ak.add_argument("--out", default=None, help="write the PEM public key to this file")
    ak.add_argument("--data-dir", default=None)

    cp = sub.add_parser("checkpoint", help="export the newest signed checkpoint")
    cp.add_argument("--out", default=None, help="write it to this file (default: stdout)")
    cp.add_argument("--night", default="examples/night.toml")
    cp.add_argument("--data-dir", default=None)

    exc = sub.add_parser("exclusions", help="load a self-exclusion list (CSV) into the vault")
    exc.add_argument("--file", required=True, help="CSV with the header legal_name,date_of_birth")
    exc.add_argument("--replace", action="store_true", help="the file becomes the whole list")
    exc.add_argument("--night", default="examples/night.toml")
    exc.add_argument("--data-dir", default=None)

    chosen = next(
        (a for a in (argv if argv is not None else sys.argv[1:]) if not a.startswith("-")), None
    )
    for name, (_module, text) in COMMAND_MODULES.items():
        p = sub.add_parser(name, help=text)
        if name == chosen:
            _command_module(name).add_arguments(p)

    args = parser.parse_args(argv)
    from services.aggregates import RuleError
    from services.night import NightError
    from services.store.anchor import AnchorError
    from services.store.embedded import DataDirBusy
    from services.store.redis_store import RedisAccessError

    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "token":
            return _token(args)
        if args.command == "anchor-key":
            return _anchor_key(args)
        if args.command == "checkpoint":
            return _checkpoint(args)
        if args.command == "replay":
            return asyncio.run(_replay(args))
        if args.command == "exclusions":
            return asyncio.run(_exclusions(args))
        if args.command in COMMAND_MODULES:
            return _command_module(args.command).run(args)
        return asyncio.run(_verify(args))
    except RuleError as e:
        print(f"casino-night {args.command}: {e.message}", file=sys.stderr)
        return 2
    except (
        CliError,
        NightError,
        DataDirBusy,
        RedisAccessError,
        AnchorError,
        FileNotFoundError,
        ValueError,
    ) as e:
        print(f"casino-night {args.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

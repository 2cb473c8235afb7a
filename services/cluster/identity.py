"""Who a server process is: its node id (stable across restarts on one data directory),
the lock that keeps two live processes off one data directory, and its incarnation."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import secrets
import socket
from pathlib import Path

from services.store.embedded import lock_exclusively

NODE_LOCK_FILE = "node.lock"
"""``<data-dir>/node.lock``: held (``flock``) by the process serving from that directory."""
NODE_PATTERN = re.compile(r"[A-Za-z0-9._-]{1,64}")
"""What a node id may hold: it is part of lease values (``|``-separated) and key names."""


def default_node_id(data_dir: Path) -> str:
    """The node id of a process that was not given one: the host name and a short hash of
    the data directory's real path, so a process restarted on the same directory (after a
    crash, say) is the same node and takes back its leases at once."""
    host = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname())[:40] or "host"
    real = os.path.realpath(data_dir)
    return f"{host}-{hashlib.sha256(real.encode()).hexdigest()[:8]}"


def check_node_id(node: str) -> str:
    """``node`` if it is a usable node id (:data:`NODE_PATTERN`), else ValueError."""
    if not NODE_PATTERN.fullmatch(node):
        raise ValueError(f"node id {node!r}: use 1 to 64 of A-Z a-z 0-9 . _ -")
    return node


def new_incarnation() -> str:
    """A random id of one start of a process: a node restarted is a new incarnation, so
    a lease its previous life held is told apart (and taken over with a new token)."""
    return secrets.token_hex(6)


class NodeLock:
    """An exclusive ``flock`` on ``<data-dir>/node.lock``, held while serving; the kernel
    drops it when the process dies, even by ``kill -9``."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / NODE_LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise :class:`DataDirBusy` when a live process holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = lock_exclusively(
            self.path,
            f"another casino-night serve uses the data directory {self.path.parent} "
            "(two processes never share a data directory, and so a node id); stop it, "
            "or give this one its own --data-dir",
        )

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

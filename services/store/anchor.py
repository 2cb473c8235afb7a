"""Signed checkpoints of the event store, kept outside Redis (``casino-night verify``).

Whoever can write to Redis can rewrite a stream and recompute its hash chain, its meta, its
org-log copies and the balances: the chain has no key. A checkpoint pins the chains with a
key Redis never holds. It names every aggregate stream's last seq and that event's hash, the
org log's last entry id, the organization, a time and a counter, encoded canonically and
signed with Ed25519. The server writes it to its data directory, ``anchor/<org>/``: the
newest one in ``latest.json`` (replaced atomically), and a history in ``history.jsonl`` (one
line a minute while the night runs, and one at each start, occasion end and shutdown).

A store extends a checkpoint when every stream it signed still holds, with an intact chain,
at least the signed seq, and the event at that seq is the signed one (same hash): the hash
chain then pins every event before it too, so a deletion, truncation, reordering or
consistent rewrite of anything up to the signed seq breaks it. The signed log entry must be
in the org log still. What was appended after the newest checkpoint is not pinned.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import datetime
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis.exceptions
import structlog
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from events.codec import decode
from events.envelope import expected_hash
from services.store import keys
from services.store.redis_store import EventStore, Head
from services.store.replication import STORE_UNAVAILABLE
from services.store.verify import LOG, ChainBreak, ChainReport, proven
from services.tasks import raise_if_cancelled

log = structlog.get_logger(__name__)

KEY_FILE = "anchor.key"
"""The signing key in the data directory (PEM, PKCS#8, mode 0600) unless ``CASINO_ANCHOR_KEY``
names another file."""
ANCHOR_DIR = "anchor"
"""``<data-dir>/anchor/<org>/`` holds an organization's checkpoints."""
LATEST_FILE = "latest.json"
HISTORY_FILE = "history.jsonl"
FORMAT = "casino-night checkpoint 1"
SIGNED_PREFIX = b"casino-night checkpoint\n"
"""Put before the canonical body when signing, so the key signs nothing else by accident."""
SIGN_EVERY_SECONDS = 1.0
"""How often the server signs while events flow (only when a head moved): the most of a
running night a checkpoint can leave unpinned."""
HISTORY_EVERY_SECONDS = 60.0
"""At most one history line this often for the checkpoints signed while events flow."""
HISTORY_MAX_BYTES = 16 * 1024 * 1024
"""A history file this large is moved to ``history.jsonl.1`` (replacing an older one)."""
REASONS = ("start", "interval", "occasion_end", "shutdown")
"""Why a checkpoint was signed: the server's start, events that flowed, the end of the
occasion window, the server's shutdown."""


class AnchorError(Exception):
    """The anchor cannot be used: a key that cannot be read, or a store that no longer holds
    what the newest checkpoint signed (the server refuses to start over it)."""


class CheckpointError(Exception):
    """A checkpoint that cannot be trusted: unreadable, not signed by the key, or of
    another organization."""


# Keys.


def fingerprint(public_key: Ed25519PublicKey) -> str:
    """A short name of a public key: ``sha256:`` and 32 hex digits of the SHA-256 of its
    raw 32 bytes."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "sha256:" + hashlib.sha256(raw).hexdigest()[:32]


def public_pem(public_key: Ed25519PublicKey) -> str:
    pem: bytes = public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return pem.decode()


def key_file(data_dir: Path, configured: Path | None) -> Path:
    """The signing key's file: ``CASINO_ANCHOR_KEY`` when set, else ``<data-dir>/anchor.key``."""
    return configured if configured is not None else Path(data_dir) / KEY_FILE


def load_signing_key(path: Path) -> Ed25519PrivateKey:
    """The Ed25519 private key in a PEM file (unencrypted)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise AnchorError(
            f"no anchor key in {path}: start `casino-night serve` once, or set "
            "CASINO_ANCHOR_KEY to the key's file"
        ) from None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as e:
        raise AnchorError(f"{path} is not a PEM private key without a password: {e}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise AnchorError(f"{path} is not an Ed25519 private key")
    if path.stat().st_mode & 0o077:
        log.warning("anchor_key_exposed", path=str(path), hint="chmod 600 it")
    return key


def ensure_signing_key(data_dir: Path, configured: Path | None) -> Ed25519PrivateKey:
    """The server's signing key: the file ``CASINO_ANCHOR_KEY`` names (it must exist), else
    ``<data-dir>/anchor.key``, created with mode 0600 on the first start."""
    path = key_file(data_dir, configured)
    if configured is None and not path.exists():
        _create_key(path)
    return load_signing_key(path)


def _create_key(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
            f.flush()
            os.fsync(f.fileno())
        # link, not rename: a key another process made meanwhile is kept, never replaced.
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        os.unlink(tmp)
    _fsync_dir(path.parent)


_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----.+?-----END \1-----", re.S)


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The public key to check checkpoints with, from a PEM file: a public key (as
    ``casino-night anchor-key`` prints it, text around the PEM block allowed) or the
    private key itself."""
    text = path.read_text()
    block = _PEM_BLOCK.search(text)
    if block is None:
        raise ValueError(f"{path} holds no PEM key")
    data = block.group(0).encode()
    try:
        if "PRIVATE" in block.group(1):
            private = serialization.load_pem_private_key(data, password=None)
            key: Any = private.public_key()
        else:
            key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{path}: not a usable PEM key: {e}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError(f"{path} is not an Ed25519 key")
    return key


# Checkpoints.


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    """What one signature covers."""

    organization: str
    counter: int
    """1, 2, 3, … for an organization's checkpoints, across restarts."""
    time_ms: int
    """When it was signed, unix ms."""
    reason: str
    log_id: str
    """The org log's last entry id when signed (``0``: empty log)."""
    streams: Mapping[str, tuple[int, str]]
    """Stream name -> (seq, hash) of its last event as signed."""
    key: str
    """The fingerprint of the key that signed it."""

    @property
    def when(self) -> str:
        moment = datetime.datetime.fromtimestamp(self.time_ms / 1000, tz=datetime.UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")

    def title(self) -> str:
        return f"checkpoint #{self.counter} of {self.when} ({self.reason}, key {self.key})"

    def body(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "organization": self.organization,
            "counter": self.counter,
            "time": self.time_ms,
            "reason": self.reason,
            "log": self.log_id,
            "streams": {
                name: {"seq": seq, "hash": digest}
                for name, (seq, digest) in sorted(self.streams.items())
            },
            "key": self.key,
        }


def canonical(body: Mapping[str, Any]) -> bytes:
    """The bytes a signature covers: :data:`SIGNED_PREFIX`, then the body as JSON with
    sorted keys, no spaces and ASCII only (so any reader re-encodes it to the same bytes)."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return SIGNED_PREFIX + text.encode()


def sign(key: Ed25519PrivateKey, checkpoint: Checkpoint) -> str:
    """The checkpoint file's text: one JSON line ``{"body": …, "signature": base64}``."""
    body = checkpoint.body()
    signature = base64.b64encode(key.sign(canonical(body))).decode()
    doc = {"body": body, "signature": signature}
    return json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n"


def parse(text: str, public_key: Ed25519PublicKey, organization: str | None = None) -> Checkpoint:
    """The checkpoint a file holds, once its signature verifies with ``public_key`` (and it
    is of ``organization``, when given); :class:`CheckpointError` otherwise."""
    try:
        doc = json.loads(text)
        body = doc["body"]
        signature = base64.b64decode(doc["signature"], validate=True)
        if not isinstance(body, dict):
            raise TypeError("body is not an object")
    except (ValueError, KeyError, TypeError) as e:
        raise CheckpointError(f"not a signed checkpoint ({e})") from None
    expected = fingerprint(public_key)
    try:
        public_key.verify(signature, canonical(body))
    except InvalidSignature:
        named = body.get("key")
        if isinstance(named, str) and named != expected:
            raise CheckpointError(
                f"it names key {named}; its signature does not verify with key {expected}"
            ) from None
        raise CheckpointError(
            f"its signature does not verify with key {expected}: the checkpoint was forged "
            "or edited"
        ) from None
    try:
        streams = {
            str(name): (int(head["seq"]), str(head["hash"]))
            for name, head in body["streams"].items()
        }
        checkpoint = Checkpoint(
            organization=str(body["organization"]),
            counter=int(body["counter"]),
            time_ms=int(body["time"]),
            reason=str(body["reason"]),
            log_id=str(body["log"]),
            streams=streams,
            key=str(body["key"]),
        )
        if body["format"] != FORMAT:
            raise ValueError(f"unknown format {body['format']!r}")
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise CheckpointError(f"signed, but not a checkpoint this version reads ({e})") from None
    if organization is not None and checkpoint.organization != organization:
        raise CheckpointError(
            f"it is a checkpoint of organization {checkpoint.organization}, not {organization}"
        )
    return checkpoint


def checkpoint_dir(data_dir: Path, organization: str) -> Path:
    """Where the server keeps an organization's checkpoints: ``<data-dir>/anchor/<org>``."""
    return Path(data_dir) / ANCHOR_DIR / organization


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class CheckpointFiles:
    """An organization's checkpoint files: the newest, and the history."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.latest = self.directory / LATEST_FILE
        self.history = self.directory / HISTORY_FILE
        self._lock = threading.Lock()
        self._written = 0

    def read_latest(self) -> str | None:
        try:
            return self.latest.read_text()
        except FileNotFoundError:
            return None

    def remove_leftovers(self) -> None:
        """Delete temporary files a process killed in the middle of a write left behind."""
        for leftover in self.directory.glob(f".{LATEST_FILE}.*.tmp"):
            with contextlib.suppress(OSError):
                leftover.unlink()

    def write(self, counter: int, text: str, *, history: bool) -> bool:
        """Make ``text`` the newest checkpoint (temporary file, fsync, rename, fsync of the
        directory) and, with ``history``, append it to the history. A checkpoint whose
        counter is not above one written already is dropped (returns False): writes run in
        threads, and a late one must not replace a newer one."""
        with self._lock:
            if counter <= self._written:
                return False
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp = self.directory / f".{LATEST_FILE}.{os.getpid()}.tmp"
            with tmp.open("w") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.latest)
            if history:
                self._append_history(text)
            _fsync_dir(self.directory)
            self._written = counter
            return True

    def _append_history(self, text: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            if self.history.stat().st_size >= HISTORY_MAX_BYTES:
                os.replace(self.history, self.history.with_name(HISTORY_FILE + ".1"))
        with self.history.open("a") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())


# What the store must still hold.


async def _log_has(store: EventStore, log_id: str) -> bool:
    found: Any = await store.redis.xrange(keys.log(store.org), min=log_id, max=log_id, count=1)
    return bool(found)


async def pin_breaks(
    store: EventStore, checkpoint: Checkpoint, versions: Mapping[str, int] | None = None
) -> list[ChainBreak]:
    """Where the store no longer holds what ``checkpoint`` signed, in stream order: a stream
    that ends before the signed seq, or whose event at the signed seq is not the signed one
    (another hash, or one its contents do not recompute to); then the signed org-log entry
    if it is gone (stream ``log``).

    ``versions``: how far each stream's chain was proven intact (``verify``, which then
    pins the whole prefix); without it, each stream's meta version (the server's check at
    start, which does not walk the chains)."""
    out: list[ChainBreak] = []
    title = checkpoint.title()
    for name, (seq, signed) in sorted(checkpoint.streams.items()):
        if versions is not None:
            version = versions.get(name, 0)
        else:
            version = (await store.head(name)).version
        if version < seq:
            gone = "the stream is gone" if version == 0 else f"the stream ends at seq {version}"
            out.append(
                ChainBreak(
                    stream=name,
                    seq=version + 1,
                    reason=f"{gone}, but {title} signed seq {seq}: signed events were deleted",
                )
            )
            continue
        page = await store.read_raw(name, since=seq - 1, limit=1)
        env = decode(page[0][1]) if page and page[0][0] == f"0-{seq}" else None
        if env is None or env.seq != seq or env.hash != signed or expected_hash(env) != env.hash:
            found = "no event" if env is None else f"hash {env.hash[:16]}…"
            out.append(
                ChainBreak(
                    stream=name,
                    seq=seq,
                    reason=(
                        f"the event at seq {seq} is not the one {title} signed ({found}, "
                        f"signed {signed[:16]}…): it or an event before it was altered"
                    ),
                )
            )
    if checkpoint.log_id != "0" and not await _log_has(store, checkpoint.log_id):
        out.append(
            ChainBreak(
                stream=LOG,
                seq=0,
                reason=f"log entry {checkpoint.log_id}, signed by {title}, is gone from the log",
            )
        )
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class AnchorReport:
    """``verify``'s check of the store against a checkpoint."""

    checkpoint: Checkpoint | None
    breaks: tuple[ChainBreak, ...] = ()
    problem: str | None = None
    """Why no checkpoint could be checked (none, unreadable, forged): broken too."""
    unproven: tuple[str, ...] = ()
    """Signed streams whose chain breaks at or before the signed seq (reported there)."""
    empty: bool = False

    @property
    def ok(self) -> bool:
        return self.problem is None and not self.breaks and not self.unproven

    def stream_break(self, stream: str) -> ChainBreak | None:
        return next((b for b in self.breaks if b.stream == stream), None)

    def line(self) -> str:
        """The ``anchor`` line of the report."""
        cp = self.checkpoint
        if self.problem is not None:
            return f"BROKEN  anchor: {self.problem}"
        if cp is None:
            return "ok      anchor: no events and no checkpoint: nothing to pin"
        if self.ok:
            held = f"{len(cp.streams)} streams"
            if cp.log_id != "0":
                held += f" and log entry {cp.log_id}"
            return f"ok      anchor: {cp.title()}: {held} still as signed"
        wrong = sorted({b.stream for b in self.breaks if b.stream != LOG} | set(self.unproven))
        parts = []
        if wrong:
            parts.append(f"{len(wrong)} of {len(cp.streams)} streams ({', '.join(wrong)})")
        if any(b.stream == LOG for b in self.breaks):
            parts.append(f"log entry {cp.log_id}")
        return f"BROKEN  anchor: {cp.title()}: {' and '.join(parts)} no longer as signed"


async def check_anchor(
    store: EventStore,
    checkpoint: Checkpoint | None,
    reports: Sequence[ChainReport],
    *,
    problem: str | None = None,
    none_found: bool = False,
) -> AnchorReport:
    """Check the store against ``checkpoint`` once :func:`~services.store.verify.verify_all`
    walked its chains (``reports``, which must include every stream it signed).

    Without a checkpoint (``problem`` says why) the anchor is broken, except when none was
    found (``none_found``) and the store holds no event: nothing outside Redis vouches for
    a store's chains without one."""
    if checkpoint is None:
        if none_found and not any(r.events for r in reports) and await store.log_head() == "0":
            return AnchorReport(checkpoint=None, empty=True)
        return AnchorReport(checkpoint=None, problem=problem or "no checkpoint to check")
    chains = {r.stream: r for r in reports if r.stream != LOG}
    unproven = tuple(
        name
        for name, (seq, _h) in sorted(checkpoint.streams.items())
        if name in chains and not chains[name].ok and proven(chains[name]) < seq
    )
    versions = {name: proven(r) for name, r in chains.items()}
    pinned = dataclasses.replace(
        checkpoint,
        streams={n: h for n, h in checkpoint.streams.items() if n not in unproven},
    )
    breaks = await pin_breaks(store, pinned, versions)
    return AnchorReport(checkpoint=checkpoint, breaks=tuple(breaks), unproven=unproven)


# The server's side.

HeadsSource = Callable[[], Mapping[str, Head]]
"""The heads the server itself knows (its actors', moved only after Redis acknowledged)."""


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class Anchor:
    """Signs the heads of the night's store, outside Redis, while the server runs.

    :meth:`open` at start (before anything is appended), :meth:`attach` the actors' heads,
    :meth:`sign` ``start``, run :meth:`run` as a task, and :meth:`sign` ``shutdown`` once
    the actors have stopped (before Redis is closed)."""

    def __init__(
        self,
        store: EventStore,
        key: Ed25519PrivateKey,
        files: CheckpointFiles,
        *,
        every: float = SIGN_EVERY_SECONDS,
        history_every: float = HISTORY_EVERY_SECONDS,
        occasion_ends_at: int | None = None,
        clock_ms: Callable[[], int] = _now_ms,
    ) -> None:
        self.store = store
        self.key = key
        self.files = files
        self.every = every
        self.history_every = history_every
        self.occasion_ends_at = occasion_ends_at
        self.clock_ms = clock_ms
        self.fingerprint = fingerprint(key.public_key())
        self.latest: Checkpoint | None = None
        """The newest checkpoint signed (by this process, or the one found at start)."""
        self.counter = 0
        self._base: dict[str, tuple[int, str]] = {}
        self._source: HeadsSource | None = None
        self._last_history = float("-inf")
        self._occasion_signed = True

    async def open(self) -> None:
        """Read the newest checkpoint and check the store still holds what it signed, then
        read every stream's head once (streams no actor runs tonight stay covered).

        :class:`AnchorError` when that checkpoint is not signed by this key or the store no
        longer extends it: signing over such a store would vouch for what was done to it."""
        await asyncio.to_thread(self.files.remove_leftovers)
        text = await asyncio.to_thread(self.files.read_latest)
        previous = None
        if text is not None:
            try:
                previous = parse(text, self.key.public_key(), self.store.org)
            except CheckpointError as e:
                raise AnchorError(f"{self.files.latest}: {e}") from None
            breaks = await pin_breaks(self.store, previous)
            if breaks:
                first = breaks[0]
                where = "log" if first.stream == LOG else f"{first.stream} seq {first.seq}"
                raise AnchorError(
                    f"the event store no longer holds what {self.files.latest} signed "
                    f"({len(breaks)} breaks; first: {where}: {first.reason}); run "
                    "`casino-night verify`"
                )
            self.latest = previous
            self.counter = previous.counter
            self._base = dict(previous.streams)
        for name in await self.store.stream_names():
            head = await self.store.head(name)
            if head.version > self._base.get(name, (0, ""))[0]:
                self._base[name] = (head.version, head.last_hash)
        ends = self.occasion_ends_at
        self._occasion_signed = ends is None or self.clock_ms() >= ends
        log.info("anchor_opened", key=self.fingerprint, checkpoints=str(self.files.directory))

    def attach(self, source: HeadsSource) -> None:
        self._source = source

    def heads(self) -> dict[str, tuple[int, str]]:
        """Every stream's newest head known: the actors' when they are ahead."""
        heads = dict(self._base)
        if self._source is not None:
            for name, head in list(self._source().items()):
                if head.version > heads.get(name, (0, ""))[0]:
                    heads[name] = (head.version, head.last_hash)
        return heads

    async def sign(self, reason: str, *, force: bool = False) -> Checkpoint | None:
        """Sign the heads now and write the checkpoint; unless ``force``, only when a head or
        the log moved since the last one (returns None then). The history gets it unless it
        is an ``interval`` one less than ``history_every`` after the last line."""
        assert reason in REASONS, reason
        heads = self.heads()
        previous = self.latest
        try:
            log_id = await self.store.log_head()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as e:
            # An older log position is still true; the heads are the server's own.
            log_id = previous.log_id if previous is not None else "0"
            log.warning("anchor_log_unread", error=str(e))
        if (
            not force
            and previous is not None
            and dict(previous.streams) == heads
            and previous.log_id == log_id
        ):
            return None
        try:
            # With wait_replicas, sign only what the replicas hold too: a failover must not
            # lose a signed event (the next start would refuse the store).
            await self.store.confirm_replicated()
        except STORE_UNAVAILABLE as e:
            log.warning("anchor_not_confirmed", error=str(e))
            return None
        self.counter += 1
        checkpoint = Checkpoint(
            organization=self.store.org,
            counter=self.counter,
            time_ms=self.clock_ms(),
            reason=reason,
            log_id=log_id,
            streams=heads,
            key=self.fingerprint,
        )
        text = sign(self.key, checkpoint)
        now = time.monotonic()
        history = reason != "interval" or now - self._last_history >= self.history_every
        if history:
            self._last_history = now
        self.latest = checkpoint
        await asyncio.to_thread(self.files.write, checkpoint.counter, text, history=history)
        return checkpoint

    def _wait(self) -> float:
        wait = self.every
        ends = self.occasion_ends_at
        if not self._occasion_signed and ends is not None:
            wait = min(wait, max(0.0, (ends - self.clock_ms()) / 1000))
        return wait

    async def run(self) -> None:
        """Sign every ``every`` seconds when something moved, and at the occasion's end."""
        while True:
            await asyncio.sleep(self._wait())
            ends = self.occasion_ends_at
            try:
                if not self._occasion_signed and ends is not None and self.clock_ms() >= ends:
                    await self.sign("occasion_end", force=True)
                    self._occasion_signed = True
                else:
                    await self.sign("interval")
            except Exception:  # a full disk must not stop the night; say so loudly
                raise_if_cancelled()
                log.exception("anchor_not_written", path=str(self.files.latest))

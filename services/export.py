"""The export an auditor keeps: ``casino-night export [--occasion ID] --out FILE``.

One JSON Lines file (docs/AUDIT.md, "The export and the standalone verifier"): a header
(format, version, organization, scope, when), the public key that checks the signatures
(PEM), the signed checkpoints of the data directory (its anchor history, then the latest;
services/store/anchor.py), every event of the scope with every envelope field and its
org-log id, in log order, and a trailer with the counts, the SHA-256 of every line before
it, and an Ed25519 signature of the trailer by the same key as the checkpoints, so a file
cut short or edited is named. ``tools/verify_export.py`` checks such a file with Python and
``cryptography`` alone; :func:`read_export` reads it for the audit.

The scope: every stream (no ``--occasion``), or, with ``--occasion ID``, the streams that
have an event in that occasion (an event belongs to the occasion the last
``OccasionStarted`` before it in the log started) and the license stream; each stream
whole, from seq 1, so every chain verifies from genesis. The events are read up to the
log's last entry when the export starts (safe on a live store: what is appended meanwhile
is left to the next export), and the checkpoints are read before it, so none signs beyond
the events exported.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from events.codec import decode, stream_of, to_json
from events.envelope import Envelope
from services.aggregates import LICENSE
from services.store import anchor
from services.store.redis_store import EventStore

FORMAT = "casino-night export"
VERSION = 1
SIGNED_PREFIX = b"casino-night export\n"
"""Put before the trailer's canonical JSON when signing it: the anchor key's checkpoint
signatures have their own prefix (anchor.SIGNED_PREFIX), so neither passes for the other."""
PAGE = 1000
"""Org-log entries read per request."""
OCCASION_STARTED = "OccasionStarted"


class ExportError(ValueError):
    """An export file that cannot be read (not an export, an unknown version)."""


def line_bytes(doc: dict[str, Any]) -> bytes:
    """One line of the file: JSON with sorted keys, no spaces, ASCII only, and a newline
    (so every reader re-reads the same values, and the digest is of these bytes)."""
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text.encode() + b"\n"


def trailer_signed_bytes(trailer: dict[str, Any]) -> bytes:
    """What the trailer's signature covers: :data:`SIGNED_PREFIX` and the trailer without
    its ``signature``, as canonical JSON."""
    body = {k: v for k, v in trailer.items() if k != "signature"}
    return SIGNED_PREFIX + line_bytes(body)[:-1]


def checkpoint_texts(directory: Path) -> list[str]:
    """The signed checkpoints an organization's anchor directory holds, oldest first: the
    rotated history, the history, then the latest (each text once)."""
    texts: list[str] = []
    for name in (anchor.HISTORY_FILE + ".1", anchor.HISTORY_FILE, anchor.LATEST_FILE):
        try:
            content = (directory / name).read_text()
        except FileNotFoundError:
            continue
        for text in content.splitlines():
            if text.strip() and text not in texts:
                texts.append(text)
    return texts


async def occasion_streams(store: EventStore, occasion: str, end: str) -> set[str] | None:
    """The streams with an event in ``occasion`` (up to log entry ``end``), with the
    license stream; None when the log never started that occasion."""
    current: str | None = None
    found = False
    streams: set[str] = set()
    after = "0"
    while end != "0":
        page = await store.log_raw(after, PAGE)
        for log_id, raw in page:
            if _after(log_id, end):
                return streams | {LICENSE} if found else None
            env = decode(raw, log_id)
            if env.type == OCCASION_STARTED:
                current = env.data["occasion"]
                found = found or current == occasion
            if current == occasion:
                streams.add(env.stream)
        if len(page) < PAGE:
            break
        after = page[-1][0]
    return streams | {LICENSE} if found else None


def _after(log_id: str, end: str) -> bool:
    """Whether org-log id ``log_id`` comes after ``end``."""
    a, _, b = log_id.partition("-")
    c, _, d = end.partition("-")
    return (int(a), int(b or 0)) > (int(c), int(d or 0))


@dataclass
class Written:
    """What :func:`write_export` wrote."""

    lines: int = 0
    events: int = 0
    checkpoints: int = 0
    streams: dict[str, dict[str, Any]] = field(default_factory=dict)


async def write_export(
    store: EventStore,
    out: IO[bytes],
    *,
    key: Ed25519PrivateKey,
    checkpoints: list[str],
    organization_name: str,
    occasion: str | None,
    now_ms: int,
) -> Written:
    """Write the export of ``store`` to ``out`` (see the module docstring): the events of
    the scope up to the log's last entry now, the ``checkpoints`` (their files' texts, read
    before), signed with ``key``. ExportError when ``occasion`` is not in the log."""
    end = await store.log_head()
    chosen: set[str] | None = None
    if occasion is not None:
        chosen = await occasion_streams(store, occasion, end)
        if chosen is None:
            raise ExportError(f"the log holds no occasion {occasion!r}")
    digest = hashlib.sha256()
    written = Written()

    def put(doc: dict[str, Any]) -> None:
        data = line_bytes(doc)
        out.write(data)
        digest.update(data)
        written.lines += 1

    public = key.public_key()
    put(
        {
            "kind": "header",
            "format": FORMAT,
            "version": VERSION,
            "organization": store.org,
            "organization_name": organization_name,
            "scope": {
                "occasion": occasion,
                "streams": sorted(chosen) if chosen is not None else "all",
            },
            "exported_at": now_ms,
            "exported_at_utc": datetime.datetime.fromtimestamp(
                now_ms / 1000, tz=datetime.UTC
            ).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "log_end": end,
        }
    )
    put(
        {
            "kind": "key",
            "algorithm": "Ed25519",
            "fingerprint": anchor.fingerprint(public),
            "pem": anchor.public_pem(public),
        }
    )
    for text in checkpoints:
        put({"kind": "checkpoint", "checkpoint": json.loads(text)})
        written.checkpoints += 1
    after = "0"
    while end != "0":
        page = await store.log_raw(after, PAGE)
        done = len(page) < PAGE
        for log_id, raw in page:
            if _after(log_id, end):
                done = True
                break
            if chosen is not None and stream_of(raw) not in chosen:
                continue
            env = decode(raw, log_id)
            put({"kind": "event", "event": to_json(env)})
            written.events += 1
            counts = written.streams.setdefault(env.stream, {"events": 0})
            counts.update(events=counts["events"] + 1, last_seq=env.seq, last_hash=env.hash)
        if done or not page:
            break
        after = page[-1][0]
    trailer: dict[str, Any] = {
        "kind": "trailer",
        "lines": written.lines,
        "events": written.events,
        "checkpoints": written.checkpoints,
        "streams": written.streams,
        "sha256": digest.hexdigest(),
    }
    trailer["signature"] = base64.b64encode(key.sign(trailer_signed_bytes(trailer))).decode()
    out.write(line_bytes(trailer))
    return written


# Reading an export (for the audit).


_TEXT_FIELDS = ("id", "type", "stream", "actor", "causation", "prev_hash", "hash")
_WHOLE_FIELDS = ("version", "seq", "ts")


def _envelope(doc: Any) -> Envelope:
    """The envelope of one event line's ``event``; ExportError naming what is wrong when
    it is not one (a field missing or of another type: an edited line)."""
    if not isinstance(doc, dict):
        raise ExportError("its event is not a map of fields")
    for name in _TEXT_FIELDS:
        if not isinstance(doc.get(name), str):
            raise ExportError(f"its event's {name} is {doc.get(name)!r}, not text")
    for name in _WHOLE_FIELDS:
        if doc.get(name).__class__ is not int:  # a bool is no seq
            raise ExportError(f"its event's {name} is {doc.get(name)!r}, not a whole number")
    if "correlation" not in doc:
        raise ExportError("its event has no correlation")
    for name in ("correlation", "log_id"):
        if doc.get(name) is not None and not isinstance(doc[name], str):
            raise ExportError(f"its event's {name} is {doc[name]!r}, not text")
    if not isinstance(doc.get("data"), dict):
        raise ExportError(f"its event's data is {doc.get('data')!r}, not a map of fields")
    return Envelope(
        id=doc["id"],
        type=doc["type"],
        version=doc["version"],
        stream=doc["stream"],
        seq=doc["seq"],
        ts=doc["ts"],
        actor=doc["actor"],
        causation=doc["causation"],
        correlation=doc["correlation"],
        prev_hash=doc["prev_hash"],
        hash=doc["hash"],
        data=doc["data"],
        log_id=doc.get("log_id"),
    )


@dataclass(frozen=True, slots=True)
class ExportFile:
    """An export as :func:`read_export` opened it: its header, its public key, its
    checkpoints' texts (check each with ``anchor.parse(text, public_key, organization)``),
    its trailer (None when the file is cut short) and :meth:`envelopes`."""

    path: Path
    header: dict[str, Any]
    public_key_pem: str
    public_key: Ed25519PublicKey
    checkpoints: tuple[str, ...]
    trailer: dict[str, Any] | None

    @property
    def organization(self) -> str:
        organization: str = self.header["organization"]
        return organization

    def envelopes(
        self, damaged: Callable[[int, str, dict[str, Any] | None], None] | None = None
    ) -> Iterator[Envelope]:
        """Every event of the file as an Envelope (with its org-log id), in log order.

        A line that is no event (cut in the middle, not JSON, a field missing or of
        another type) is skipped and handed to ``damaged`` (its line number from 1, what
        is wrong, and its ``event`` when it is a map: what it says of its stream and seq),
        or, without it, raises ExportError naming the line."""
        with self.path.open("rb") as f:
            for number, raw in enumerate(f, 1):
                if not raw.startswith(b'{"event":'):
                    continue
                event: Any = None
                try:
                    event = json.loads(raw)["event"]
                    env = _envelope(event)
                except ExportError as e:
                    reason = str(e)
                except ValueError as e:  # JSONDecodeError: a line cut or edited
                    reason = f"not JSON ({e})"
                except (KeyError, TypeError) as e:
                    reason = f"not an event line ({e!r})"
                else:
                    yield env
                    continue
                if damaged is None:
                    raise ExportError(f"line {number}: {reason}")
                damaged(number, reason, event if isinstance(event, dict) else None)

    def signed_checkpoints(self) -> list[anchor.Checkpoint]:
        """The checkpoints whose signature verifies with the file's key
        (anchor.CheckpointError for the first that does not)."""
        return [anchor.parse(t, self.public_key, self.organization) for t in self.checkpoints]


def read_export(path: Path | str) -> ExportFile:
    """Open an export written by :func:`write_export`: its header, key and checkpoints
    (the first lines) and its trailer (the last), without reading the events (they are
    read, one at a time, by :meth:`ExportFile.envelopes`). This checks nothing of the
    chains or signatures: ``tools/verify_export.py`` and the audit do. ExportError for a
    file that is not an export of this format and version."""
    path = Path(path)
    header: dict[str, Any] | None = None
    pem: str | None = None
    checkpoints: list[str] = []
    last = b""
    with path.open("rb") as f:
        for raw in f:
            last = raw
            if raw.startswith(b'{"event":'):
                continue
            try:
                doc = json.loads(raw)
            except ValueError:
                continue
            kind = doc.get("kind") if isinstance(doc, dict) else None
            if kind == "header" and header is None:
                header = doc
            elif kind == "key" and pem is None:
                pem = doc["pem"]
            elif kind == "checkpoint":
                checkpoints.append(json.dumps(doc["checkpoint"], sort_keys=True))
    if header is None or header.get("format") != FORMAT:
        raise ExportError(f"{path} is not a {FORMAT}")
    if header.get("version") != VERSION:
        raise ExportError(f"{path} is version {header.get('version')!r}; this reads {VERSION}")
    if pem is None:
        raise ExportError(f"{path} holds no public key")
    key = load_pem_public_key(pem.encode())
    if not isinstance(key, Ed25519PublicKey):
        raise ExportError(f"{path}: its key is not an Ed25519 key")
    try:
        tail = json.loads(last)
    except ValueError:
        tail = None
    trailer = tail if isinstance(tail, dict) and tail.get("kind") == "trailer" else None
    return ExportFile(path, header, pem, key, tuple(checkpoints), trailer)


def check_file(path: Path | str, public_key: Ed25519PublicKey) -> list[str]:
    """What is wrong with an export as a file (the audit's check; ``tools/verify_export.py``
    makes the same): no trailer (cut short), a trailer whose line or event count or SHA-256
    of the lines before it differs from the file, or whose signature does not verify with
    ``public_key``. Empty when the file is whole as written."""
    digest = hashlib.sha256()
    lines = events = 0
    last: bytes | None = None
    with Path(path).open("rb") as f:
        for raw in f:
            if last is not None:
                digest.update(last)
                lines += 1
                events += last.startswith(b'{"event":')
            last = raw
    try:
        trailer = json.loads(last) if last is not None else None
    except ValueError:
        trailer = None
    if not isinstance(trailer, dict) or trailer.get("kind") != "trailer":
        return ["the file has no trailer: it was cut short (or its last line edited)"]
    problems = []
    if trailer.get("lines") != lines:
        problems.append(
            f"the trailer counts {trailer.get('lines')} lines before it; the file has {lines}"
        )
    if trailer.get("events") != events:
        problems.append(f"the trailer counts {trailer.get('events')} events; the file has {events}")
    if trailer.get("sha256") != digest.hexdigest():
        problems.append(
            "the SHA-256 of the lines before the trailer is not the trailer's: a line was edited"
        )
    try:
        public_key.verify(
            base64.b64decode(str(trailer.get("signature", ""))), trailer_signed_bytes(trailer)
        )
    except (InvalidSignature, ValueError):
        problems.append("the trailer's signature does not verify with the key")
    return problems


# The command line.


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``casino-night export [--occasion ID] --out FILE``."""
    parser.add_argument("--out", required=True, help="the JSON Lines file to write")
    parser.add_argument(
        "--occasion",
        default=None,
        help="only the streams with an event in this occasion (each stream whole)",
    )
    parser.add_argument("--night", default="examples/night.toml")
    parser.add_argument("--data-dir", default=None)


async def _export(args: argparse.Namespace) -> int:
    from services.cli import CliError, data_dir, offline_store
    from services.night import load_night
    from services.settings import Settings

    settings = Settings.from_env(data_dir=data_dir(args))
    night = load_night(Path(args.night))
    key = anchor.load_signing_key(anchor.key_file(settings.data_dir, settings.anchor_key))
    directory = anchor.checkpoint_dir(settings.data_dir, night.organization)
    out = Path(args.out)
    partial = out.with_name(f".{out.name}.partial")
    async with offline_store(args) as store:
        # The checkpoints first: none of them then signs beyond the log's end read next.
        texts = await asyncio.to_thread(checkpoint_texts, directory)
        try:
            with partial.open("wb") as f:
                written = await write_export(
                    store,
                    f,
                    key=key,
                    checkpoints=texts,
                    organization_name=night.organization_name,
                    occasion=args.occasion,
                    now_ms=time.time_ns() // 1_000_000,
                )
        except ExportError as e:
            partial.unlink(missing_ok=True)
            raise CliError(str(e)) from None
    partial.replace(out)
    print(
        f"wrote {out}: {written.events} events of {len(written.streams)} streams, "
        f"{written.checkpoints} signed checkpoints, key {anchor.fingerprint(key.public_key())}"
    )
    return 0


def run(args: argparse.Namespace) -> int:
    """Write the export; status 2 when the data directory has no anchor key or the log no
    such occasion."""
    return asyncio.run(_export(args))

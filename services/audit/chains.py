"""The audit's chain check: every stream's hash chain as the org log holds it, against the
signed checkpoints (docs/AUDIT.md, "Hash chains, checkpoints and balances").

Read in log order, each stream's events must come with seq 1, 2, … and no gap, each once;
each event's hash must recompute from its contents and its ``prev_hash`` must be the hash
of the stream's event before it (docs/ARCHITECTURE.md, "The hash chain"). Every head a
checkpoint signed (``services.store.anchor``) must be in the log: the stream's event at
the signed seq has the signed hash, and the signed org-log entry is there. A checkpoint
whose signature does not verify is a discrepancy of its own, and what it claims is still
compared with the chains, so an edited one names the head that was edited.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from events.envelope import GENESIS_HASH, Envelope, expected_hash
from services.audit.base import Discrepancy, JSONValue
from services.store import anchor

CHECK = "chains"
CHECKPOINTS = "checkpoints"
"""The ``stream`` of a discrepancy about a checkpoint file itself (no event of its own)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SignedCheckpoint:
    """One checkpoint given to the audit: where it came from, what it claims, and why it
    cannot be trusted (``None``: its signature verifies with the key given)."""

    source: str
    checkpoint: anchor.Checkpoint | None
    """What it claims (``None``: not even readable as a checkpoint)."""
    problem: str | None = None

    @property
    def verified(self) -> bool:
        return self.problem is None and self.checkpoint is not None


def _claims(text: str) -> anchor.Checkpoint | None:
    """What a checkpoint's body says, its signature unchecked (for one that failed it)."""
    try:
        body = json.loads(text)["body"]
        return anchor.Checkpoint(
            organization=str(body["organization"]),
            counter=int(body["counter"]),
            time_ms=int(body["time"]),
            reason=str(body["reason"]),
            log_id=str(body["log"]),
            streams={str(n): (int(h["seq"]), str(h["hash"])) for n, h in body["streams"].items()},
            key=str(body["key"]),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def weigh_checkpoint(
    source: str, text: str, public_key: Ed25519PublicKey | None, organization: str
) -> SignedCheckpoint:
    """A checkpoint file's text (one JSON line, ``anchor.sign``'s) as the audit takes it:
    verified with ``public_key`` (``anchor.parse``), else its claims and the reason. Pure."""
    if public_key is None:
        return SignedCheckpoint(
            source=source, checkpoint=_claims(text), problem="no public key to check it with"
        )
    try:
        return SignedCheckpoint(
            source=source, checkpoint=anchor.parse(text, public_key, organization)
        )
    except anchor.CheckpointError as e:
        return SignedCheckpoint(source=source, checkpoint=_claims(text), problem=str(e))


@dataclass(frozen=True, slots=True)
class _Pin:
    digest: str
    title: str
    signed: bool


class _Stream:
    """What the pass keeps of one stream: its last seq and hash in the log, the seqs that
    were missing where they should have come, and the heads checkpoints pinned in it
    (``next_pin``: the lowest pinned seq not reached yet, -1 for none)."""

    __slots__ = ("hash", "missing", "next_pin", "pins", "seq")

    def __init__(self, pins: dict[int, list[_Pin]] | None) -> None:
        self.seq = 0
        self.hash = GENESIS_HASH
        self.missing: dict[int, int] | None = None
        """seq -> index of its ``missing`` discrepancy (replaced if it comes late)."""
        self.pins = pins
        self.next_pin = min(pins) if pins else -1


class ChainChecker:
    """Checks the chains as the engine links each event (:meth:`link`, every event, in log
    order), and the checkpoints' heads against them."""

    name = CHECK
    types: frozenset[str] | None = frozenset()
    """The engine calls :meth:`link` itself, for every event; ``observe`` takes none."""

    def __init__(
        self,
        checkpoints: Sequence[SignedCheckpoint] = (),
        *,
        none_because: str | None = None,
        owns_log: bool = True,
    ) -> None:
        self.checked: Counter[str] = Counter()
        self.discrepancies: list[Discrepancy] = []
        self.checkpoints = len(checkpoints)
        self.none_because = none_because
        """Why no checkpoint was given (a discrepancy once the log holds events)."""
        self.owns_log = owns_log
        """False in a share of the pass other than the first (``services.audit.shares``):
        the checkpoints themselves, the signed log entries and the heads of streams the log
        holds no event of are the first share's to check; this one checks its streams'."""
        self.foreign: set[str] = set()
        """Streams another share checks (their signed heads are not this one's)."""
        self.streams: dict[str, _Stream] = {}
        """Per stream, as the pass left it: the engine's fast path moves an in-order event's
        seq and hash itself when no pin or break is at stake (:meth:`link` for the rest)."""
        self._pins: dict[str, dict[int, list[_Pin]]] = {}
        self.log_pins: dict[str, list[str]] = {}
        """The org-log entries checkpoints signed, by id (with the checkpoints' titles)."""
        self._log_seen: set[str] = set()
        self.any_log_id = False
        self.events = 0
        self.dealt = 0
        """Events the first share of a shared pass dealt to the others (they count as the
        log's events when it asks whether a checkpoint was needed)."""
        for given in checkpoints:
            self._take(given)

    def _take(self, given: SignedCheckpoint) -> None:
        cp = given.checkpoint
        if given.problem is not None and self.owns_log:
            self._found(
                stream=CHECKPOINTS,
                seq=None,
                what=f"{given.source}: {given.problem}",
                expected="a checkpoint signed by the key given",
                found=None if cp is None else cp.key,
                check=CHECKPOINTS,
            )
        if cp is None:
            return
        title = f"{given.source} ({cp.title()})"
        if given.verified and self.owns_log:
            self.checked["checkpoints"] += 1
            if cp.log_id != "0":
                self.log_pins.setdefault(cp.log_id, []).append(title)
        for stream, (seq, digest) in cp.streams.items():
            self._pins.setdefault(stream, {}).setdefault(seq, []).append(
                _Pin(digest, title, given.verified)
            )

    def _found(
        self,
        *,
        stream: str,
        seq: int | None,
        what: str,
        expected: JSONValue,
        found: JSONValue,
        log_id: str | None = None,
        check: str = CHECK,
    ) -> None:
        self.discrepancies.append(
            Discrepancy(
                check=check,
                stream=stream,
                seq=seq,
                what=what,
                expected=expected,
                found=found,
                log_id=log_id,
            )
        )

    def observe(self, envelope: Envelope) -> None:
        """Not fed: the engine links every event through :meth:`link`."""

    def saw_log(self, log_id: str) -> None:
        """A signed org-log entry is in the log (an event of another share's stream)."""
        self._log_seen.add(log_id)

    def unreadable(self, log_id: str, reason: str) -> None:
        """An org-log entry that is not a stored envelope at all."""
        self.events += 1
        self._found(
            stream="log",
            seq=None,
            what=f"log entry {log_id} is not a stored event ({reason})",
            expected="a stored envelope",
            found=None,
            log_id=log_id,
        )

    def unreadable_data(
        self, stream: str, seq: int, type_: str, log_id: str | None, reason: str
    ) -> None:
        """An event whose data is not a map of fields: no check can read it (its place in
        the chain is still checked)."""
        self._found(
            stream=stream,
            seq=seq,
            what=f"{type_} seq {seq}'s data is not a map of fields: no check can read it",
            expected="a map of fields",
            found=reason,
            log_id=log_id,
        )

    def link(
        self,
        stream: str,
        seq: int,
        prev_hash: str,
        digest: str,
        sound: bool,
        log_id: str | None,
        env: Envelope | None,
    ) -> None:
        """The next event of the log: ``sound`` says its hash recomputes from its contents
        (``env`` is given whenever it does not)."""
        self.events += 1
        st = self.streams.get(stream)
        if st is None:
            st = self.streams[stream] = _Stream(self._pins.get(stream))
        if log_id is not None:
            self.any_log_id = True
            if self.log_pins and log_id in self.log_pins:
                self._log_seen.add(log_id)
        last = st.seq
        if seq == last + 1:
            if prev_hash != st.hash:
                if last == 0:
                    self._found(
                        stream=stream,
                        seq=seq,
                        what="the stream's first event does not chain to the genesis hash",
                        expected=GENESIS_HASH,
                        found=prev_hash,
                        log_id=log_id,
                    )
                else:
                    self._found(
                        stream=stream,
                        seq=last,
                        what=f"seq {last}'s hash is not the one seq {seq} chains to: seq "
                        f"{last} was altered and re-hashed (or seq {seq}'s prev_hash edited)",
                        expected=prev_hash,
                        found=st.hash,
                    )
        elif seq > last + 1:
            gone = f"seq {last + 1}" if seq == last + 2 else f"seqs {last + 1} to {seq - 1}"
            if st.missing is None:
                st.missing = {}
            st.missing[last + 1] = len(self.discrepancies)
            self._found(
                stream=stream,
                seq=last + 1,
                what=f"{gone} missing from the log (seq {seq} follows seq {last})",
                expected=last + 1,
                found=seq,
                log_id=log_id,
            )
        else:
            late = st.missing.get(seq) if st.missing is not None else None
            d = Discrepancy(
                check=CHECK,
                stream=stream,
                seq=seq,
                what=(
                    f"seq {seq} comes out of order in the log, after seq {last}"
                    if late is not None
                    else f"seq {seq} appears again in the log, after seq {last}"
                ),
                expected=last + 1,
                found=seq,
                log_id=log_id,
            )
            if late is not None:
                self.discrepancies[late] = d
            else:
                self.discrepancies.append(d)
            if not sound:
                self._altered(stream, seq, digest, log_id, env)
            return
        if not sound:
            self._altered(stream, seq, digest, log_id, env)
        st.seq = seq
        st.hash = digest
        pins = st.pins
        if pins:
            for skipped in [n for n in pins if n < seq]:  # signed, and missing from the log
                self._deleted(stream, skipped, pins.pop(skipped), f"the log has no seq {skipped}")
            at = pins.pop(seq, None)
            if at is not None:
                self._pinned(stream, seq, digest, at, log_id)
            st.next_pin = min(pins) if pins else -1

    def _altered(
        self, stream: str, seq: int, digest: str, log_id: str | None, env: Envelope | None
    ) -> None:
        self._found(
            stream=stream,
            seq=seq,
            what=f"seq {seq}'s hash does not recompute from its contents: the event was altered",
            expected=_recomputed(env),
            found=digest,
            log_id=log_id,
        )

    def _pinned(
        self, stream: str, seq: int, digest: str, pins: Iterable[_Pin], log_id: str | None
    ) -> None:
        for pin in pins:
            if pin.signed:
                self.checked["signed heads"] += 1
            if pin.digest != digest:
                self._found(
                    stream=stream,
                    seq=seq,
                    what=f"the event at seq {seq} is not the one {pin.title} "
                    + (
                        "signed: it or an event before it was altered"
                        if pin.signed
                        else "claims (its signature does not verify)"
                    ),
                    expected=pin.digest,
                    found=digest,
                    log_id=log_id,
                    check=CHECKPOINTS,
                )

    def _deleted(self, stream: str, seq: int, pins: Iterable[_Pin], why: str) -> None:
        for pin in pins:
            if pin.signed:
                self.checked["signed heads"] += 1
                what = f"{pin.title} signed seq {seq}, but {why}: signed events were deleted"
            else:
                what = f"{pin.title} claims seq {seq}, but {why} (its signature does not verify)"
            self._found(
                stream=stream,
                seq=seq,
                what=what,
                expected=pin.digest,
                found=None,
                check=CHECKPOINTS,
            )

    @property
    def tips(self) -> Mapping[str, tuple[int, str]]:
        """Each stream's last seq and hash in the log."""
        return {name: (st.seq, st.hash) for name, st in self.streams.items()}

    def finish(self) -> None:
        """The heads signed beyond a stream's end in the log, the signed log entries that
        are not in it, and a log with events but no checkpoint."""
        self.checked["events"] += self.events
        self.checked["streams"] += len(self.streams)
        for stream, pins in sorted(self._pins.items()):
            st = self.streams.get(stream)
            if stream in self.foreign or (st is None and not self.owns_log):
                continue  # another share's stream (or the first share's to name)
            ends = 0 if st is None else st.seq
            for seq, at in sorted(pins.items()):  # the heads the pass did not reach
                end = "the log holds no event of it" if ends == 0 else f"it ends at seq {ends}"
                self._deleted(stream, seq, at, end)
        if self.any_log_id:
            for log_id, titles in sorted(self.log_pins.items()):
                if log_id not in self._log_seen:
                    self._found(
                        stream="log",
                        seq=None,
                        what=f"log entry {log_id}, signed by {titles[0]}, is not in the log",
                        expected=log_id,
                        found=None,
                        log_id=log_id,
                        check=CHECKPOINTS,
                    )
        if not self.checkpoints and (self.events or self.dealt) and self.none_because is not None:
            self._found(
                stream=CHECKPOINTS,
                seq=None,
                what=self.none_because,
                expected="a signed checkpoint",
                found=None,
                check=CHECKPOINTS,
            )


def _recomputed(env: Envelope | None) -> str | None:
    """The hash ``env`` must carry, or None when its data cannot be hashed at all (a value
    no msgpack encoder holds, as a forged export may give)."""
    if env is None:
        return None
    try:
        return expected_hash(env)
    except Exception:  # any value the encoder refuses: there is no hash to give
        return None

#!/usr/bin/env python3
"""Check a Casino Night export with no server and no Redis: ``python3 verify_export.py FILE``.

Needs Python 3.11 or later and the ``cryptography`` package, nothing else (it imports
nothing of the project: an auditor copies this one file). docs/AUDIT.md, "The export and
the standalone verifier", describes the file and every check:

* every event's hash is recomputed exactly as the server computed it: SHA-256 over the
  msgpack array ``[id, type, version, stream, seq, ts, actor, causation, correlation,
  prev_hash, data]`` (every map of ``data`` in sorted key order), by the small msgpack
  encoder below, which chooses each encoding as msgpack-python does;
* every stream's chain from genesis (seq 1, ``prev_hash`` 64 zeros): no seq missing,
  repeated or out of order, each ``prev_hash`` the hash before it; the org-log ids in order;
* every signed checkpoint's Ed25519 signature with the file's key (and, given
  ``--public-key``, that this key is the one the organization gave the auditor), and every
  head it signed against the chains;
* the trailer: the number of lines, events and checkpoints, each stream's count and last
  hash, the SHA-256 of every line before it, and its signature;
* each settlement's ``wagered`` and ``paid`` against its lines, and, in a whole export,
  every player's balance never below zero.

It prints every problem with its stream and seq (or line), then the totals recomputed from
the events: per table wagered, paid and the house result; the cage's chips issued and
redeemed; each raffle's sales and prizes; each bell jar deal's sales, cash prizes and bank.
Exit status 0 when nothing is wrong, 1 on any problem, 2 when the file cannot be read.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import struct
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

FORMAT = "casino-night export"
VERSION = 1
CHECKPOINT_FORMAT = "casino-night checkpoint 1"
CHECKPOINT_PREFIX = b"casino-night checkpoint\n"
EXPORT_PREFIX = b"casino-night export\n"
GENESIS_HASH = "0" * 64
ENVELOPE_FIELDS = (
    "id",
    "type",
    "version",
    "stream",
    "seq",
    "ts",
    "actor",
    "causation",
    "correlation",
    "prev_hash",
)
"""The hashed metadata, in the order of the hashed array (the data follows them)."""
MAX_LISTED = 200
"""Problems printed one by one; the rest are counted."""
MAX_QUOTED = 60
"""Characters of a value from the file quoted in a problem (an edited field may be huge)."""


# msgpack, as msgpack-python's Packer(use_bin_type=True) writes it.

_CACHE_LIMIT = 1 << 16
"""Short strings and integers seen most (field names, player ids, amounts) are encoded
once: at most this many of each are kept."""
_strings: dict[str, bytes] = {}
_ints: dict[int, bytes] = {}


def _length(n: int, fix: int | None, fix_limit: int, c8: int | None, c16: int, c32: int) -> bytes:
    """The header of a str, bin, array or map of ``n`` items or bytes."""
    if fix is not None and n < fix_limit:
        return bytes((fix | n,))
    if c8 is not None and n <= 0xFF:
        return bytes((c8, n))
    if n <= 0xFFFF:
        return bytes((c16,)) + struct.pack(">H", n)
    return bytes((c32,)) + struct.pack(">I", n)


def _str(value: str) -> bytes:
    packed = _strings.get(value)
    if packed is None:
        data = value.encode("utf-8")
        n = len(data)
        if n < 32:
            packed = bytes((0xA0 | n,)) + data
        elif n <= 0xFF:
            packed = bytes((0xD9, n)) + data
        else:
            packed = _length(n, None, 0, None, 0xDA, 0xDB) + data
        # Ids and hashes (32 and 64 characters) are each seen once or twice: not kept.
        if n < 24 and len(_strings) < _CACHE_LIMIT:
            _strings[value] = packed
    return packed


def _int(n: int) -> bytes:
    """The shortest form of an integer, unsigned for a non-negative one."""
    packed = _ints.get(n)
    if packed is not None:
        return packed
    if 0 <= n < 0x80:
        packed = bytes((n,))
    elif -32 <= n < 0:
        packed = bytes((n & 0xFF,))
    elif n >= 0:
        for code, fmt, top in ((0xCC, ">B", 0xFF), (0xCD, ">H", 0xFFFF), (0xCE, ">I", 2**32 - 1)):
            if n <= top:
                packed = bytes((code,)) + struct.pack(fmt, n)
                break
        else:
            if n > 2**64 - 1:
                raise OverflowError("integer above 2^64 - 1")
            packed = b"\xcf" + struct.pack(">Q", n)
    else:
        for code, fmt, low in ((0xD0, ">b", -0x80), (0xD1, ">h", -0x8000), (0xD2, ">i", -(2**31))):
            if n >= low:
                packed = bytes((code,)) + struct.pack(fmt, n)
                break
        else:
            if n < -(2**63):
                raise OverflowError("integer below -2^63")
            packed = b"\xd3" + struct.pack(">q", n)
    if len(_ints) < _CACHE_LIMIT:
        _ints[n] = packed
    return packed


def pack(value: Any, out: bytearray) -> None:
    """Append the msgpack encoding of ``value`` to ``out``, every map's keys in sorted
    order (the canonical form the server hashes): the shortest form of each integer
    (unsigned for a non-negative one), str with the str8 form, float64, bin for bytes."""
    kind = type(value)
    if kind is str:
        out += _str(value)
    elif kind is int:
        out += _int(value)
    elif kind is dict:
        n = len(value)
        if n < 16:
            out.append(0x80 | n)
        else:
            out += _length(n, None, 0, None, 0xDE, 0xDF)
        # The leaves (strings and integers, nearly all of them) inline: a call per leaf
        # was most of the verifier's time.
        strings, ints = _strings, _ints
        for k in sorted(value):
            out += (strings.get(k) or _str(k)) if type(k) is str else _packed(k)
            item = value[k]
            t = type(item)
            if t is str:
                out += strings.get(item) or _str(item)
            elif t is int:
                out += ints.get(item) or _int(item)
            else:
                pack(item, out)
    elif kind is list or kind is tuple:
        n = len(value)
        if n < 16:
            out.append(0x90 | n)
        else:
            out += _length(n, None, 0, None, 0xDC, 0xDD)
        strings, ints = _strings, _ints
        for item in value:
            t = type(item)
            if t is str:
                out += strings.get(item) or _str(item)
            elif t is int:
                out += ints.get(item) or _int(item)
            else:
                pack(item, out)
    elif value is None:
        out.append(0xC0)
    elif value is True:
        out.append(0xC3)
    elif value is False:
        out.append(0xC2)
    elif kind is float:
        out.append(0xCB)
        out += struct.pack(">d", value)
    elif kind is bytes:
        out += _length(len(value), None, 0, 0xC4, 0xC5, 0xC6) + value
    else:
        raise TypeError(f"cannot encode {kind.__name__}")


def _packed(value: Any) -> bytes:
    out = bytearray()
    pack(value, out)
    return bytes(out)


def canonical(value: Any) -> Any:
    """Every map's keys sorted, as the server sorts them before hashing (:func:`pack`
    writes maps in this order itself)."""
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


_HASHED_HEADER = bytes((0x90 | (len(ENVELOPE_FIELDS) + 1),))


def event_hash(event: dict[str, Any]) -> str:
    """The hash the event must carry, recomputed from its other fields: SHA-256 of the
    msgpack array of the ten metadata fields and the data."""
    out = bytearray(_HASHED_HEADER)
    for name in ENVELOPE_FIELDS:
        pack(event[name], out)
    pack(event["data"], out)
    return hashlib.sha256(out).hexdigest()


# Keys and signatures.


def fingerprint(key: Ed25519PublicKey) -> str:
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "sha256:" + hashlib.sha256(raw).hexdigest()[:32]


def load_key(pem: str) -> Ed25519PublicKey:
    """The Ed25519 public key of a PEM text (a public key, or a private key's public half)."""
    if not isinstance(pem, str):
        raise TypeError("the PEM is not text")
    data = pem.encode()
    if b"PRIVATE" in data:
        key: Any = serialization.load_pem_private_key(data, password=None).public_key()
    else:
        key = serialization.load_pem_public_key(data)
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 key")
    return key


def json_canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def signature_ok(key: Ed25519PublicKey, signature: Any, message: bytes) -> bool:
    try:
        key.verify(base64.b64decode(signature, validate=True), message)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


# The check.


SIGNED_MOVES = {
    "ChipsIssued": 1,
    "ChipsRedeemed": -1,
    "BetPlaced": -1,
    "WagerAdded": -1,
    "BetCancelled": 1,
}
"""The events that move one player's balance by their ``amount``, with the sign
(events/money.py says the same for the server)."""


def _quote(value: Any) -> str:
    """A value of the file as a problem quotes it: its repr, cut to :data:`MAX_QUOTED`."""
    text = repr(value)
    return text if len(text) <= MAX_QUOTED else text[: MAX_QUOTED - 1] + "…"


def _why(error: BaseException | Any) -> str:
    """An exception's message (or any value as text) as a problem quotes it, cut to
    :data:`MAX_QUOTED`."""
    if isinstance(error, KeyError) and error.args and isinstance(error.args[0], str):
        text = error.args[0]  # str() of a KeyError is the repr of its key
        text = text if text.startswith("settlement line") else repr(text)
    else:
        text = str(error)
    return text if len(text) <= MAX_QUOTED else text[: MAX_QUOTED - 1] + "…"


def _cents_field(data: Any, name: str) -> int:
    """``data[name]`` as a sum of money: a whole number of cents (not a bool, not text, not
    a float); TypeError or KeyError naming the field otherwise."""
    if not isinstance(data, dict):
        raise TypeError(f"its data is not a map: {_quote(data)}")
    value = data[name]
    if type(value) is not int:
        raise TypeError(f"{name} is not a whole number of cents: {_quote(value)}")
    return value


def _text_field(data: dict[str, Any], name: str) -> str:
    """``data[name]`` as a name (a player's, a deal's): text; TypeError otherwise."""
    value = data[name]
    if not isinstance(value, str):
        raise TypeError(f"{name} is not text: {_quote(value)}")
    return value


def settlement_lines(data: Any) -> list[dict[str, Any]]:
    """The lines of a ``Settled`` or ``PartSettled``, each checked to hold a player (text),
    an amount and a paid in whole cents and a result (text); TypeError or KeyError naming
    what is wrong otherwise (an edited settlement must not crash the check)."""
    if not isinstance(data, dict):
        raise TypeError(f"its data is not a map: {_quote(data)}")
    lines = data["settlements"]
    if not isinstance(lines, list):
        raise TypeError(f"settlements is not a list: {_quote(lines)}")
    for i, line in enumerate(lines):
        if not isinstance(line, dict):
            raise TypeError(f"settlement line {i} is not a map: {_quote(line)}")
        try:
            _text_field(line, "player")
            _text_field(line, "result")
            _cents_field(line, "amount")
            _cents_field(line, "paid")
        except KeyError as e:
            raise KeyError(f"settlement line {i} has no {e}") from None
        except TypeError as e:
            raise TypeError(f"settlement line {i}: {e}") from None
    return lines


def _moves(kind: Any, data: Any) -> list[tuple[str, int]]:
    """How an event moves players' balances: (player, signed cents)."""
    sign = SIGNED_MOVES.get(kind) if isinstance(kind, str) else None
    if sign is not None:
        return [(_text_field(data, "player"), sign * _cents_field(data, "amount"))]
    if kind in ("Settled", "PartSettled"):
        return [(line["player"], line["paid"]) for line in settlement_lines(data) if line["paid"]]
    return []


def _log_position(log_id: Any) -> tuple[int, int] | None:
    if not isinstance(log_id, str):
        return None
    ms, _, n = log_id.partition("-")
    # ASCII digits only (int() refuses other digits), and no longer than Redis's 64-bit ids
    # (int() refuses a text of thousands of digits).
    if not all(part.isascii() and part.isdigit() and len(part) <= 20 for part in (ms, n)):
        return None
    return int(ms), int(n)


class Totals:
    """What the events add up to (the money of docs/AUDIT.md's totals)."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, int]] = {}
        self.cage = {"issued": 0, "redeemed": 0}
        self.raffles: dict[str, dict[str, int]] = {}
        self.deals: dict[str, dict[str, int]] = {}
        self.leads: dict[str, str] = {}
        """A commingled deal's stream -> its lead's: one receptacle and one bank, on the
        lead, 4620.19(c)(15), (c)(20)."""
        self.balances: dict[str, int] = {}
        """Each player's chips: issued - redeemed - wagered + paid back, in log order."""

    def move(self, player: str, cents: int) -> bool:
        """Move a player's balance; False when it went below zero (the store's balance
        guard refuses any command that would: docs/ARCHITECTURE.md)."""
        balance = self.balances.get(player, 0) + cents
        self.balances[player] = balance
        return balance >= 0 or cents >= 0

    def table(self, name: str) -> dict[str, int]:
        return self.tables.setdefault(name, {"wagered": 0, "paid": 0, "rounds": 0})

    def add(self, event: dict[str, Any]) -> None:
        """Add one event (its ``stream`` text) to the totals. Every figure is read and
        checked before any total moves, so an event whose figures cannot be read (KeyError
        or TypeError naming the field) leaves the totals as they were."""
        stream, kind, data = event["stream"], event["type"], event["data"]
        if not isinstance(kind, str):
            return
        if kind in ("ChipsIssued", "ChipsRedeemed"):
            self.cage["issued" if kind == "ChipsIssued" else "redeemed"] += _cents_field(
                data, "amount"
            )
        elif kind in ("BetPlaced", "WagerAdded"):
            self.table(stream)["wagered"] += _cents_field(data, "amount")
        elif kind == "BetCancelled":
            self.table(stream)["wagered"] -= _cents_field(data, "amount")
        elif kind in ("Settled", "PartSettled"):
            lines = settlement_lines(data)
            t = self.table(stream)
            for line in lines:
                if line["result"] == "returned":  # a voided round's stake: not wagered
                    t["wagered"] -= line["paid"]
                else:
                    t["paid"] += line["paid"]
            if kind == "Settled":
                t["rounds"] += 1
        elif kind == "RoundEnded":
            self.table(stream)["rounds"] += 1
        elif kind == "TicketSold":
            amount, serials = _cents_field(data, "amount"), data["serials"]
            if not isinstance(serials, list):
                raise TypeError(f"serials is not a list: {_quote(serials)}")
            r = self.raffle(stream)
            r["sales"] += amount
            r["tickets"] += len(serials)
        elif kind == "PrizeAwarded":
            amount, cash = _cents_field(data, "amount"), data["cash"]
            if not isinstance(cash, bool):
                raise TypeError(f"cash is not true or false: {_quote(cash)}")
            r = self.raffle(stream)
            r["prizes"] += amount
            r["cash_prizes" if cash else "other_prizes"] += amount
        elif kind == "TicketsSold":
            self.deal(stream)["sales"] += _cents_field(data, "amount")
        elif kind == "TicketRedeemed":
            value, prize = _cents_field(data, "value"), data["kind"]
            d = self.deal(stream)
            d["cash_prizes" if prize == "cash" else "merchandise_prizes"] += value
        elif kind == "DealRegistered":
            self.deal(stream)
        elif kind == "DealCommingled":
            lead = "deal:" + _text_field(data, "lead")
            self.deal(stream)
            self.leads[stream] = lead

    def raffle(self, name: str) -> dict[str, int]:
        zero = dict.fromkeys(("sales", "tickets", "prizes", "cash_prizes", "other_prizes"), 0)
        return self.raffles.setdefault(name, zero)

    def deal(self, name: str) -> dict[str, int]:
        zero = dict.fromkeys(("sales", "cash_prizes", "merchandise_prizes"), 0)
        return self.deals.setdefault(name, zero)

    def report(self) -> dict[str, Any]:
        tables = {
            name: {**t, "house_result": t["wagered"] - t["paid"]}
            for name, t in sorted(self.tables.items())
        }
        cage = {**self.cage, "outstanding": self.cage["issued"] - self.cage["redeemed"]}
        # A combination's bank is its lead's sales less the cash prizes of all its deals.
        cash = {name: d["cash_prizes"] for name, d in self.deals.items()}
        for member, lead in self.leads.items():
            cash[lead] = cash.get(lead, 0) + self.deals[member]["cash_prizes"]
        deals = {
            name: {
                **d,
                "lead": self.leads.get(name),
                "bank": None if name in self.leads else d["sales"] - cash[name],
            }
            for name, d in sorted(self.deals.items())
        }
        return {
            "tables": tables,
            "cage": cage,
            "balances": dict(sorted(self.balances.items())),
            "raffles": dict(sorted(self.raffles.items())),
            "bell_jar_deals": deals,
        }


class Verifier:
    """One pass over an export's lines (:meth:`line`), then :meth:`finish`."""

    def __init__(
        self,
        public_key: Ed25519PublicKey | None = None,
        kept: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self.expected_key = public_key
        self.kept = list(kept)
        """The auditor's own checkpoint files (name, parsed JSON), checked beside the file's."""
        self.problems: list[str] = []
        self.digest = hashlib.sha256()
        self.lines = 0
        self.header: dict[str, Any] | None = None
        self.key: Ed25519PublicKey | None = None
        self.checkpoints: list[dict[str, Any]] = []
        self.events = 0
        self.checkpoint_lines = 0
        self.streams: dict[str, dict[str, Any]] = {}
        """Per stream: events, last seq, last hash."""
        self.signed: dict[tuple[str, int], str | None] = {}
        """(stream, seq) a checkpoint signed -> the hash found there in the export."""
        self.signed_logs: dict[str, bool] = {}
        self.missing: dict[tuple[str, int], int] = {}
        """(stream, seq) seen missing -> the index of its problem (a reorder replaces it)."""
        self.last_log: tuple[int, int] | None = None
        self.trailer: dict[str, Any] | None = None
        self.after_trailer = 0
        self.totals = Totals()
        self.whole = False
        """Whether the file holds every stream (then every player's every move is in it)."""

    def problem(self, text: str) -> None:
        self.problems.append(text)

    def line(self, raw: bytes) -> None:
        """Take the next line of the file, as its bytes (with its newline)."""
        number = self.lines + 1
        if self.trailer is not None:
            self.after_trailer += 1
            self.problem(f"line {number}: a line after the trailer: the file was edited")
            return
        try:
            doc = json.loads(raw)
            kind = doc["kind"]
        except (ValueError, KeyError, TypeError, RecursionError):
            if not raw.endswith(b"\n"):
                self.problem(f"line {number}: cut off in the middle: the file was cut short")
            else:
                self.problem(f"line {number}: not a line of an export: the file was edited")
            self.digest.update(raw)
            self.lines += 1
            return
        if kind == "trailer":
            self.trailer = doc
            return
        self.digest.update(raw)
        self.lines += 1
        if number == 1 and kind != "header":
            self.problem("line 1: not an export's header")
        try:
            if kind == "header":
                self._header(doc, number)
            elif kind == "key":
                self._key(doc, number)
            elif kind == "checkpoint":
                self.checkpoint_lines += 1
                self._checkpoint(doc.get("checkpoint"), number)
            elif kind == "event":
                self._event(doc.get("event"), number)
            else:
                self.problem(f"line {number}: unknown kind {_quote(kind)}")
        except Exception as e:
            # The last resort: every field is checked where it is read, but an auditor's
            # tool must name a line it could not check and go on, never stop on a traceback.
            self.problem(f"line {number}: cannot be checked ({type(e).__name__}: {_why(e)})")

    def _header(self, doc: dict[str, Any], number: int) -> None:
        if number != 1 or self.header is not None:
            self.problem(f"line {number}: a second header")
            return
        self.header = doc
        scope = doc.get("scope")
        if not isinstance(scope, dict) or not (
            scope.get("streams") == "all"
            or (
                isinstance(scope.get("streams"), list)
                and all(isinstance(name, str) for name in scope["streams"])
            )
        ):
            self.problem(f"line 1: its scope {_quote(scope)} is not an export's scope")
            doc["scope"] = {"occasion": None, "streams": []}
        self.whole = doc["scope"]["streams"] == "all"
        if doc.get("format") != FORMAT or doc.get("version") != VERSION:
            self.problem(
                f"line 1: format {_quote(doc.get('format'))} version "
                f"{_quote(doc.get('version'))}: this checks {FORMAT} version {VERSION}"
            )

    def _key(self, doc: dict[str, Any], number: int) -> None:
        try:
            key = load_key(doc["pem"])
        except (KeyError, TypeError, ValueError, UnsupportedAlgorithm) as e:
            self.problem(f"line {number}: the public key cannot be read ({_why(e)})")
            return
        if self.key is not None:
            self.problem(f"line {number}: a second public key")
            return
        self.key = key
        for name, kept in self.kept:
            self._checkpoint(kept, f"your {name}")
        if doc.get("fingerprint") != fingerprint(key):
            self.problem(
                f"line {number}: the key's fingerprint is not {_why(doc.get('fingerprint'))}"
            )
        if self.expected_key is not None and fingerprint(self.expected_key) != fingerprint(key):
            self.problem(
                f"line {number}: the export's key {fingerprint(key)} is not the key you gave "
                f"({fingerprint(self.expected_key)}): every signature of the file is suspect"
            )

    def _checkpoint(self, doc: Any, number: int | str) -> None:
        try:
            body = doc["body"]
            counter = body["counter"]
            streams = {
                str(name): (head["seq"], head["hash"]) for name, head in body["streams"].items()
            }
            log_id = body["log"]
            if type(counter) is not int or not isinstance(log_id, str):
                raise TypeError("counter or log")
            if not all(type(s) is int and isinstance(h, str) for s, h in streams.values()):
                raise TypeError("a head")
            if "" in streams:
                raise ValueError("a stream with no name")
        except (KeyError, TypeError, ValueError, AttributeError):
            self.problem(f"{_place(number)}: not a signed checkpoint")
            return
        title = f"checkpoint #{counter} ({_place(number)})"
        if self.key is None:
            self.problem(f"{title}: no public key before it to check it with")
            return
        if not signature_ok(
            self.key, doc.get("signature"), CHECKPOINT_PREFIX + json_canonical(body)
        ):
            named = body.get("key")
            if named != fingerprint(self.key):
                why = f"it names key {_why(named)}, not the export's key {fingerprint(self.key)}"
            else:
                why = "its signature does not verify: it was forged or edited"
            self.problem(f"{title}: {why}")
            return
        if body.get("format") != CHECKPOINT_FORMAT:
            self.problem(f"{title}: unknown format {_quote(body.get('format'))}")
        organization = (self.header or {}).get("organization")
        if body.get("organization") != organization:
            self.problem(
                f"{title}: of organization {_quote(body.get('organization'))}, "
                f"not {_quote(organization)}"
            )
        self.checkpoints.append(
            {"counter": counter, "streams": streams, "log": log_id, "title": title}
        )
        for name, (seq, _hash) in streams.items():
            self.signed.setdefault((name, seq), None)
        if log_id != "0":
            self.signed_logs.setdefault(log_id, False)

    def _event(self, event: Any, number: int) -> None:
        try:
            stream, seq = event["stream"], event["seq"]
            stated = event["hash"]
            missing = [f for f in (*ENVELOPE_FIELDS, "data") if f not in event]
            if missing or not isinstance(stream, str) or not stream or type(seq) is not int:
                raise TypeError(f"fields {missing}")
            recomputed = event_hash(event)
        except (KeyError, TypeError, OverflowError, RecursionError) as e:
            self.problem(f"line {number}: an event that cannot be read ({_why(e)})")
            return
        self.events += 1
        where = f"{stream[:MAX_QUOTED]} seq {seq}"
        if recomputed != stated:
            self.problem(
                f"{where}: edited: its contents hash to {recomputed[:16]}…, it carries "
                f"{_why(stated)[:16]}… (line {number})"
            )
        state = self.streams.get(stream)
        last_seq = 0 if state is None else state["last_seq"]
        last_hash = GENESIS_HASH if state is None else state["last_hash"]
        position = _log_position(event.get("log_id"))
        if position is None:
            self.problem(f"{where}: no org-log id (line {number})")
        elif self.last_log is not None and position <= self.last_log and seq > last_seq:
            self.problem(
                f"{where}: its log id {_why(event['log_id'])} is not after the one before it: "
                "out of log order"
            )
        if position is not None and (self.last_log is None or position > self.last_log):
            self.last_log = position
        if seq <= last_seq:
            if (stream, seq) in self.missing:
                index = self.missing.pop((stream, seq))
                self.problems[index] = (
                    f"{where}: reordered: it comes after seq {last_seq} (line {number})"
                )
            else:
                self.problem(f"{where}: repeated or out of order: seq {last_seq} came before it")
            return
        if seq > last_seq + 1:
            for gone in range(last_seq + 1, min(seq, last_seq + 1 + MAX_LISTED)):
                self.missing[(stream, gone)] = len(self.problems)
                self.problem(
                    f"{stream} seq {gone}: missing (the stream goes from seq {last_seq} to "
                    f"{seq}): deleted"
                )
        elif event["prev_hash"] != last_hash:
            before = "genesis" if seq == 1 else f"seq {last_seq}'s hash"
            self.problem(
                f"{where}: its prev_hash is not {before}: the chain is broken there "
                f"(seq {last_seq} or this event was altered)"
            )
        if state is None:
            state = self.streams[stream] = {"events": 0}
        state.update(events=state["events"] + 1, last_seq=seq, last_hash=stated)
        if (stream, seq) in self.signed:
            self.signed[(stream, seq)] = stated
        log_id = event.get("log_id")
        if isinstance(log_id, str) and log_id in self.signed_logs:
            self.signed_logs[log_id] = True
        kind, data = event.get("type"), event.get("data")
        try:
            moves = _moves(kind, data)
            if kind in ("Settled", "PartSettled"):
                lines = settlement_lines(data)
                paid = sum(line["paid"] for line in lines)
                wagered = sum(line["amount"] for line in lines)
                if (paid, wagered) != (data.get("paid"), data.get("wagered")):
                    self.problem(
                        f"{where}: {kind} says wagered {_why(data.get('wagered'))}, paid "
                        f"{_why(data.get('paid'))}; its lines add up to wagered {wagered}, "
                        f"paid {paid}"
                    )
            self.totals.add(event)
        except (KeyError, TypeError) as e:
            self.problem(
                f"{where}: a {str(kind)[:MAX_QUOTED]} whose figures cannot be read ({_why(e)})"
            )
            return
        for player, cents in moves:
            if not self.totals.move(player, cents) and self.whole:
                self.problem(
                    f"{where}: {player[:MAX_QUOTED]}'s balance goes below zero "
                    f"({self.totals.balances[player]} cents): the store never lets it"
                )

    def finish(self) -> None:
        """The file has ended: the checkpoints' heads, the trailer."""
        try:
            self._finish()
        except Exception as e:  # the last resort, as in :meth:`line`
            self.problem(f"trailer: cannot be checked ({type(e).__name__}: {_why(e)})")

    def _finish(self) -> None:
        if self.header is None:
            self.problem("no header: not an export")
        if self.key is None:
            self.problem("no public key: no signature can be checked")
        # _header made the scope a map of "all" or a list of stream names.
        chosen = (self.header or {"scope": {"streams": []}})["scope"]["streams"]
        scoped: set[str] | None = None if chosen == "all" else set(chosen)
        if not self.checkpoints:
            self.problem("no checkpoint whose signature verifies: nothing vouches for the chains")
        for cp in self.checkpoints:
            for name, (seq, signed) in sorted(cp["streams"].items()):
                if scoped is not None and name not in scoped:
                    continue
                state = self.streams.get(name)
                found = self.signed.get((name, seq))
                if state is None or state["last_seq"] < seq:
                    ends = (
                        "is not in the file"
                        if state is None
                        else f"ends at seq {state['last_seq']}"
                    )
                    self.problem(
                        f"{name} seq {seq}: the stream {ends}, but {cp['title']} signed seq "
                        f"{seq}: signed events were deleted"
                    )
                elif found != signed:
                    self.problem(
                        f"{name} seq {seq}: not the event {cp['title']} signed (hash "
                        f"{str(found)[:16]}…, signed {signed[:16]}…): it or an event before it "
                        "was altered"
                    )
            if chosen == "all" and cp["log"] != "0" and not self.signed_logs.get(cp["log"]):
                self.problem(f"log entry {cp['log']}, signed by {cp['title']}, is not in the file")
        self._trailer()

    def _trailer(self) -> None:
        t = self.trailer
        if t is None:
            self.problem(f"no trailer: the file was cut short after line {self.lines}")
            return
        counted = {
            "lines": self.lines,
            "events": self.events,
            "checkpoints": self.checkpoint_lines,
        }
        for name, value in counted.items():
            if t.get(name) != value:
                self.problem(f"trailer: it says {_quote(t.get(name))} {name}, the file has {value}")
        if t.get("sha256") != self.digest.hexdigest():
            self.problem(
                "trailer: the digest of the lines before it does not match: the file was edited"
            )
        streams = {
            name: {"events": s["events"], "last_seq": s["last_seq"], "last_hash": s["last_hash"]}
            for name, s in self.streams.items()
        }
        counts = t.get("streams")
        if not isinstance(counts, dict):
            self.problem(f"trailer: its streams {_quote(counts)} are not a map of the streams")
        elif counts != streams:
            differ = sorted(
                n for n in set(streams) | set(counts) if streams.get(n) != counts.get(n)
            )
            self.problem(
                f"trailer: the streams {', '.join(n[:MAX_QUOTED] for n in differ)} are not as "
                "it counts them"
            )
        if self.key is not None:
            message = EXPORT_PREFIX + json_canonical(
                {k: v for k, v in t.items() if k != "signature"}
            )
            if not signature_ok(self.key, t.get("signature"), message):
                self.problem("trailer: its signature does not verify: it was forged or edited")

    def unpinned(self) -> dict[str, int]:
        """Per stream, the events after the newest checkpoint's head (not yet signed)."""
        newest = max(self.checkpoints, key=lambda c: c["counter"], default=None)
        heads = newest["streams"] if newest else {}
        out = {}
        for name, state in self.streams.items():
            signed = heads.get(name, (0, ""))[0]
            if state["last_seq"] > signed:
                out[name] = state["last_seq"] - signed
        return out


def _place(number: int | str) -> str:
    return f"line {number}" if isinstance(number, int) else number


def verify(
    lines: Iterable[bytes],
    public_key: Ed25519PublicKey | None = None,
    kept: Sequence[tuple[str, Any]] = (),
) -> Verifier:
    """Check an export's lines (and ``kept``, the auditor's own checkpoints, against its
    chains); the verifier holds the problems and the totals."""
    verifier = Verifier(public_key, kept)
    for raw in lines:
        verifier.line(raw)
    verifier.finish()
    return verifier


def _cents(value: int) -> str:
    sign = "-" if value < 0 else ""
    return f"{sign}{abs(value) // 100}.{abs(value) % 100:02d}"


def render(verifier: Verifier, path: str) -> str:
    header = verifier.header or {}
    out = [
        f"export {path}: {header.get('organization_name')} ({header.get('organization')}), "
        f"scope {json.dumps(header.get('scope'))}, exported {header.get('exported_at_utc')}",
        f"key {fingerprint(verifier.key) if verifier.key else 'none'}: compare it with the key "
        "the organization gave you (or pass it with --public-key)",
        f"{verifier.events} events of {len(verifier.streams)} streams, "
        f"{len(verifier.checkpoints)} signed checkpoints",
    ]
    for problem in verifier.problems[:MAX_LISTED]:
        out.append(f"BROKEN  {problem}")
    if len(verifier.problems) > MAX_LISTED:
        out.append(f"BROKEN  … and {len(verifier.problems) - MAX_LISTED} more problems")
    for name, count in sorted(verifier.unpinned().items()):
        out.append(f"note    {name}: {count} events after the newest checkpoint (not signed yet)")
    totals = verifier.totals.report()
    out.append("totals (dollars):")
    for name, t in totals["tables"].items():
        out.append(
            f"  {name}: wagered {_cents(t['wagered'])}, paid {_cents(t['paid'])}, "
            f"house result {_cents(t['house_result'])}, rounds {t['rounds']}"
        )
    cage = totals["cage"]
    out.append(
        f"  cage: chips issued {_cents(cage['issued'])}, redeemed {_cents(cage['redeemed'])}, "
        f"outstanding {_cents(cage['outstanding'])}"
    )
    for name, r in totals["raffles"].items():
        out.append(
            f"  {name}: {r['tickets']} tickets sold for {_cents(r['sales'])}, prizes "
            f"{_cents(r['prizes'])} (cash {_cents(r['cash_prizes'])})"
        )
    for name, d in totals["bell_jar_deals"].items():
        bank = f"bank {_cents(d['bank'])}" if d["lead"] is None else f"bank on {d['lead']}"
        out.append(
            f"  {name}: sales {_cents(d['sales'])}, cash prizes {_cents(d['cash_prizes'])}, "
            f"{bank}, merchandise prizes {_cents(d['merchandise_prizes'])}"
        )
    out.append(
        "ok: every chain, checkpoint and count holds"
        if not verifier.problems
        else f"{len(verifier.problems)} problems"
    )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="verify_export.py", description=__doc__.split("\n")[0])
    parser.add_argument("file", help="the export (JSON Lines) to check")
    parser.add_argument(
        "--public-key",
        default=None,
        help="the organization's public key (PEM) to check the file's key against",
    )
    parser.add_argument(
        "--checkpoint",
        action="append",
        default=[],
        help="a checkpoint file you kept (`casino-night checkpoint`), checked against the chains"
        " too (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print the problems and totals as JSON")
    args = parser.parse_args(argv)
    try:
        expected = None
        if args.public_key is not None:
            with open(args.public_key) as f:
                text = f.read()
            block = re.search(r"-----BEGIN ([A-Z0-9 ]+)-----.+?-----END \1-----", text, re.S)
            if block is None:
                raise ValueError(f"{args.public_key} holds no PEM key")
            expected = load_key(block.group(0))
        with open(args.file, "rb") as f:
            kept = []
            for name in args.checkpoint:
                with open(name) as c:
                    kept.append((name, json.loads(c.read())))
            verifier = verify(f, expected, kept)
    except (OSError, ValueError, RecursionError) as e:
        print(f"verify_export.py: {e}", file=sys.stderr)
        return 2
    if args.json:
        report = {
            "ok": not verifier.problems,
            "problems": verifier.problems,
            "events": verifier.events,
            "streams": len(verifier.streams),
            "checkpoints": len(verifier.checkpoints),
            "key": fingerprint(verifier.key) if verifier.key else None,
            "unpinned": verifier.unpinned(),
            "totals": verifier.totals.report(),
        }
        print(json.dumps(report, indent=2))
    else:
        print(render(verifier, args.file))
    return 1 if verifier.problems else 0


if __name__ == "__main__":
    sys.exit(main())

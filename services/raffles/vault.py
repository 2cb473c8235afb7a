"""The purchaser vault: raffle purchasers' personal data, encrypted, erasable one person at a
time (4620.22(b)(7)(iii), (vi)(d)-(e); docs/PERSONAL_DATA.md).

Envelope encryption with one key per person:

- the **master key** (32 bytes) is derived from the server secret with HKDF-SHA256
  (:func:`master_key_from_secret`); it is never stored in Redis;
- each purchaser gets a fresh random 256-bit **data key**, stored only wrapped (AES-GCM under
  the master key, the purchaser id as associated data) in ``keys.purchaser_keys(org)``;
- the account is JSON encrypted with AES-GCM under the data key (associated data: the
  purchaser id) in ``keys.purchasers(org)``; whatever else belongs to the person and must go
  into an event (the location a sale reported) is :meth:`PurchaserVault.seal`-ed under the
  same data key, so events hold only opaque ids and sealed blobs;
- :meth:`PurchaserVault.erase` deletes the wrapped data key and the ciphertext
  (crypto-shredding): every sealed blob of that person becomes unreadable, while events,
  hash chains and totals stay exactly as they were.

The self-exclusion list is a set of HMAC fingerprints (normalized legal name + date of
birth, ``purchasers.exclusion_fingerprint``) under a key derived from the master key, so it
is matched without names in clear. Nothing here logs personal data: log lines carry counts
and opaque purchaser ids only. Data keys are unwrapped per call and never cached, so an
erasure takes effect at once in every process.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import structlog
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from services.aggregates import RuleError
from services.derived_keys import derive_key
from services.raffles.purchasers import (
    ACCOUNT_FIELDS,
    PurchaserAccount,
    exclusion_fingerprint,
    exclusion_fingerprints,
    parse_exclusion_csv,
)
from services.store import keys
from services.store.redis_store import RedisClient

__all__ = [
    "MASTER_KEY_INFO",
    "PURCHASER_ID_PREFIX",
    "PurchaserVault",
    "VaultError",
    "master_key_from_secret",
]

log = structlog.get_logger(__name__)

MASTER_KEY_INFO: Final = b"casino-night purchaser vault"
"""HKDF ``info`` of the master key: binds the derived key to this one use of the secret."""

_FINGERPRINT_INFO: Final = b"casino-night purchaser vault: self-exclusion fingerprints"
_ACCOUNT_INFO: Final = b"casino-night purchaser vault: account numbers"
_KEY_BYTES: Final = 32  # AES-256
_NONCE_BYTES: Final = 12  # the AES-GCM standard nonce
_VERSION: Final = b"\x01"  # first byte of every blob: the format, so keys can be rotated
PURCHASER_ID_PREFIX: Final = "pu_"
_ID_HEX_BYTES: Final = 8  # pu_ + 16 hex digits: 64 random bits
_EXCLUSION_BATCH: Final = 1000
_LOADING_TTL_SECONDS: Final = 3600  # a load that died half-way leaves nothing behind

_REGISTER = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
return 1
"""
"""KEYS: accounts index, purchaser keys, purchasers. ARGV: account fingerprint, purchaser
id, wrapped data key, ciphertext. 0: account number taken; -1: id taken; 1: registered."""

_ERASE = """
local n = redis.call('HDEL', KEYS[2], ARGV[1]) + redis.call('HDEL', KEYS[3], ARGV[1])
if ARGV[2] ~= '' and redis.call('HGET', KEYS[1], ARGV[2]) == ARGV[1] then
  redis.call('HDEL', KEYS[1], ARGV[2])
end
return n
"""
"""KEYS as for registering. ARGV: purchaser id, account fingerprint (or '')."""


class VaultError(Exception):
    """Stored data the vault cannot decrypt: a wrong master key or a tampered blob. Never
    the same as an erased purchaser (that is ``None``)."""


def master_key_from_secret(secret: bytes) -> bytes:
    """The vault's 32-byte master key: HKDF-SHA256 of the server secret
    (``services.gateway.auth.load_secret``) with info :data:`MASTER_KEY_INFO`."""
    if not secret:
        raise ValueError("the server secret is empty")
    return _derive(secret, MASTER_KEY_INFO)


def _derive(key_material: bytes, info: bytes) -> bytes:
    return derive_key(key_material, info, _KEY_BYTES)


def _aad(purpose: str, purchaser_id: str) -> bytes:
    return f"casino-night/{purpose}/{purchaser_id}".encode()


def _encrypt(key: bytes, plaintext: bytes, aad: bytes) -> bytes:
    nonce = secrets.token_bytes(_NONCE_BYTES)
    return _VERSION + nonce + AESGCM(key).encrypt(nonce, plaintext, aad)


def _decrypt(key: bytes, blob: bytes, aad: bytes) -> bytes:
    if len(blob) < 1 + _NONCE_BYTES or blob[:1] != _VERSION:
        raise VaultError("not a vault blob")
    nonce, body = blob[1 : 1 + _NONCE_BYTES], blob[1 + _NONCE_BYTES :]
    try:
        return AESGCM(key).decrypt(nonce, body, aad)
    except InvalidTag:
        raise VaultError("cannot decrypt: wrong master key or tampered data") from None


class PurchaserVault:
    """Purchaser accounts and self-exclusions of one organization, in Redis."""

    def __init__(self, redis: RedisClient, org: str, master_key: bytes) -> None:
        if len(master_key) != _KEY_BYTES:
            raise ValueError("the master key must be 32 bytes (see master_key_from_secret)")
        self.redis = redis
        self.org = org
        self._master = master_key
        self._fingerprint_key = _derive(master_key, _FINGERPRINT_INFO)
        self._account_key = _derive(master_key, _ACCOUNT_INFO)
        self._register = redis.register_script(_REGISTER)
        self._erase = redis.register_script(_ERASE)
        self._keys = [
            keys.purchaser_accounts(org),
            keys.purchaser_keys(org),
            keys.purchasers(org),
        ]

    def __repr__(self) -> str:
        return f"PurchaserVault(org={self.org!r})"

    # -- accounts ---------------------------------------------------------------------------

    def _account_fingerprint(self, account_number: str) -> str:
        return hmac.new(self._account_key, account_number.encode(), hashlib.sha256).hexdigest()

    async def register(self, account: PurchaserAccount) -> str:
        """Store a new purchaser's account; their opaque id (``pu_`` + 16 hex digits).

        Registering the same account again (every field equal) returns the id it already
        has, so a retried registration is safe. RuleError ``duplicate_account`` when the
        account number belongs to a purchaser with other details (one account per number,
        4620.22(b)(7)(iii)(c))."""
        account_fp = self._account_fingerprint(account.account_number)
        plaintext = json.dumps(account.to_json(), separators=(",", ":"), sort_keys=True).encode()
        while True:
            purchaser_id = PURCHASER_ID_PREFIX + secrets.token_hex(_ID_HEX_BYTES)
            data_key = AESGCM.generate_key(bit_length=256)
            wrapped = _encrypt(self._master, data_key, _aad("key", purchaser_id))
            ciphertext = _encrypt(data_key, plaintext, _aad("account", purchaser_id))
            done = await self._register(
                keys=self._keys, args=[account_fp, purchaser_id, wrapped, ciphertext]
            )
            if done == 1:
                log.info("purchaser_registered", org=self.org, purchaser=purchaser_id)
                return purchaser_id
            if done == 0:
                existing = await self._registered_as(account_fp, account)
                if existing is not None:
                    return existing  # a retried registration: the same answer, nothing new
                raise RuleError(
                    "duplicate_account",
                    "that account number already belongs to a purchaser (4620.22(b)(7)(iii)(c))",
                )
            # -1: a 64-bit id collided; draw another.

    async def _registered_as(self, account_fp: str, account: PurchaserAccount) -> str | None:
        """The id of the purchaser registered under this account number, when their stored
        account is exactly ``account`` (so registering again is a retry, not a duplicate)."""
        raw: Any = await self.redis.hget(keys.purchaser_accounts(self.org), account_fp)
        if raw is None:
            return None
        purchaser_id = raw.decode() if isinstance(raw, bytes) else str(raw)
        try:
            stored = await self.get(purchaser_id)
        except VaultError:
            return None
        return purchaser_id if stored == account else None

    async def _data_key(self, purchaser_id: str) -> bytes | None:
        wrapped: Any = await self.redis.hget(keys.purchaser_keys(self.org), purchaser_id)
        if wrapped is None:
            return None
        return _decrypt(self._master, bytes(wrapped), _aad("key", purchaser_id))

    async def get(self, purchaser_id: str) -> PurchaserAccount | None:
        """The purchaser's account; None for an unknown or erased purchaser. VaultError when
        the stored data cannot be decrypted (wrong master key, tampering)."""
        data_key = await self._data_key(purchaser_id)
        if data_key is None:
            return None
        blob: Any = await self.redis.hget(keys.purchasers(self.org), purchaser_id)
        if blob is None:
            return None
        raw = json.loads(_decrypt(data_key, bytes(blob), _aad("account", purchaser_id)))
        return PurchaserAccount(**{name: raw[name] for name in ACCOUNT_FIELDS})

    async def seal(self, purchaser_id: str, data: dict[str, Any]) -> bytes:
        """``data`` (JSON) encrypted under the purchaser's data key, to be kept in an event:
        readable with :meth:`open` until the purchaser is erased. RuleError
        ``unknown_purchaser`` for an unknown or erased purchaser."""
        data_key = await self._data_key(purchaser_id)
        if data_key is None:
            raise RuleError("unknown_purchaser", f"no purchaser account {purchaser_id}")
        plaintext = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
        return _encrypt(data_key, plaintext, _aad("sealed", purchaser_id))

    async def open(self, purchaser_id: str, blob: bytes) -> dict[str, Any] | None:
        """What :meth:`seal` sealed for this purchaser; None once they are erased. VaultError
        for a blob that was not sealed for them (or was altered)."""
        data_key = await self._data_key(purchaser_id)
        if data_key is None:
            return None
        value: dict[str, Any] = json.loads(_decrypt(data_key, blob, _aad("sealed", purchaser_id)))
        return value

    async def erase(self, purchaser_id: str) -> bool:
        """Crypto-shred one purchaser: their wrapped data key and their account ciphertext
        are deleted (with their account-number index entry), so their account and everything
        sealed for them are unreadable for good. Events are untouched. True when something
        was erased, False for an unknown or already erased purchaser.

        Redis persistence keeps deleted values until its next AOF rewrite or snapshot
        (docs/PERSONAL_DATA.md)."""
        account_fp = ""
        try:
            account = await self.get(purchaser_id)
        except VaultError:
            account = None  # undecryptable: shred what is there; the index entry stays
        if account is not None:
            account_fp = self._account_fingerprint(account.account_number)
        erased = await self._erase(keys=self._keys, args=[purchaser_id, account_fp])
        if erased:
            log.info("purchaser_erased", org=self.org, purchaser=purchaser_id)
        return bool(erased)

    # -- self-exclusion ---------------------------------------------------------------------

    def _fingerprint(self, legal_name: str, date_of_birth: str) -> str:
        return exclusion_fingerprint(self._fingerprint_key, legal_name, date_of_birth)

    async def load_exclusions(
        self, entries: Iterable[tuple[str, str]], *, replace: bool = False
    ) -> int:
        """Add ``(legal_name, date_of_birth)`` entries to the self-exclusion list
        (4620.22(b)(7)(iv)); with ``replace``, the entries become the whole list. The new
        list takes effect in one command, never half-loaded. One bad entry (RuleError
        ``incomplete_account``/``invalid_account``) loads nothing. Returns the number of
        distinct entries given."""
        fingerprints = sorted(exclusion_fingerprints(self._fingerprint_key, entries))
        key = keys.self_exclusions(self.org)
        if not fingerprints:
            if replace:
                await self.redis.delete(key)
        else:
            # Built aside, then swapped in by one command: readers see the old list or the
            # new one (works on a Redis Cluster too: both keys carry the org's hash tag).
            loading = keys.self_exclusions_loading(self.org, secrets.token_hex(8))
            for i in range(0, len(fingerprints), _EXCLUSION_BATCH):
                await self.redis.sadd(loading, *fingerprints[i : i + _EXCLUSION_BATCH])
                await self.redis.expire(loading, _LOADING_TTL_SECONDS)
            if replace:
                await self.redis.rename(loading, key)
            else:
                await self.redis.sunionstore(key, [key, loading])
                await self.redis.delete(loading)
        log.info("self_exclusions_loaded", org=self.org, entries=len(fingerprints), replace=replace)
        return len(fingerprints)

    async def load_exclusion_file(self, path: str | Path, *, replace: bool = False) -> int:
        """Load a self-exclusion CSV file (header ``legal_name,date_of_birth``), see
        ``purchasers.parse_exclusion_csv`` and :meth:`load_exclusions`."""
        text = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
        return await self.load_exclusions(parse_exclusion_csv(text), replace=replace)

    async def exclude(self, legal_name: str, date_of_birth: str) -> None:
        """Put one person on the self-exclusion list."""
        await self.redis.sadd(
            keys.self_exclusions(self.org), self._fingerprint(legal_name, date_of_birth)
        )

    async def is_account_excluded(self, account: PurchaserAccount) -> bool:
        """Is the holder of ``account`` on the self-exclusion list (name and date of birth)?"""
        found: Any = await self.redis.sismember(
            keys.self_exclusions(self.org),
            self._fingerprint(account.legal_name, account.date_of_birth),
        )
        return bool(found)

    async def is_excluded(self, purchaser_id: str) -> bool:
        """Is this registered purchaser on the self-exclusion list? False for an unknown or
        erased purchaser (who cannot buy anyway)."""
        account = await self.get(purchaser_id)
        return account is not None and await self.is_account_excluded(account)

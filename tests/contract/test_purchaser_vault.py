"""The purchaser vault against a real Redis: accounts encrypted per person, sealed event data,
crypto-shredding of one person, the self-exclusion list, and the master key
(``services/raffles/vault.py``; docs/PERSONAL_DATA.md)."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from structlog.testing import capture_logs

from services.aggregates import RuleError
from services.raffles.purchasers import PurchaserAccount, parse_account
from services.raffles.vault import (
    PURCHASER_ID_PREFIX,
    PurchaserVault,
    VaultError,
    master_key_from_secret,
)
from services.store import keys

MASTER = master_key_from_secret(b"contract-test server secret")

ALICE = parse_account(
    {
        "legal_name": "Alice Marguerite Pendleton",
        "date_of_birth": "1980-06-15",
        "account_number": "RAF-1001",
        "address": "7 Willow Lane, Saratoga Springs NY 12866",
        "email": "alice.pendleton@example.net",
        "phone": "+1 518 555 0199",
    }
)
BOB = parse_account(
    {
        "legal_name": "Robert Okonkwo-Lindqvist",
        "date_of_birth": "1992-02-29",
        "account_number": "RAF-1002",
        "address": "221 Hudson Ave, Albany NY 12210",
        "email": "bob.ol@example.com",
        "phone": "518-555-0177",
    }
)


@pytest.fixture
def vault(redis_client: aioredis.Redis, org: str) -> PurchaserVault:
    return PurchaserVault(redis_client, org, MASTER)


async def raw_values(redis_client: aioredis.Redis, org: str) -> list[bytes]:
    """Every field and value of every key of the organization, as stored."""
    found: list[bytes] = []
    async for key in redis_client.scan_iter(match=f"{keys.PREFIX}:{{{org}}}:*"):
        kind = (await redis_client.type(key)).decode()
        if kind == "hash":
            for field, value in (await redis_client.hgetall(key)).items():
                found += [field, value]
        elif kind == "set":
            found += list(await redis_client.smembers(key))
        else:
            found.append(await redis_client.dump(key) or b"")
        found.append(key)
    return found


def personal_fragments(account: PurchaserAccount) -> list[bytes]:
    """Each field value, and each word of five characters or more that is not made of hex
    digits only (ids and fingerprints are hex: a digit run there would be chance)."""
    values = account.to_json().values()
    words = {
        w
        for v in values
        for w in v.replace(",", " ").split()
        if len(w) >= 5 and not all(c in string.hexdigits for c in w)
    }
    return [v.encode() for v in values] + [w.encode() for w in sorted(words)]


# ---------------------------------------------------------------------------------------------
# Accounts
# ---------------------------------------------------------------------------------------------


async def test_register_and_get_round_trip(vault: PurchaserVault) -> None:
    alice = await vault.register(ALICE)
    bob = await vault.register(BOB)
    assert alice != bob
    for pid in (alice, bob):
        assert pid.startswith(PURCHASER_ID_PREFIX)
        assert len(pid) == len(PURCHASER_ID_PREFIX) + 16
        int(pid.removeprefix(PURCHASER_ID_PREFIX), 16)
    assert await vault.get(alice) == ALICE
    assert await vault.get(bob) == BOB
    assert await vault.get("pu_0000000000000000") is None


async def test_a_second_vault_with_the_same_key_reads_the_account(
    redis_client: aioredis.Redis, org: str, vault: PurchaserVault
) -> None:
    pid = await vault.register(ALICE)
    other = PurchaserVault(
        redis_client, org, master_key_from_secret(b"contract-test server secret")
    )
    assert await other.get(pid) == ALICE


async def test_nothing_in_redis_holds_personal_data_in_clear(
    redis_client: aioredis.Redis, org: str, vault: PurchaserVault
) -> None:
    await vault.register(ALICE)
    await vault.register(BOB)
    await vault.exclude(ALICE.legal_name, ALICE.date_of_birth)
    stored = await raw_values(redis_client, org)
    assert len(stored) > 6
    for fragment in personal_fragments(ALICE) + personal_fragments(BOB):
        for value in stored:
            assert fragment not in value, fragment
            assert fragment.lower() not in value.lower(), fragment


async def test_each_purchaser_has_a_distinct_key_and_fresh_ciphertext(
    redis_client: aioredis.Redis, org: str, vault: PurchaserVault
) -> None:
    a = await vault.register(ALICE)
    same = parse_account({**ALICE.to_json(), "account_number": "RAF-1001-b"})
    b = await vault.register(same)
    wrapped = await redis_client.hmget(keys.purchaser_keys(org), [a, b])
    blobs = await redis_client.hmget(keys.purchasers(org), [a, b])
    assert None not in wrapped and None not in blobs
    assert wrapped[0] != wrapped[1]
    assert blobs[0] != blobs[1]


async def test_an_account_number_registers_once(vault: PurchaserVault) -> None:
    """4620.22(b)(7)(iii)(c): an account number unique to the purchaser."""
    await vault.register(ALICE)
    twin = parse_account({**BOB.to_json(), "account_number": ALICE.account_number})
    with pytest.raises(RuleError) as e:
        await vault.register(twin)
    assert e.value.code == "duplicate_account"
    assert ALICE.account_number not in e.value.message


async def test_registering_the_same_account_again_returns_its_id(vault: PurchaserVault) -> None:
    """A retried registration (every field equal) is answered with the id it already has."""
    first = await vault.register(ALICE)
    assert await vault.register(ALICE) == first
    await vault.erase(first)
    # once erased, the number is free again: a new registration gets a new id
    assert await vault.register(ALICE) != first


async def test_ciphertext_moved_to_another_purchaser_does_not_decrypt(
    redis_client: aioredis.Redis, org: str, vault: PurchaserVault
) -> None:
    """The purchaser id is the associated data: a blob swapped between ids is refused."""
    a = await vault.register(ALICE)
    b = await vault.register(BOB)
    blob_a = await redis_client.hget(keys.purchasers(org), a)
    assert blob_a is not None
    await redis_client.hset(keys.purchasers(org), b, blob_a)
    with pytest.raises(VaultError):
        await vault.get(b)
    assert await vault.get(a) == ALICE


async def test_a_tampered_account_is_refused(
    redis_client: aioredis.Redis, org: str, vault: PurchaserVault
) -> None:
    pid = await vault.register(ALICE)
    blob = bytearray(await redis_client.hget(keys.purchasers(org), pid) or b"")
    blob[-1] ^= 1
    await redis_client.hset(keys.purchasers(org), pid, bytes(blob))
    with pytest.raises(VaultError):
        await vault.get(pid)


# ---------------------------------------------------------------------------------------------
# Master key
# ---------------------------------------------------------------------------------------------


def test_the_master_key_is_derived_not_the_secret() -> None:
    secret = b"contract-test server secret"
    key = master_key_from_secret(secret)
    assert len(key) == 32
    assert key == MASTER
    assert key != master_key_from_secret(secret + b"!")
    assert secret not in key
    with pytest.raises(ValueError):
        master_key_from_secret(b"")


def test_a_master_key_of_the_wrong_size_is_refused(redis_client: aioredis.Redis, org: str) -> None:
    with pytest.raises(ValueError):
        PurchaserVault(redis_client, org, b"short")


async def test_a_wrong_master_key_cannot_read(
    redis_client: aioredis.Redis, org: str, vault: PurchaserVault
) -> None:
    pid = await vault.register(ALICE)
    sealed = await vault.seal(pid, {"state": "NY"})
    await vault.exclude(ALICE.legal_name, ALICE.date_of_birth)
    thief = PurchaserVault(redis_client, org, master_key_from_secret(b"another server secret"))
    with pytest.raises(VaultError):
        await thief.get(pid)
    with pytest.raises(VaultError):
        await thief.open(pid, sealed)
    with pytest.raises(VaultError):
        await thief.is_excluded(pid)
    # the fingerprints are keyed too: the wrong key does not match the list
    assert not await thief.is_account_excluded(ALICE)
    assert await vault.is_account_excluded(ALICE)


# ---------------------------------------------------------------------------------------------
# Sealed event data
# ---------------------------------------------------------------------------------------------


async def test_seal_and_open(vault: PurchaserVault) -> None:
    alice = await vault.register(ALICE)
    bob = await vault.register(BOB)
    data = {"state": "NJ", "lat": 40.7357, "lon": -74.1724, "source": "gps"}
    blob = await vault.seal(alice, data)
    assert isinstance(blob, bytes)
    # long enough that random ciphertext cannot hold them by chance
    assert b'"state"' not in blob and b"40.7357" not in blob and b'"gps"' not in blob
    assert await vault.open(alice, blob) == data
    assert await vault.seal(alice, data) != blob  # a fresh nonce every time
    with pytest.raises(VaultError):
        await vault.open(bob, blob)  # sealed for alice only
    with pytest.raises(VaultError):
        await vault.open(alice, blob[:-1] + bytes([blob[-1] ^ 1]))
    with pytest.raises(VaultError):
        await vault.open(alice, b"not a blob")


async def test_sealing_for_an_unknown_purchaser_is_refused(vault: PurchaserVault) -> None:
    with pytest.raises(RuleError) as e:
        await vault.seal("pu_0123456789abcdef", {"state": "NY"})
    assert e.value.code == "unknown_purchaser"


# ---------------------------------------------------------------------------------------------
# Crypto-shredding
# ---------------------------------------------------------------------------------------------


async def test_erase_shreds_one_purchaser_and_spares_the_others(
    redis_client: aioredis.Redis, org: str, vault: PurchaserVault
) -> None:
    alice = await vault.register(ALICE)
    bob = await vault.register(BOB)
    sealed_alice = await vault.seal(alice, {"state": "NY", "reported": "US-NY"})
    sealed_bob = await vault.seal(bob, {"state": "NY"})

    assert await vault.erase(alice) is True

    assert await vault.get(alice) is None
    assert await vault.open(alice, sealed_alice) is None
    assert not await vault.is_excluded(alice)
    with pytest.raises(RuleError):
        await vault.seal(alice, {"state": "NY"})
    assert await redis_client.hget(keys.purchaser_keys(org), alice) is None
    assert await redis_client.hget(keys.purchasers(org), alice) is None
    # the others still work
    assert await vault.get(bob) == BOB
    assert await vault.open(bob, sealed_bob) == {"state": "NY"}
    # and nothing of alice is left anywhere in the organization's keys
    for fragment in personal_fragments(ALICE):
        for value in await raw_values(redis_client, org):
            assert fragment not in value
    # erasing again erases nothing
    assert await vault.erase(alice) is False
    assert await vault.erase("pu_ffffffffffffffff") is False


async def test_an_erased_account_number_can_be_registered_again(vault: PurchaserVault) -> None:
    first = await vault.register(ALICE)
    await vault.erase(first)
    again = await vault.register(ALICE)
    assert again != first
    assert await vault.get(again) == ALICE
    assert await vault.get(first) is None


async def test_erase_leaves_the_event_log_and_its_hash_chain_alone(
    redis_client: aioredis.Redis, org: str, vault: PurchaserVault
) -> None:
    """Events hold the opaque id and sealed blobs only: erasing a person changes no key of
    the store's streams (and so no hash, no total)."""
    pid = await vault.register(ALICE)
    blob = await vault.seal(pid, {"state": "NY"})
    stream = keys.stream(org, "raffle:r-1")
    await redis_client.xadd(stream, {b"purchaser": pid.encode(), b"location": blob}, id="0-1")
    before = await redis_client.xrange(stream)
    await vault.erase(pid)
    assert await redis_client.xrange(stream) == before
    assert await vault.open(pid, before[0][1][b"location"]) is None


# ---------------------------------------------------------------------------------------------
# Self-exclusion, 4620.22(b)(7)(iv)
# ---------------------------------------------------------------------------------------------


async def test_the_exclusion_list_matches_registered_purchasers(vault: PurchaserVault) -> None:
    alice = await vault.register(ALICE)
    bob = await vault.register(BOB)
    loaded = await vault.load_exclusions(
        [("  ALICE marguerite  PENDLETON", "1980-06-15"), ("Someone Else", "1970-01-01")]
    )
    assert loaded == 2
    assert await vault.is_excluded(alice)
    assert not await vault.is_excluded(bob)
    assert not await vault.is_excluded("pu_0000000000000000")
    await vault.exclude("robert okonkwo-lindqvist", "1992-02-29")
    assert await vault.is_excluded(bob)


async def test_the_same_name_with_another_birth_date_is_not_excluded(
    vault: PurchaserVault,
) -> None:
    alice = await vault.register(ALICE)
    await vault.exclude(ALICE.legal_name, "1980-06-16")
    assert not await vault.is_excluded(alice)


async def test_replacing_the_list_drops_entries_no_longer_on_it(vault: PurchaserVault) -> None:
    alice = await vault.register(ALICE)
    bob = await vault.register(BOB)
    await vault.load_exclusions([(ALICE.legal_name, ALICE.date_of_birth)])
    await vault.load_exclusions([(BOB.legal_name, BOB.date_of_birth)])  # adds
    assert await vault.is_excluded(alice) and await vault.is_excluded(bob)
    await vault.load_exclusions([(BOB.legal_name, BOB.date_of_birth)], replace=True)
    assert not await vault.is_excluded(alice)
    assert await vault.is_excluded(bob)
    assert await vault.load_exclusions([], replace=True) == 0
    assert not await vault.is_excluded(bob)


async def test_a_bad_entry_loads_nothing(
    redis_client: aioredis.Redis, org: str, vault: PurchaserVault
) -> None:
    alice = await vault.register(ALICE)
    with pytest.raises(RuleError) as e:
        await vault.load_exclusions(
            [(ALICE.legal_name, ALICE.date_of_birth), ("Bad Date", "1980-02-30")]
        )
    assert e.value.code == "invalid_account"
    assert not await vault.is_excluded(alice)
    assert await redis_client.exists(keys.self_exclusions(org)) == 0


async def test_a_large_list_loads_in_batches(vault: PurchaserVault) -> None:
    entries = [(f"Person {i}", f"19{50 + i % 50:02d}-01-{1 + i % 28:02d}") for i in range(2500)]
    bob = await vault.register(BOB)
    assert await vault.load_exclusions([*entries, (BOB.legal_name, BOB.date_of_birth)]) == 2501
    assert await vault.is_excluded(bob)
    assert await vault.is_account_excluded(
        parse_account({**BOB.to_json(), "legal_name": "person 1234", "date_of_birth": "1984-01-03"})
    )


async def test_an_exclusion_file_loads(tmp_path: Path, vault: PurchaserVault) -> None:
    alice = await vault.register(ALICE)
    bob = await vault.register(BOB)
    path = tmp_path / "self-exclusion.csv"
    path.write_text(
        "legal_name,date_of_birth\n"
        '"Pendleton, Alice Marguerite",1980-06-15\n'
        "Alice Marguerite Pendleton,1980-06-15\n"
        "\n",
        encoding="utf-8",
    )
    assert await vault.load_exclusion_file(path) == 2
    assert await vault.is_excluded(alice)
    assert not await vault.is_excluded(bob)


async def test_a_bad_exclusion_file_loads_nothing(tmp_path: Path, vault: PurchaserVault) -> None:
    alice = await vault.register(ALICE)
    path = tmp_path / "bad.csv"
    path.write_text(
        "legal_name,date_of_birth\nAlice Marguerite Pendleton,1980-06-15\nX Y,15/06/1980\n"
    )
    with pytest.raises(RuleError) as e:
        await vault.load_exclusion_file(path)
    assert e.value.code == "invalid_account"
    assert "line 3" in e.value.message
    assert not await vault.is_excluded(alice)


# ---------------------------------------------------------------------------------------------
# Logs
# ---------------------------------------------------------------------------------------------


async def test_the_vault_logs_no_personal_data(tmp_path: Path, vault: PurchaserVault) -> None:
    with capture_logs() as lines:
        alice = await vault.register(ALICE)
        blob = await vault.seal(alice, {"state": "NY"})
        await vault.open(alice, blob)
        await vault.load_exclusions([(ALICE.legal_name, ALICE.date_of_birth)])
        assert await vault.is_excluded(alice)
        await vault.erase(alice)
    events = {line["event"] for line in lines}
    assert {"purchaser_registered", "self_exclusions_loaded", "purchaser_erased"} <= events
    text = repr(lines) + repr(vault)
    for fragment in personal_fragments(ALICE):
        assert fragment.decode() not in text

"""Tokens and who may do what (services/gateway/auth.py)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import warnings
from typing import Any

import jwt
import pytest
from jwt.warnings import InsecureKeyLengthWarning

from services.gateway.auth import (
    AuthError,
    Principal,
    issue,
    may_read,
    mint,
    parse_ttl,
    read_claims,
    signing_key,
    verify,
)
from services.gateway.ops import authorize

SECRET = b"s3cret"
NOW = 1_800_000_000
BAD_NAMES = ["", "a\x00b", "tab\there", "line\n", "\x1f", "del\x7f", "c1\x80", "nel\x85", "\x9f",
             "lone\ud800", "\udfff", "x" * 129]  # fmt: skip
GOOD_NAMES = ["p-1", "desk/1", "Zoë", "席", "emoji \U0001f3b2", "x" * 128]


def refusal(tok: str, *, secret: bytes = SECRET, now: int = NOW) -> str:
    """The 401 message ``verify`` refuses ``tok`` with (the test fails if it accepts it)."""
    with pytest.raises(AuthError) as info:
        verify(secret, tok, now=now)
    return str(info.value)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def claims(**overrides: Any) -> dict[str, Any]:
    """Valid claims of a cashier token, with ``overrides`` (None removes a claim)."""
    base: dict[str, Any] = {
        "role": "cashier",
        "sub": "desk-1",
        "iat": NOW,
        "exp": NOW + 60,
        "jti": "0123456789abcdefABCDEF",
    }
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def signed(payload: dict[str, Any], algorithm: str = "HS256", key: bytes | None = None) -> str:
    """A JWT of ``payload`` signed with the server's key (or ``key``) by PyJWT itself."""
    return jwt.encode(payload, key or signing_key(SECRET), algorithm=algorithm)


def handmade(header: dict[str, Any], payload: dict[str, Any], signature: bytes) -> str:
    parts = [b64(json.dumps(header).encode()), b64(json.dumps(payload).encode())]
    return ".".join([*parts, b64(signature)])


def test_a_minted_token_verifies_with_its_claims() -> None:
    tok = mint(SECRET, role="dealer", sub="dana", ttl_seconds=60, now=NOW, tables=("roulette-1",))
    who = verify(SECRET, tok, now=NOW + 59)
    assert (who.role, who.sub, who.tables, who.exp) == ("dealer", "dana", ("roulette-1",), NOW + 60)
    assert who.player is None and re.fullmatch(r"[0-9a-f]{32}", who.jti)


def test_a_token_is_a_standard_hs256_jwt_a_tablet_can_read() -> None:
    issued = issue(SECRET, role="player", sub="p-1", player="p-1", ttl_seconds=90, now=NOW)
    header, payload, _signature = issued.token.split(".")
    # Without any JWT library: the expiry is in the base64url JSON payload.
    assert json.loads(unb64(header)) == {"alg": "HS256", "typ": "JWT"}
    assert json.loads(unb64(payload)) == {
        "role": "player",
        "sub": "p-1",
        "player": "p-1",
        "iat": NOW,
        "exp": NOW + 90,
        "jti": issued.jti,
    }
    assert issued.exp == NOW + 90
    # Any JWT library verifies it with the key derived from the secret (HKDF-SHA256).
    key = signing_key(SECRET)
    assert len(key) == 32 and key != SECRET
    decoded = jwt.decode(
        issued.token, key, algorithms=["HS256"], options={"verify_exp": False, "verify_iat": False}
    )
    assert decoded["jti"] == issued.jti
    assert verify(SECRET, issued.token, now=NOW).jti == issued.jti


def test_every_token_gets_its_own_random_id() -> None:
    ids = {issue(SECRET, role="ops", sub="o", ttl_seconds=60, now=NOW).jti for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)


def test_expired_forged_and_malformed_tokens_are_refused() -> None:
    tok = mint(SECRET, role="player", sub="p", player="p", ttl_seconds=60, now=NOW)
    assert refusal(tok, now=NOW + 60) == "token expired"
    assert read_claims(SECRET, tok).exp == NOW + 60  # read_claims ignores the expiry
    assert refusal(tok, secret=b"other") == "bad signature"
    header, _body, sig = tok.split(".")
    tampered = mint(SECRET, role="auditor", sub="p", ttl_seconds=60, now=NOW).split(".")[1]
    assert refusal(f"{header}.{tampered}.{sig}") == "bad signature"
    for junk in ("", "abc", "a.b.c", "a.b", f"{header}.", "...", "%%%.%%%.%%%"):
        assert refusal(junk) == "malformed token"


def test_the_old_home_made_format_is_refused() -> None:
    body = b64(json.dumps({"exp": NOW + 60, "role": "ops", "sub": "o"}).encode())
    sig = b64(hmac.new(SECRET, body.encode(), hashlib.sha256).digest())
    assert refusal(f"{body}.{sig}") == "malformed token"


def test_alg_none_is_refused() -> None:
    for alg in ("none", "None", "NONE"):
        tok = handmade({"alg": alg, "typ": "JWT"}, claims(role="ops"), b"")
        assert refusal(tok) == "bad signature"
    no_alg = handmade({"typ": "JWT"}, claims(), b"")
    assert refusal(no_alg) == "bad signature"


@pytest.mark.parametrize("alg", ["HS384", "HS512"])
def test_other_hmac_algorithms_under_the_right_key_are_refused(alg: str) -> None:
    with warnings.catch_warnings():  # PyJWT finds a 32-byte key short for these
        warnings.simplefilter("ignore", InsecureKeyLengthWarning)
        tok = signed(claims(), algorithm=alg)
        options = {"verify_exp": False, "verify_iat": False}
        assert jwt.decode(tok, signing_key(SECRET), algorithms=[alg], options=options)
    assert refusal(tok) == "bad signature"


def test_an_asymmetric_alg_with_an_hmac_signature_is_refused() -> None:
    # The algorithm-confusion forgery: claim RS256/ES256, sign with the HMAC key.
    for alg in ("RS256", "ES256", "EdDSA"):
        header = {"alg": alg, "typ": "JWT"}
        parts = [b64(json.dumps(header).encode()), b64(json.dumps(claims(role="ops")).encode())]
        mac = hmac.new(signing_key(SECRET), ".".join(parts).encode(), hashlib.sha256).digest()
        assert refusal(".".join([*parts, b64(mac)])) == "bad signature"


def test_a_token_signed_with_the_raw_secret_is_refused() -> None:
    assert refusal(signed(claims(), key=SECRET * 6)) == "bad signature"


@pytest.mark.parametrize("missing", ["role", "sub", "exp", "iat", "jti"])
def test_each_required_claim_is_required(missing: str) -> None:
    assert refusal(signed(claims(**{missing: None}))) == "malformed token"


@pytest.mark.parametrize(
    "override",
    [
        {"role": "owner"},
        {"role": 1},
        {"sub": 7},
        {"sub": ["a"]},
        {"exp": str(NOW + 60)},
        {"exp": NOW + 60.5},
        {"exp": True},
        {"iat": str(NOW)},
        {"iat": False},
        {"jti": 12345},
        {"jti": ""},
        {"jti": "has space"},
        {"jti": "x" * 65},
        {"tables": "roulette-1"},
        {"tables": [1]},
        {"tables": {"roulette-1": True}},
        {"player": 5},
        {"player": False},
    ],
    ids=repr,
)
def test_claims_of_the_wrong_type_are_malformed(override: dict[str, Any]) -> None:
    assert refusal(signed(claims(**override))) == "malformed token"


def test_an_explicit_null_player_is_malformed() -> None:
    payload = {**claims(role="player"), "player": None}
    assert refusal(signed(payload)) == "malformed token"


def test_a_payload_that_is_not_an_object_is_malformed() -> None:
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(b"[1, 2]")
    mac = hmac.new(signing_key(SECRET), f"{header}.{body}".encode(), hashlib.sha256).digest()
    assert refusal(f"{header}.{body}.{b64(mac)}") == "malformed token"


@pytest.mark.parametrize("name", BAD_NAMES, ids=repr)
def test_control_characters_and_lone_surrogates_are_refused_at_mint(name: str) -> None:
    with pytest.raises(ValueError, match="sub"):
        mint(SECRET, role="cashier", sub=name, ttl_seconds=60, now=NOW)
    with pytest.raises(ValueError, match="player"):
        mint(SECRET, role="player", sub="p", player=name, ttl_seconds=60, now=NOW)
    with pytest.raises(ValueError, match="table"):
        mint(SECRET, role="dealer", sub="d", tables=("t1", name), ttl_seconds=60, now=NOW)


@pytest.mark.parametrize("name", BAD_NAMES, ids=repr)
def test_control_characters_and_lone_surrogates_are_refused_at_verify(name: str) -> None:
    for override in ({"sub": name}, {"player": name}, {"tables": ["t1", name]}):
        assert refusal(signed(claims(**override))) == "malformed token"


@pytest.mark.parametrize("name", GOOD_NAMES, ids=repr)
def test_other_text_is_a_valid_name(name: str) -> None:
    tok = mint(SECRET, role="player", sub=name, player=name, ttl_seconds=60, now=NOW)
    who = verify(SECRET, tok, now=NOW)
    assert (who.sub, who.player) == (name, name)


def test_unknown_roles_and_empty_lifetimes_cannot_be_minted() -> None:
    with pytest.raises(ValueError, match="unknown role"):
        mint(SECRET, role="owner", sub="x", ttl_seconds=1, now=NOW)
    with pytest.raises(ValueError, match="at least one second"):
        mint(SECRET, role="ops", sub="x", ttl_seconds=0, now=NOW)


def test_ttl_parsing() -> None:
    assert [parse_ttl(t) for t in ("90", "90s", "30m", "12h", "7d")] == [
        90,
        90,
        1800,
        43200,
        604800,
    ]
    with pytest.raises(ValueError):
        parse_ttl("soon")


def who(role: str, **kw: object) -> Principal:
    return Principal(role=role, sub=role, exp=NOW, **kw)  # type: ignore[arg-type]


def test_dealers_run_only_their_tables() -> None:
    dealer = who("dealer", tables=("t1",))
    assert authorize(dealer, "open_round", "t1", None) is None
    assert authorize(dealer, "open_round", "t2", None)
    assert authorize(dealer, "place_bet", "t1", "anyone") is None
    assert authorize(dealer, "buy_chips", None, "p")


def test_players_bet_only_for_themselves() -> None:
    player = who("player", player="p-1")
    assert authorize(player, "place_bet", "t1", "p-1") is None
    assert authorize(player, "place_bet", "t1", "p-2")
    assert authorize(player, "no_more_bets", "t1", None)
    assert authorize(who("player"), "place_bet", "t1", "p-1")  # a player token without an account


def test_cashiers_run_the_cage_and_auditors_write_nothing() -> None:
    assert authorize(who("cashier"), "buy_chips", None, "p") is None
    assert authorize(who("cashier"), "place_bet", "t1", "p")
    for op in ("buy_chips", "cash_out", "place_bet", "open_round", "record_outcome"):
        assert authorize(who("auditor"), op, "t1", "p")
        assert authorize(who("ops"), op, "t1", "p")


def test_read_rights() -> None:
    assert may_read(who("auditor"), "log") and may_read(who("ops"), "cage")
    assert may_read(who("dealer", tables=("t1",)), "table:t1")
    assert not may_read(who("dealer", tables=("t1",)), "table:t2")
    assert may_read(who("player"), "table:t1") and not may_read(who("player"), "cage")
    assert may_read(who("cashier"), "cage") and not may_read(who("cashier"), "log")

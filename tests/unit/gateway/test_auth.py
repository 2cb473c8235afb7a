"""Tokens and who may do what (services/gateway/auth.py)."""

from __future__ import annotations

import pytest

from services.gateway.auth import AuthError, Principal, authorize, may_read, mint, parse_ttl, verify

SECRET = b"s3cret"
NOW = 1_800_000_000


def test_a_minted_token_verifies_with_its_claims() -> None:
    tok = mint(SECRET, role="dealer", sub="dana", ttl_seconds=60, now=NOW, tables=("roulette-1",))
    who = verify(SECRET, tok, now=NOW + 59)
    assert (who.role, who.sub, who.tables, who.exp) == ("dealer", "dana", ("roulette-1",), NOW + 60)


def test_expired_forged_and_malformed_tokens_are_refused() -> None:
    tok = mint(SECRET, role="player", sub="p", player="p", ttl_seconds=60, now=NOW)
    with pytest.raises(AuthError, match="expired"):
        verify(SECRET, tok, now=NOW + 60)
    with pytest.raises(AuthError, match="signature"):
        verify(b"other", tok, now=NOW)
    body, sig = tok.split(".")
    tampered = mint(SECRET, role="auditor", sub="p", ttl_seconds=60, now=NOW).split(".")[0]
    with pytest.raises(AuthError):
        verify(SECRET, f"{tampered}.{sig}", now=NOW)
    for junk in ("", "abc", "a.b.c", f"{body}."):
        with pytest.raises(AuthError):
            verify(SECRET, junk, now=NOW)


def test_unknown_roles_cannot_be_minted() -> None:
    with pytest.raises(ValueError, match="unknown role"):
        mint(SECRET, role="owner", sub="x", ttl_seconds=1, now=NOW)


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

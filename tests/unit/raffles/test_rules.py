"""What every raffle's rules share (services/raffles/rules.py): setup, online sales
(4620.22(b)(7)), the drawing's ranges and the kinds' own commands."""

from __future__ import annotations

import base64

import pytest

from events.base import to_data
from events.raffles import RaffleOpened, TicketSold
from services.aggregates import RuleError
from services.raffles.purchasers import PurchaserAccount
from services.raffles.rules import decide, draw_sizes
from services.raffles.state import (
    OnlinePurchase,
    RaffleState,
    RevealCard,
    SellTicket,
    SetupRaffle,
    TryKey,
)
from tests.unit.raffles.support import (
    DAY,
    NOW,
    Raffle,
    of_type,
    qoh_config,
    refused,
    standard_config,
)

ADULT = PurchaserAccount(
    legal_name="Jane Q. Public",
    date_of_birth="1990-04-01",
    account_number="A-1001",
    address="1 Elm St, Albany NY",
    email="jane@example.org",
    phone="518-555-0100",
)
SEALED = base64.b64encode(b"opaque ciphertext").decode()


def online(**over: object) -> OnlinePurchase:
    fields: dict[str, object] = {
        "purchaser": "pur-1",
        "account": ADULT,
        "excluded": False,
        "location_state": "NY",
        "location_sealed": SEALED,
    }
    fields.update(over)
    return OnlinePurchase(**fields)  # type: ignore[arg-type]


def test_setup_once_the_same_again_is_a_no_op_another_is_raffle_exists() -> None:
    r = Raffle("standard", standard_config())
    (opened,) = of_type(r.log, RaffleOpened)
    assert opened.raffle == "r-1" and opened.kind == "standard"
    assert decide(r.state, SetupRaffle(kind="standard", config=standard_config())) == []
    # The canonical configuration set up again (as a restart does) is the same raffle.
    assert decide(r.state, SetupRaffle(kind="standard", config=opened.config)) == []
    other = SetupRaffle(kind="standard", config=standard_config(price=600))
    assert refused(r, other) == "raffle_exists"


def test_commands_before_setup_are_unknown_raffle() -> None:
    with pytest.raises(RuleError) as e:
        decide(RaffleState(raffle="x"), SellTicket(count=1, amount=500, now_ms=NOW))
    assert e.value.code == "unknown_raffle"


def test_an_online_sale_records_only_the_purchaser_id_state_and_sealed_location() -> None:
    """4620.22(b)(7)(ii): record what was reported; no personal data in the event."""
    r = Raffle("standard", standard_config())
    (sold,) = r.sell(2, online=online())
    assert isinstance(sold, TicketSold)
    assert sold.channel == "online" and sold.purchaser == "pur-1"
    assert sold.location_state == "NY" and sold.location_sealed == SEALED
    text = repr(to_data(sold))
    for value in ("Jane", "1990-04-01", "A-1001", "Elm", "jane@", "555"):
        assert value not in text


@pytest.mark.parametrize(
    ("facts", "code"),
    [
        ({"account": None}, "unknown_purchaser"),
        ({"account": PurchaserAccount(**{**ADULT.to_json(), "phone": " "})}, "incomplete_account"),
        (
            {"account": PurchaserAccount(**{**ADULT.to_json(), "date_of_birth": "2008-11-19"})},
            "underage",
        ),
        ({"excluded": True}, "self_excluded"),
        ({"location_state": "NJ"}, "out_of_state"),
        ({"location_state": None}, "out_of_state"),
        ({"location_sealed": "not base64!"}, "bad_request"),
    ],
)
def test_online_sales_refused_by_4620_22_b_7(facts: dict[str, object], code: str) -> None:
    """(b)(7)(iii) the account, (vi)(c) under 18, (iv) self-exclusion, (ii) in the State."""
    r = Raffle("standard", standard_config())
    command = SellTicket(count=1, amount=500, now_ms=NOW, online=online(**facts))
    assert refused(r, command) == code


def test_the_18th_birthday_counts_on_the_new_york_calendar_day() -> None:
    """NOW is 2026-11-18 11:06 UTC, 06:06 in New York: born 2008-11-18 is 18 today."""
    r = Raffle("standard", standard_config())
    eighteen = PurchaserAccount(**{**ADULT.to_json(), "date_of_birth": "2008-11-18"})
    r.sell(1, online=online(account=eighteen))
    # At 02:00 UTC on the 18th it is still the 17th in New York: not yet 18.
    early = NOW - 9 * 3_600_000
    command = SellTicket(count=1, amount=500, now_ms=early, online=online(account=eighteen))
    assert refused(r, command) == "underage"


def test_each_kind_takes_only_its_own_commands() -> None:
    r = Raffle("standard", standard_config())
    assert refused(r, RevealCard(now_ms=NOW, position=1, card="QH")) == "wrong_raffle"
    assert refused(r, TryKey(now_ms=NOW, key=1, opened=True)) == "wrong_raffle"


def test_draw_sizes_follow_the_drum() -> None:
    r = Raffle("queen_of_hearts", qoh_config(triple_draws=True))
    assert draw_sizes(r.state) == ()
    for _ in range(4):
        r.sell(1)
    assert draw_sizes(r.state) == (4, 3, 2)
    s = Raffle("standard", standard_config(first_drawing_at=NOW + DAY))
    s.sell(5)
    assert draw_sizes(s.state) == (5, 4)

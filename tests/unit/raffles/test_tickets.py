"""What every raffle shares (services/raffles/tickets.py): settings, the ticket, its price
and serials, the 180-day window and the prize limits, 4620.22."""

from __future__ import annotations

import pytest

from services.aggregates import RuleError
from services.raffles import tickets
from services.raffles.rules import parse_config
from tests.unit.raffles.support import DAY, NOW, common, standard_config


def test_a_ticket_carries_the_face_of_4620_22_a_1() -> None:
    """4620.22(a)(1)(i)-(vi): organization and identification number, location and date of
    the drawings, price, prizes, and "Ticket holders need not be present to win"."""
    config = parse_config("standard", standard_config(bundles=[{"tickets": 5, "price": 2000}]))
    face = tickets.ticket_face("r-1", "standard", config)
    assert face["organization"] == "St. Mary's Parish Council"
    assert face["identification_number"] == "GC-ID-77"
    assert face["location"] == "Parish hall, 12 Main St"
    assert face["drawings"] == [NOW + 30 * DAY]
    assert face["price"] == 500 and face["book"] == {"tickets": 5, "price": 2000}
    assert face["prizes"] == ["Television (80000 cents)", "Cash (50000 cents)"]
    assert face["statement"] == "Ticket holders need not be present to win"
    assert len(tickets.face_hash(face)) == 64


def test_a_fifty_fifty_admission_ticket_carries_only_its_serial_on_two_parts() -> None:
    """4620.22(a)(2): both parts bear the same serial; the (a)(1) face does not apply."""
    config = parse_config("fifty_fifty", common())
    assert tickets.ticket_face("r-1", "fifty_fifty", config) == {
        "raffle": "r-1",
        "admission_style": True,
        "parts": 2,
    }


def test_a_uniform_price_or_the_book_price_printed_on_the_ticket() -> None:
    """4620.22(b)(10): count x price, or the book's price for exactly a book."""
    config = parse_config("standard", standard_config(bundles=[{"tickets": 5, "price": 2000}]))
    assert tickets.check_price(config, 1, 500) == 500
    assert tickets.check_price(config, 3, 1500) == 500
    assert tickets.check_price(config, 5, 2000) == 500
    for count, amount in ((1, 400), (3, 1200), (4, 1900), (5, 2499)):
        with pytest.raises(RuleError) as e:
            tickets.check_price(config, count, amount)
        assert e.value.code == "wrong_price"


def test_only_a_fifty_fifty_has_several_bundle_prices() -> None:
    """4620.22(b)(10) excepts the 50/50's admission-style tickets from the uniform price."""
    bundles = [{"tickets": 3, "price": 1000}, {"tickets": 10, "price": 2500}]
    assert len(parse_config("fifty_fifty", common(bundles=bundles))["bundles"]) == 2
    with pytest.raises(RuleError) as e:
        parse_config("standard", standard_config(bundles=bundles))
    assert e.value.code == "invalid_config"


def test_serials_are_consecutive_and_never_sold_twice() -> None:
    """4620.22(a)(1)(iii): consecutively printed serials; a serial is sold once."""
    config = parse_config("standard", standard_config(tickets_printed=100))
    assert tickets.sale_serials((), 0, config, 3, None) == (1, 2, 3)
    assert tickets.sale_serials(((1, 3),), 3, config, 2, None) == (4, 5)
    assert tickets.sale_serials(((1, 3),), 3, config, 2, 50) == (50, 51)
    with pytest.raises(RuleError) as e:
        tickets.sale_serials(((1, 3),), 3, config, 2, 2)
    assert e.value.code == "serial_taken"
    with pytest.raises(RuleError) as e:
        tickets.sale_serials((), 0, config, 2, 100)
    assert e.value.code == "no_such_serial"


def test_no_sale_more_than_180_days_before_the_drawing() -> None:
    """4620.22(b)(9)."""
    drawing = NOW + 180 * DAY
    tickets.check_sales_window(drawing, NOW)  # exactly 180 days: allowed
    with pytest.raises(RuleError) as e:
        tickets.check_sales_window(drawing + 1, NOW)
    assert e.value.code == "too_early"


def test_prize_limits_single_and_series() -> None:
    """4620.22(b)(1), GML 189(5)(b) and 189(6)(b): settings with documented defaults."""
    config = parse_config("standard", standard_config())
    assert config["max_single_prize"] == tickets.DEFAULT_MAX_SINGLE_PRIZE
    assert config["max_series_prizes"] == tickets.DEFAULT_MAX_SERIES_PRIZES
    tickets.check_prize_limits(config, tickets.DEFAULT_MAX_SINGLE_PRIZE, 0)
    with pytest.raises(RuleError) as e:
        tickets.check_prize_limits(config, tickets.DEFAULT_MAX_SINGLE_PRIZE + 1, 0)
    assert e.value.code == "prize_over_limit"
    with pytest.raises(RuleError) as e:
        tickets.check_prize_limits(config, 100, tickets.DEFAULT_MAX_SERIES_PRIZES - 99)
    assert e.value.code == "prize_over_limit"


def test_pick_draws_without_replacement_in_order() -> None:
    assert tickets.pick([10, 20, 30, 40], [3, 0, 1]) == [40, 10, 30]
    with pytest.raises(RuleError):
        tickets.pick([10, 20], [2])


@pytest.mark.parametrize(
    ("ms", "day"),
    [
        (0, (1970, 1, 1)),
        (951_782_400_000, (2000, 2, 29)),
        (1_795_000_000_000, (2026, 11, 18)),
        (4_107_542_399_000, (2100, 2, 28)),
        (-1, (1969, 12, 31)),
    ],
)
def test_calendar_day_without_the_clock(ms: int, day: tuple[int, int, int]) -> None:
    d = tickets.calendar_day(ms)
    assert (d.year, d.month, d.day) == day


@pytest.mark.parametrize(
    "bad",
    [
        {"price": 0},
        {"price": "5"},
        {"colour": "red"},
        {"bundles": [{"tickets": 1, "price": 100}]},
        {"bundles": [{"tickets": 3, "price": 1600}]},
        {"name": ""},
        {"first_drawing_at": "tomorrow"},
    ],
)
def test_bad_settings_are_invalid_config(bad: dict[str, object]) -> None:
    with pytest.raises(RuleError) as e:
        parse_config("standard", standard_config(**bad))
    assert e.value.code == "invalid_config"


def test_an_unknown_kind_is_invalid_config() -> None:
    with pytest.raises(RuleError) as e:
        parse_config("bingo", common())
    assert e.value.code == "invalid_config"

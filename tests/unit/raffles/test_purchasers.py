"""Online raffle sales controls, 4620.22(b)(7): the purchaser account of (iii), the minimum
age of (vi)(c), the self-exclusion list of (iv) and the in-State location of (ii)
(``services/raffles/purchasers.py``; readings in docs/PERSONAL_DATA.md)."""

from __future__ import annotations

import dataclasses
import random
from datetime import date, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.aggregates import RuleError
from services.raffles.purchasers import (
    ACCOUNT_FIELDS,
    LICENSE_STATE,
    MIN_PURCHASER_AGE,
    PurchaserAccount,
    age_on,
    check_online_purchase,
    exclusion_fingerprint,
    normalize_name,
    parse_account,
    parse_date,
    parse_exclusion_csv,
)

TODAY = date(2026, 11, 29)
SECRET = b"test fingerprint secret"

RAW: dict[str, str] = {
    "legal_name": "Margaret Q. Holloway",
    "date_of_birth": "1971-04-03",
    "account_number": "ACCT-000417",
    "address": "12 Elm Street, Albany NY 12207",
    "email": "m.holloway@example.org",
    "phone": "+1 518 555 0142",
}


def account(**changes: str) -> PurchaserAccount:
    return parse_account({**RAW, **changes})


def born_years_ago(years: int, today: date = TODAY) -> str:
    return today.replace(year=today.year - years).isoformat()


def code_of(fn: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(RuleError) as e:
        fn(*args, **kwargs)
    return e.value.code


def check(acct: PurchaserAccount, **overrides: Any) -> None:
    kwargs: dict[str, Any] = {"today": TODAY, "location_state": "NY", "excluded": False}
    kwargs.update(overrides)
    check_online_purchase(acct, **kwargs)


# ---------------------------------------------------------------------------------------------
# The module is pure
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# The account, 4620.22(b)(7)(iii)
# ---------------------------------------------------------------------------------------------


def test_a_complete_account_parses_with_every_field_trimmed() -> None:
    acct = parse_account({k: f"  {v}\t" for k, v in RAW.items()})
    assert dataclasses.asdict(acct) == RAW
    assert acct.to_json() == RAW
    assert tuple(RAW) == ACCOUNT_FIELDS


@pytest.mark.parametrize("field", ACCOUNT_FIELDS)
def test_each_missing_field_is_an_incomplete_account(field: str) -> None:
    raw = {k: v for k, v in RAW.items() if k != field}
    with pytest.raises(RuleError) as e:
        parse_account(raw)
    assert e.value.code == "incomplete_account"
    assert field in e.value.message


@pytest.mark.parametrize("field", ACCOUNT_FIELDS)
@pytest.mark.parametrize("empty", ["", "   ", "\n\t"])
def test_each_empty_field_is_an_incomplete_account(field: str, empty: str) -> None:
    assert code_of(parse_account, {**RAW, field: empty}) == "incomplete_account"


def test_a_null_field_is_an_incomplete_account() -> None:
    assert code_of(parse_account, {**RAW, "phone": None}) == "incomplete_account"


def test_every_missing_field_is_named_at_once() -> None:
    with pytest.raises(RuleError) as e:
        parse_account({"legal_name": "A B"})
    assert e.value.code == "incomplete_account"
    for field in ACCOUNT_FIELDS[1:]:
        assert field in e.value.message


@pytest.mark.parametrize(
    "raw",
    [
        ["legal_name", "x"],
        "an account",
        {**RAW, "ssn": "123-45-6789"},
        {**RAW, "phone": 5185550142},
        {**RAW, "legal_name": ["Margaret"]},
    ],
    ids=["list", "string", "unknown_field", "number", "list_value"],
)
def test_a_malformed_account_is_invalid(raw: Any) -> None:
    assert code_of(parse_account, raw) == "invalid_account"


@pytest.mark.parametrize(
    "dob",
    ["1971-4-3", "03/04/1971", "1971-02-30", "1971-13-01", "1971-00-10", "0000-01-01",
     "2025-02-29", "1900-02-29", "19710403", "1971-04-03T00:00", "١٩٧١-٠٤-٠٣"],
)  # fmt: skip
def test_a_date_of_birth_that_is_not_a_calendar_day_is_invalid(dob: str) -> None:
    assert code_of(parse_account, {**RAW, "date_of_birth": dob}) == "invalid_account"


@pytest.mark.parametrize("dob", ["2000-02-29", "2024-02-29", "1999-12-31", "0001-01-01"])
def test_real_calendar_days_parse(dob: str) -> None:
    day = parse_date(dob)
    assert (day.year, day.month, day.day) == tuple(int(p) for p in dob.split("-"))


@pytest.mark.parametrize(
    "email", ["no-at-sign.org", "@example.org", "a@", "a@example", "a b@example.org", "a@b@c.org"]
)
def test_a_malformed_email_is_invalid(email: str) -> None:
    assert code_of(parse_account, {**RAW, "email": email}) == "invalid_account"


def test_no_error_message_echoes_personal_data() -> None:
    bad = {**RAW, "date_of_birth": "31/12/1970", "email": "holloway-at-example"}
    for raw in (
        {**RAW, "date_of_birth": bad["date_of_birth"]},
        {**RAW, "email": bad["email"]},
    ):
        with pytest.raises(RuleError) as e:
            parse_account(raw)
        for value in bad.values():
            assert value not in e.value.message
            assert value not in repr(e.value)


# ---------------------------------------------------------------------------------------------
# Personal data never reaches a log
# ---------------------------------------------------------------------------------------------


def test_repr_str_and_format_redact_every_field() -> None:
    acct = account()
    for text in (repr(acct), str(acct), f"{acct}", f"{acct!r}", repr([acct]), repr({"a": acct})):
        for value in RAW.values():
            assert value not in text
        for part in ("Margaret", "Holloway", "1971", "0417", "Elm", "example.org", "0142"):
            assert part not in text
    assert repr(acct).count("<redacted>") == len(ACCOUNT_FIELDS)


def test_the_account_is_frozen() -> None:
    acct = account()
    with pytest.raises(dataclasses.FrozenInstanceError):
        acct.legal_name = "Someone Else"  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# Age, 4620.22(b)(7)(vi)(c)
# ---------------------------------------------------------------------------------------------


def test_minimum_age_is_18() -> None:
    assert MIN_PURCHASER_AGE == 18


def test_eighteen_today_may_buy() -> None:
    check(account(date_of_birth=born_years_ago(18)))


def test_the_day_before_the_18th_birthday_is_underage() -> None:
    dob = born_years_ago(18, TODAY + timedelta(days=1))
    assert age_on(parse_date(dob), TODAY) == 17
    with pytest.raises(RuleError) as e:
        check(account(date_of_birth=dob))
    assert e.value.code == "underage"
    assert dob not in e.value.message


def test_a_newborn_and_a_17_year_old_are_underage() -> None:
    for dob in (TODAY.isoformat(), born_years_ago(17)):
        assert code_of(check, account(date_of_birth=dob)) == "underage"


def test_a_date_of_birth_after_today_is_invalid() -> None:
    tomorrow = (TODAY + timedelta(days=1)).isoformat()
    assert code_of(check, account(date_of_birth=tomorrow)) == "invalid_account"


def test_born_on_29_february_turns_18_on_1_march_of_a_common_year() -> None:
    acct = account(date_of_birth="2008-02-29")
    born = parse_date(acct.date_of_birth)
    assert age_on(born, date(2026, 2, 28)) == 17
    assert code_of(check, acct, today=date(2026, 2, 28)) == "underage"
    assert age_on(born, date(2026, 3, 1)) == 18
    check(acct, today=date(2026, 3, 1))


def test_born_on_29_february_turns_a_year_older_on_29_february_of_a_leap_year() -> None:
    born = parse_date("2004-02-29")
    assert age_on(born, date(2024, 2, 28)) == 19
    assert age_on(born, date(2024, 2, 29)) == 20


@settings(derandomize=True, max_examples=300)
@given(
    dob=st.dates(min_value=date(1900, 1, 1), max_value=date(2030, 12, 31)),
    today=st.dates(min_value=date(1900, 1, 1), max_value=date(2030, 12, 31)),
)
def test_age_counts_completed_years(dob: date, today: date) -> None:
    """Property: age_on is the number of birthdays (29 February counted on 1 March in a
    common year) between the birth and today, inclusive of today."""
    if dob > today:
        return
    birthdays = 0
    for year in range(dob.year + 1, today.year + 1):
        try:
            birthday = dob.replace(year=year)
        except ValueError:  # 29 February in a common year
            birthday = date(year, 3, 1)
        birthdays += birthday <= today
    assert age_on(dob, today) == birthdays


# ---------------------------------------------------------------------------------------------
# Self-exclusion, 4620.22(b)(7)(iv)
# ---------------------------------------------------------------------------------------------


def test_a_self_excluded_purchaser_is_refused() -> None:
    assert code_of(check, account(), excluded=True) == "self_excluded"


def test_age_is_checked_before_self_exclusion_and_location() -> None:
    minor = account(date_of_birth=born_years_ago(16))
    assert code_of(check, minor, excluded=True, location_state="NJ") == "underage"
    assert code_of(check, account(), excluded=True, location_state="NJ") == "self_excluded"


@pytest.mark.parametrize(
    "variant",
    ["Margaret Q. Holloway", "margaret q. holloway", "MARGARET Q. HOLLOWAY",
     "  Margaret   Q.\tHolloway ", "Margaret\u00a0Q. Holloway", "Ｍargaret Q. Holloway"],
)  # fmt: skip
def test_the_exclusion_fingerprint_ignores_case_and_spacing(variant: str) -> None:
    expected = exclusion_fingerprint(SECRET, "Margaret Q. Holloway", "1971-04-03")
    assert exclusion_fingerprint(SECRET, variant, "1971-04-03") == expected
    assert exclusion_fingerprint(SECRET, variant, " 1971-04-03 ") == expected


def test_german_sharp_s_casefolds() -> None:
    assert normalize_name("  Strauß ") == normalize_name("STRAUSS") == "strauss"


@pytest.mark.parametrize(
    ("name", "dob"),
    [("Margaret Holloway", "1971-04-03"), ("Margaret Q Holloway", "1971-04-03"),
     ("Margaret Q. Holloway", "1971-04-04"), ("Margaret Q. Hollowa", "1971-04-03")],
)  # fmt: skip
def test_a_different_name_or_birth_date_is_a_different_fingerprint(name: str, dob: str) -> None:
    assert exclusion_fingerprint(SECRET, name, dob) != exclusion_fingerprint(
        SECRET, "Margaret Q. Holloway", "1971-04-03"
    )


def test_the_fingerprint_depends_on_the_secret_and_hides_the_name() -> None:
    a = exclusion_fingerprint(SECRET, RAW["legal_name"], RAW["date_of_birth"])
    b = exclusion_fingerprint(b"another secret", RAW["legal_name"], RAW["date_of_birth"])
    assert a != b
    assert len(a) == 64 and int(a, 16) >= 0
    assert "holloway" not in a.lower()


def test_name_and_date_cannot_be_shifted_into_each_other() -> None:
    """The separator keeps ("a b", date) apart from any other split of the same text."""
    rng = random.Random(4620)
    seen: dict[str, tuple[str, str]] = {}
    for _ in range(200):
        name = " ".join(rng.choice(["ann", "bo", "1971", "-", "04"]) for _ in range(3))
        dob = f"{rng.randint(1900, 2008)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        fp = exclusion_fingerprint(SECRET, name, dob)
        key = (normalize_name(name), dob)
        assert seen.setdefault(fp, key) == key


@pytest.mark.parametrize(
    ("name", "dob", "code"),
    [("", "1971-04-03", "incomplete_account"), ("   ", "1971-04-03", "incomplete_account"),
     ("A B", "", "invalid_account"), ("A B", "1971-02-30", "invalid_account")],
)  # fmt: skip
def test_a_bad_exclusion_entry_is_refused(name: str, dob: str, code: str) -> None:
    assert code_of(exclusion_fingerprint, SECRET, name, dob) == code


def test_an_exclusion_file_parses_with_its_header_and_skips_blank_lines() -> None:
    text = "legal_name,date_of_birth,note\nMargaret Q. Holloway,1971-04-03,x\n\n" + (
        '"Doe, Jane",1980-01-31,\n'
    )
    assert parse_exclusion_csv(text) == [
        ("Margaret Q. Holloway", "1971-04-03"),
        ("Doe, Jane", "1980-01-31"),
    ]


@pytest.mark.parametrize(
    "text",
    ["name,dob\nA B,1971-04-03\n", "legal_name,date_of_birth\nA B,1971-04-31\n",
     "legal_name,date_of_birth\nA B,1971-04-03\n,1980-01-01\n",
     "legal_name,date_of_birth\nA B\n", ""],
    ids=["wrong_header", "bad_date", "missing_name", "short_row", "empty_file"],
)  # fmt: skip
def test_a_bad_exclusion_file_is_refused_whole(text: str) -> None:
    with pytest.raises(RuleError) as e:
        parse_exclusion_csv(text)
    assert e.value.code == "invalid_account"
    assert "A B" not in e.value.message


def test_a_bad_exclusion_row_is_named_by_line() -> None:
    with pytest.raises(RuleError) as e:
        parse_exclusion_csv("legal_name,date_of_birth\nA B,1971-04-03\nC D,1971-02-30\n")
    assert "line 3" in e.value.message


# ---------------------------------------------------------------------------------------------
# Location, 4620.22(b)(7)(ii)
# ---------------------------------------------------------------------------------------------


def test_the_license_state_is_new_york() -> None:
    assert LICENSE_STATE == "NY"


@pytest.mark.parametrize("state", ["NY", "ny", " NY ", "US-NY", "us-ny"])
def test_a_purchaser_in_new_york_may_buy(state: str) -> None:
    check(account(), location_state=state)


@pytest.mark.parametrize("state", ["NJ", "CT", "PA", "US-NJ", "New Jersey", "N Y", "NYC", "CA"])
def test_a_purchaser_outside_new_york_is_refused(state: str) -> None:
    assert code_of(check, account(), location_state=state) == "out_of_state"


@pytest.mark.parametrize("state", [None, "", "   "])
def test_an_unknown_location_is_refused(state: str | None) -> None:
    with pytest.raises(RuleError) as e:
        check(account(), location_state=state)
    assert e.value.code == "out_of_state"
    assert "unknown" in e.value.message


# ---------------------------------------------------------------------------------------------
# An account built directly (not through parse_account)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ACCOUNT_FIELDS)
def test_a_directly_built_account_with_an_empty_field_is_incomplete(field: str) -> None:
    acct = PurchaserAccount(**{**RAW, field: " "})
    assert code_of(check, acct) == "incomplete_account"


def test_a_directly_built_account_with_a_bad_date_is_invalid() -> None:
    acct = PurchaserAccount(**{**RAW, "date_of_birth": "April 3 1971"})
    assert code_of(check, acct) == "invalid_account"


def test_a_complete_adult_in_state_unexcluded_purchaser_passes() -> None:
    assert (
        check_online_purchase(account(), today=TODAY, location_state="NY", excluded=False) is None
    )

"""The night file's ``[reports]``: who subscribes the forms and the use of the proceeds
(the GC-7's Part E, GML 195-f(1)); a misspelt key or a value not text is refused."""

from __future__ import annotations

import pytest

from services.night import NightError, parse_night
from tests.conftest import night_doc


def test_the_reports_section_is_optional_and_read_as_given() -> None:
    assert (
        parse_night(night_doc("o")).use_of_proceeds,
        parse_night(night_doc("o")).member_in_charge,
    ) == ("", "")
    night = parse_night(
        night_doc(
            "o", reports={"use_of_proceeds": "The food pantry", "member_in_charge": "Ann Lee"}
        )
    )
    assert (night.use_of_proceeds, night.member_in_charge) == ("The food pantry", "Ann Lee")


@pytest.mark.parametrize(
    "reports", [{"use_of_proceeds": 5}, {"member_in_charge": ["a"]}, {"proceeds": "x"}]
)
def test_a_bad_reports_section_is_refused(reports: dict[str, object]) -> None:
    with pytest.raises(NightError):
        parse_night(night_doc("o", reports=reports))

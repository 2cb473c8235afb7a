"""The cage's rules (services/cage/rules.py): chips in and out, and how events move balances."""

from __future__ import annotations

import pytest

from events.cage import ChipsIssued, ChipsRedeemed
from events.money import balance_moves
from events.tables import BetCancelled, BetPlaced, BetSettlement, Settled
from services.aggregates import RuleError
from services.cage.rules import BuyChips, CageState, CashOut, decide, evolve


def test_buying_and_cashing_out_chips() -> None:
    state = CageState(max_transaction=1000)
    [issued] = decide(state, BuyChips(player="p", amount=1000))
    assert issued == ChipsIssued(player="p", amount=1000)
    state = evolve(state, issued)
    [redeemed] = decide(state, CashOut(player="p", amount=400))
    state = evolve(state, redeemed)
    assert (state.version, state.issued, state.redeemed) == (2, 1000, 400)


def test_the_cage_transaction_limit() -> None:
    with pytest.raises(RuleError) as info:
        decide(CageState(max_transaction=1000), BuyChips(player="p", amount=1001))
    assert info.value.code == "over_limit"


def test_balance_moves_of_every_money_event() -> None:
    settled = Settled(
        round=1,
        outcome={"pocket": "1"},
        settlements=(
            BetSettlement(bet_id="a", player="p", amount=10, result="won", paid=360),
            BetSettlement(bet_id="b", player="q", amount=10, result="lost", paid=0),
            BetSettlement(bet_id="c", player="p", amount=10, result="won", paid=20),
        ),
        wagered=30,
        paid=380,
    )
    events = [
        ChipsIssued(player="p", amount=100),
        BetPlaced(round=1, bet_id="a", player="p", bet={"kind": "red"}, amount=10),
        BetCancelled(round=1, bet_id="a", player="p", amount=10),
        ChipsRedeemed(player="p", amount=50),
        settled,
    ]
    # A bet and a cash-out are guarded debits; a settlement pays each player once, summed.
    assert balance_moves(events) == [("p", 100), ("p", -10), ("p", 10), ("p", -50), ("p", 380)]

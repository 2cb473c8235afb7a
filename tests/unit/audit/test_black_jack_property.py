"""Black Jack at RNG tables of one deck (a box emptied mid-round), under each tie option,
with random stakes, insurance, doubles, splits and voids: every part the real rules
settle is what the audit recomputes, and every card opens its commitment. Seeded."""

from __future__ import annotations

import random

import pytest

from services.audit.commitments import CommitmentChecker
from services.audit.settlements import SettlementChecker
from services.games.black_jack import Deal, Insure, Peek
from services.games.black_jack_state import round_stage
from services.tables.rules import OpenRound, PlaceBet, VoidRound
from tests.unit.audit.support import Log, Table, act_at_random, run

STAKES = (2, 10, 100, 500)
"""The smallest even stake, and up to the regulatory maximum (4620.5(f)(2))."""


@pytest.mark.parametrize("tie_option", [1, 2, 3])
def test_every_part_of_random_play_is_what_the_audit_recomputes(tie_option: int) -> None:
    rnd = random.Random(tie_option)
    log = Log()
    bj = Table(
        log, "black_jack", "rng", table="bj", seed=tie_option, tie_option=tie_option, decks=1
    )
    for _ in range(15):
        bj.do(OpenRound())
        for space in rnd.sample(range(1, 8), rnd.randint(1, 5)):
            bet = {"space": space}
            bj.do(PlaceBet(player=f"p-{space}", bet=bet, amount=rnd.choice(STAKES)))
        bj.do(Deal())
        while not bj.state.play.ended:
            play = bj.state.play
            if round_stage(play) == "insurance":
                for h in play.hands:
                    if rnd.random() < 0.5:
                        bj.do(Insure(hand=h.hand, amount=h.wager // 2))
                bj.do(Peek())
                continue
            if rnd.random() < 0.03:
                bj.do(VoidRound(reason="a card turned over"))
                break
            act_at_random(bj, rnd)
    settlements = run(SettlementChecker(), log.envelopes)
    assert settlements.discrepancies == []
    parts = [e for e in log.envelopes if e.type == "PartSettled"]
    assert settlements.checked["bets"] == sum(len(e.data["settlements"]) for e in parts) > 0
    commitments = run(CommitmentChecker(), log.envelopes)
    assert commitments.discrepancies == [] and commitments.checked["shuffles committed"] > 1

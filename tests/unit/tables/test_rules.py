"""The table's round lifecycle (services/tables/rules.py), pure: decide and evolve."""

from __future__ import annotations

import pytest

from events.tables import (
    BetCancelled,
    BetPlaced,
    NoMoreBets,
    OutcomeRecorded,
    RoundOpened,
    RoundVoided,
    Settled,
    TableClosed,
    TableOpened,
)
from services.aggregates import RuleError
from services.games.roulette import AMERICAN_WHEEL_ORDER
from services.games.single_outcome import DrawOutcome, RecordOutcome
from services.tables.rules import (
    SHORTCUT_BLOCK,
    CallNoMoreBets,
    CancelBet,
    CloseTable,
    OpenRound,
    OpenTable,
    PlaceBet,
    TableState,
    VoidRound,
    bet_on_layout,
    decide,
    evolve,
    fold,
)

STRAIGHT_17 = {"kind": "straight", "numbers": ["17"]}


def opened(mode: str = "dealer", **options: object) -> TableState:
    state = TableState(table="roulette-1")
    return fold(state, decide(state, OpenTable(game="roulette", config=options, outcome_mode=mode)))  # type: ignore[arg-type]


def run(state: TableState, *commands: object) -> TableState:
    for command in commands:
        state = fold(state, decide(state, command))  # type: ignore[arg-type]
    return state


def refused(state: TableState, command: object) -> str:
    with pytest.raises(RuleError) as info:
        decide(state, command)  # type: ignore[arg-type]
    return info.value.code


def test_open_table_records_the_validated_configuration() -> None:
    state = TableState(table="roulette-1")
    [event] = decide(state, OpenTable(game="roulette", config={}, outcome_mode="rng"))
    assert isinstance(event, TableOpened)
    assert event.config["max_inside"] == 200 and event.config["max_outside"] == 500
    assert event.outcome_mode == "rng"


def test_reopening_with_the_same_configuration_changes_nothing() -> None:
    state = opened()
    assert decide(state, OpenTable(game="roulette", config={}, outcome_mode="dealer")) == []


def test_reopening_with_another_configuration_is_a_conflict() -> None:
    state = opened()
    command = OpenTable(game="roulette", config={"max_inside": 100}, outcome_mode="dealer")
    assert refused(state, command) == "conflict"


def test_a_table_not_yet_opened_refuses_commands() -> None:
    assert refused(TableState(table="x"), OpenRound()) == "unknown_table"


def test_bets_need_an_open_round() -> None:
    assert refused(opened(), PlaceBet(player="p", bet=STRAIGHT_17, amount=100)) == "round_not_open"


def test_a_bet_in_an_open_round_is_placed_with_a_unique_id() -> None:
    state = run(opened(), OpenRound())
    [event] = decide(state, PlaceBet(player="p-1", bet=STRAIGHT_17, amount=100))
    assert isinstance(event, BetPlaced)
    assert (event.round, event.player, event.amount) == (1, "p-1", 100)
    state = evolve(state, event)
    [second] = decide(state, PlaceBet(player="p-1", bet=STRAIGHT_17, amount=100))
    assert isinstance(second, BetPlaced) and second.bet_id != event.bet_id


def test_no_bets_after_no_more_bets_4620_4_c_1() -> None:
    state = run(opened(), OpenRound(), CallNoMoreBets())
    assert refused(state, PlaceBet(player="p", bet=STRAIGHT_17, amount=100)) == "bets_closed"


def test_the_game_checks_the_bet() -> None:
    state = run(opened(), OpenRound())
    assert (
        refused(
            state, PlaceBet(player="p", bet={"kind": "split", "numbers": ["1", "3"]}, amount=100)
        )
        == "invalid_bet"
    )
    assert refused(state, PlaceBet(player="p", bet=STRAIGHT_17, amount=201)) == "over_limit"


def test_cancel_before_no_more_bets_returns_the_bet() -> None:
    state = run(opened(), OpenRound(), PlaceBet(player="p-1", bet=STRAIGHT_17, amount=100))
    bet_id = next(iter(state.bets))
    [event] = decide(state, CancelBet(bet_id=bet_id))
    assert isinstance(event, BetCancelled) and event.amount == 100
    assert evolve(state, event).bets == {}


def test_cancel_after_no_more_bets_is_refused() -> None:
    state = run(opened(), OpenRound(), PlaceBet(player="p-1", bet=STRAIGHT_17, amount=100))
    bet_id = next(iter(state.bets))
    state = run(state, CallNoMoreBets())
    assert refused(state, CancelBet(bet_id=bet_id)) == "bets_closed"


def test_a_player_cancels_only_their_own_bet() -> None:
    state = run(opened(), OpenRound(), PlaceBet(player="p-1", bet=STRAIGHT_17, amount=100))
    bet_id = next(iter(state.bets))
    assert refused(state, CancelBet(bet_id=bet_id, player="p-2")) == "unknown_bet"
    assert refused(state, CancelBet(bet_id="nope")) == "unknown_bet"


def a_round_of(bets: int, *, cancel_every: int) -> tuple[TableState, list[str], set[str]]:
    """A second round of ``bets`` bets (of three players), every ``cancel_every``-th taken
    back at once (so the seqs have gaps): the state, every bet id, the ids taken back."""
    state = run(opened(), OpenRound(), CallNoMoreBets())
    state = run(state, RecordOutcome(outcome={"pocket": "17"}), OpenRound())
    ids: list[str] = []
    cancelled: set[str] = set()
    for i in range(bets):
        [placed] = decide(state, PlaceBet(player=f"p-{i % 3}", bet=STRAIGHT_17, amount=100))
        state = evolve(state, placed)
        ids.append(placed.bet_id)  # type: ignore[attr-defined]
        if i % cancel_every == 0:
            state = run(state, CancelBet(bet_id=ids[-1]))
            cancelled.add(ids[-1])
    return state, ids, cancelled


def test_every_bet_of_a_long_round_is_found_by_its_id_and_only_those() -> None:
    state, ids, cancelled = a_round_of(1000, cancel_every=7)
    for bet_id in ids:
        found = bet_on_layout(state, bet_id)
        if bet_id in cancelled:
            assert found is None
        else:
            assert found is not None and found.bet_id == bet_id
    table, round, _ = ids[0].split(".")
    last = int(ids[-1].split(".")[-1])
    cancel_seqs = [int(i.split(".")[-1]) + 1 for i in sorted(cancelled)]
    not_bets = [
        *(f"{table}.{round}.{seq}" for seq in cancel_seqs),  # a BetCancelled's seq
        f"{table}.{round}.{last + 1}",  # not yet placed
        f"{table}.{round}.0",
        f"{table}.1.{last}",  # the round before
        f"roulette-2.{round}.{last}",  # another table
        f"{table}.{round}.{last}.",
        f"{table}.{round}.-{last}",
        f"{table}.{round}." + "\N{SUPERSCRIPT TWO}",  # a digit to isdigit(), not to int()
        f"{table}.{round}.{'9' * 4000}",
        f"{table}.{round}.",
        "nope",
    ]
    for bet_id in not_bets:
        assert bet_on_layout(state, bet_id) is None, bet_id
        assert refused(state, CancelBet(bet_id=bet_id)) == "unknown_bet"
    # The first bet still up, deep under the others, is cancelled as any other.
    first = next(i for i in ids if i not in cancelled)
    [event] = decide(state, CancelBet(bet_id=first, player="p-1"))
    assert isinstance(event, BetCancelled) and first not in evolve(state, event).bets


def test_finding_a_bet_walks_one_block_at_most_and_hops_the_rest() -> None:
    """Each bet's shortcut is the newest bet of an earlier block of seqs, and every bet
    between the two is of the bet's own block: a search walks at most a block bet by bet
    and hops each block after it once."""
    state, _ids, _cancelled = a_round_of(3000, cancel_every=5)
    node = state.placed
    hops = 0
    while node is not None:
        block = node.seq // SHORTCUT_BLOCK
        between = node.previous
        while between is not None and between is not node.shortcut:
            assert between.seq // SHORTCUT_BLOCK == block
            between = between.previous
        assert node.shortcut is between
        assert node.shortcut is None or node.shortcut.seq // SHORTCUT_BLOCK < block
        node = node.shortcut
        hops += 1
    assert hops <= state.version // SHORTCUT_BLOCK + 1


def test_the_outcome_needs_no_more_bets_first() -> None:
    state = run(opened(), OpenRound())
    assert refused(state, RecordOutcome(outcome={"pocket": "17"})) == "bets_open"
    assert refused(opened(), RecordOutcome(outcome={"pocket": "17"})) == "round_not_open"


def test_recording_the_outcome_settles_every_bet() -> None:
    state = run(
        opened(),
        OpenRound(),
        PlaceBet(player="p-1", bet=STRAIGHT_17, amount=100),
        PlaceBet(player="p-2", bet={"kind": "red"}, amount=500),
        CallNoMoreBets(),
    )
    recorded, settled = decide(state, RecordOutcome(outcome={"pocket": "17"}))
    assert isinstance(recorded, OutcomeRecorded) and recorded.source == "dealer"
    assert isinstance(settled, Settled)
    assert [(s.player, s.result, s.paid) for s in settled.settlements] == [
        ("p-1", "won", 3600),
        ("p-2", "lost", 0),
    ]
    assert (settled.wagered, settled.paid) == (600, 3600)
    after = fold(state, [recorded, settled])
    assert after.phase == "idle" and after.bets == {} and after.play.last_outcome == "17"


def test_spun_from_must_be_the_previous_winning_pocket_4620_4_c_3() -> None:
    state = run(opened(), OpenRound(), CallNoMoreBets(), RecordOutcome(outcome={"pocket": "5"}))
    state = run(state, OpenRound(), CallNoMoreBets())
    assert (
        refused(state, RecordOutcome(outcome={"pocket": "9", "spun_from": "6"}))
        == "invalid_outcome"
    )
    assert refused(state, RecordOutcome(outcome={"pocket": "9"})) == "invalid_outcome"
    state = run(state, RecordOutcome(outcome={"pocket": "9", "spun_from": "5"}))
    assert state.play.recent == ("9", "5")


def test_rng_tables_draw_and_dealer_tables_record() -> None:
    rng = run(opened("rng"), OpenRound(), CallNoMoreBets())
    assert refused(rng, RecordOutcome(outcome={"pocket": "1"})) == "wrong_mode"
    recorded, _settled = decide(rng, DrawOutcome(draw=(0,)))
    assert isinstance(recorded, OutcomeRecorded) and recorded.source == "rng"
    assert recorded.outcome["pocket"] == "0"  # index 0 of the wheel order
    dealer = run(opened(), OpenRound(), CallNoMoreBets())
    assert refused(dealer, DrawOutcome(draw=(0,))) == "wrong_mode"


def test_one_round_at_a_time() -> None:
    state = run(opened(), OpenRound())
    assert refused(state, OpenRound()) == "round_in_progress"
    assert refused(state, CloseTable(reason="end")) == "round_in_progress"


def test_a_closed_table_refuses_everything() -> None:
    state = run(opened(), CloseTable(reason="end of the night"))
    assert state.closed
    for command in (OpenRound(), PlaceBet(player="p", bet=STRAIGHT_17, amount=1), CallNoMoreBets()):
        assert refused(state, command) == "table_closed"


def test_evolve_counts_the_version() -> None:
    state = run(opened(), OpenRound(), CallNoMoreBets())
    assert state.version == 3
    assert isinstance(decide(run(opened(), OpenRound()), CallNoMoreBets())[0], NoMoreBets)
    assert isinstance(decide(opened(), OpenRound())[0], RoundOpened)
    assert isinstance(decide(opened(), CloseTable(reason="x"))[0], TableClosed)


def test_every_drawn_index_is_its_pocket_so_a_uniform_index_is_a_uniform_pocket() -> None:
    rng = run(opened("rng"), OpenRound(), CallNoMoreBets())
    drawn = [decide(rng, DrawOutcome(draw=(i,)))[0] for i in range(len(AMERICAN_WHEEL_ORDER))]
    pockets = [e.outcome["pocket"] for e in drawn if isinstance(e, OutcomeRecorded)]
    assert pockets == list(AMERICAN_WHEEL_ORDER)
    assert len(set(pockets)) == 38


@pytest.mark.parametrize("closed", [False, True])
def test_a_voided_round_returns_every_bet_and_ends(closed: bool) -> None:
    """docs/RULES.md "Voiding a round": every bet back, in the order placed, the round over."""
    state = run(
        opened(),
        OpenRound(),
        PlaceBet(player="p-1", bet=STRAIGHT_17, amount=100),
        PlaceBet(player="p-2", bet={"kind": "red"}, amount=300),
    )
    if closed:
        state = run(state, CallNoMoreBets())
    voided, settled = decide(state, VoidRound(reason="the ball left the wheel"))
    assert voided == RoundVoided(round=1, reason="the ball left the wheel")
    assert isinstance(settled, Settled) and settled.outcome == {}
    assert [(s.player, s.result, s.paid) for s in settled.settlements] == [
        ("p-1", "returned", 100),
        ("p-2", "returned", 300),
    ]
    assert settled.wagered == settled.paid == 400
    after = fold(state, [voided, settled])
    assert after.phase == "idle" and after.bets == {}
    assert refused(after, VoidRound(reason="again")) == "round_not_open"

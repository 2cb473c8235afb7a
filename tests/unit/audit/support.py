"""Builders for the audit's checker tests: envelopes sealed as the store seals them
(``events.envelope.seal``), one causation per command, from events the real pure rules
decide (the table actor's own adapter with the server's Chance on a seeded generator, the
raffles' and the deals' ``decide``/``evolve``), and tampered copies of them."""

from __future__ import annotations

import dataclasses
import functools
import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from events.base import Event, from_data
from events.cage import ChipsIssued
from events.codec import decode, encode
from events.envelope import GENESIS_HASH, Envelope, event_id, seal
from events.money import MONEY_EVENTS, data_moves
from services.aggregates import RuleError
from services.audit.base import Checker, Discrepancy
from services.audit.engine import AuditReport
from services.chance import ServerChance, seal_key
from services.games.single_outcome import DrawOutcome, RecordOutcome
from services.tables.actor import TableRules
from services.tables.rules import (
    CallNoMoreBets,
    OpenRound,
    OpenTable,
    PlaceBet,
    TableState,
)

SECRET = b"audit test secret, 32 bytes long"
T0 = 1_795_000_000_000


class Log:
    """An org log being written: every stream's envelopes, in the order appended."""

    def __init__(self) -> None:
        self.envelopes: list[Envelope] = []
        self.heads: dict[str, tuple[int, str]] = {}
        self.commands = 0

    def append(self, stream: str, events: Sequence[Event], actor: str = "dealer-1") -> None:
        """Seal the events of one command on ``stream`` (one causation), as the store does."""
        self.commands += 1
        causation = f"cmd-{self.commands}"
        seq, prev = self.heads.get(stream, (0, GENESIS_HASH))
        for i, ev in enumerate(events):
            seq += 1
            env = seal(
                ev,
                id=event_id(stream=stream, actor=actor, causation=causation, index=i),
                stream=stream,
                seq=seq,
                ts=T0 + len(self.envelopes),
                actor=actor,
                causation=causation,
                correlation=None,
                prev_hash=prev,
            )
            prev = env.hash
            self.envelopes.append(env)
        self.heads[stream] = (seq, prev)


class Table:
    """A table driven through the table actor's adapter, every command's events sealed."""

    def __init__(
        self,
        log: Log,
        game: str,
        mode: str = "rng",
        *,
        table: str = "t1",
        seed: int = 7,
        **options: Any,
    ) -> None:
        self.log = log
        self.stream = f"table:{table}"
        self.rules = TableRules(ServerChance(seal_key(SECRET), random.Random(seed)))
        self.state: TableState = self.rules.initial(self.stream)
        self.do(OpenTable(game=game, config=options, outcome_mode=mode))  # type: ignore[arg-type]

    def do(self, command: Any) -> list[Event]:
        events = self.rules.decide(self.state, command)
        for ev in events:
            self.state = self.rules.evolve(self.state, ev)
        if events:
            self.log.append(self.stream, events)
        return events

    def round(self, bets: Iterable[tuple[str, dict[str, Any], int]], outcome: Any = None) -> None:
        """A round of one outcome: its bets, no more bets, the outcome (drawn when None)."""
        self.do(OpenRound())
        for player, bet, amount in bets:
            self.do(PlaceBet(player=player, bet=bet, amount=amount))
        self.do(CallNoMoreBets())
        self.do(DrawOutcome() if outcome is None else RecordOutcome(outcome=outcome))


def run(checker: Checker, envelopes: Iterable[Envelope]) -> Checker:
    """Feed the checker what the audit's engine would: each envelope of its types, in
    log order, as the store gives it back (packed and unpacked: lists for tuples, no typed
    body kept from sealing), then the end of the log."""
    for env in envelopes:
        if checker.types is None or env.type in checker.types:
            checker.observe(decode(encode(env), env.log_id))
    checker.finish()
    return checker


def tampered(
    envelopes: Sequence[Envelope], index: int, change: Callable[[dict[str, Any]], None]
) -> list[Envelope]:
    """A copy of the log with the data of ``envelopes[index]`` changed in place by
    ``change`` (its hash left as it was: the chains' check names that; here the rules do)."""
    env = envelopes[index]
    data = from_data(env.type, env.version, env.data)  # a valid body before the change
    assert data is not None
    raw = _copy(env.data)
    change(raw)
    out = list(envelopes)
    out[index] = replace(env, data=raw)
    return out


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value


def index_of(envelopes: Sequence[Envelope], type_: str, nth: int = 0, **match: Any) -> int:
    """The position of the ``nth`` envelope of ``type_`` whose data holds ``match``."""
    found = [
        i
        for i, env in enumerate(envelopes)
        if env.type == type_ and all(env.data.get(k) == v for k, v in match.items())
    ]
    return found[nth]


def named(found: Sequence[Discrepancy], env: Envelope) -> list[Discrepancy]:
    """The discrepancies that name ``env`` (its stream and seq)."""
    return [d for d in found if d.stream == env.stream and d.seq == env.seq]


MERCHANDISE_OPTIONS: dict[str, Any] = {
    "sections": [
        {"shows": ["1"], "prize": "mug"},
        {"shows": ["2"], "prize": "bear"},
        {"shows": ["3"]},
        {"shows": ["4"]},
    ],
    "max_bet": 200,
    "aggregate_prize_limit": 6_000,
    "inventory": [
        *({"item": f"mug-{i}", "prize": "mug", "value": 500, "donated": False} for i in range(6)),
        *(
            {"item": f"bear-{i}", "prize": "bear", "value": 1_500, "donated": True}
            for i in range(3)
        ),
    ],
}
"""A merchandise wheel whose limit a night of a few rounds reaches (4620.10(e))."""


def every_game_night(seed: int = 11) -> Log:
    """A night of every game the server runs, through the real pure rules: rounds of one
    outcome at roulette (both modes), every wheel, the merchandise wheel to its limit,
    Joker Seven and the one-roll dice games; Beat the Dealer and Bang in both modes (Bang's
    big six riding until the table closes); Black Jack in RNG mode with insurance, doubles
    and splits; and a voided round of several games."""
    from services.games.bang import SeatPlayer, shooter
    from services.games.black_jack import Deal, Insure, Peek
    from services.games.black_jack_state import round_stage
    from services.games.dice_rounds import RollDice
    from services.games.over_under_seven import OVER_UNDER_SEVEN
    from services.games.three_dice import CHUCK_A_LUCK, HAZARD
    from services.games.wheels import WHEEL_GAMES, betting_spaces
    from services.tables.rules import CloseTable, VoidRound

    log = Log()
    rnd = random.Random(seed)
    roulette = Table(log, "roulette", "rng", table="roulette-1", seed=seed)
    for _ in range(3):
        roulette.round([("p-1", {"kind": "red"}, 300), ("p-2", {"kind": "dozen", "dozen": 2}, 100)])
    dealer_roulette = Table(log, "roulette", "dealer", table="roulette-2", seed=seed)
    dealer_roulette.round([("p-1", {"kind": "red"}, 300)], {"pocket": "7", "spun_from": None})
    dealer_roulette.round([("p-3", {"kind": "red"}, 200)], {"pocket": "8", "spun_from": "7"})
    dealer_roulette.do(OpenRound())
    dealer_roulette.do(PlaceBet(player="p-1", bet={"kind": "black"}, amount=100))
    dealer_roulette.do(VoidRound(reason="the ball left the wheel"))
    for name, game in WHEEL_GAMES.items():
        if name == "merchandise_wheel":
            continue
        wheel = Table(log, name, "rng", table=name, seed=seed)
        spaces = betting_spaces(wheel.state.config, name)
        for _ in range(3):
            wheel.round([(f"p-{j}", {"space": rnd.choice(spaces)}, 100) for j in range(3)])
        del game
    for game in (OVER_UNDER_SEVEN, CHUCK_A_LUCK, HAZARD):
        dice = Table(log, game.name, "rng", table=game.name, seed=seed)
        bets = game.every_bet()
        for _ in range(3):
            dice.round([(f"p-{j}", rnd.choice(bets), 100) for j in range(1)])
    hand_thrown = Table(log, CHUCK_A_LUCK.name, "dealer", table="chuck-2", seed=seed)
    for faces, thrower in (([1, 2, 3], "cage"), ([4, 4, 6], "dealer")):
        hand_thrown.round(
            [("p-1", rnd.choice(CHUCK_A_LUCK.every_bet()), 100)],
            {"dice": faces, "thrown_by": thrower},
        )
    joker = Table(log, "joker_seven", "rng", table="joker-7", seed=seed)
    for _ in range(3):
        joker.round([("p-1", {"square": "no_pairs"}, 100), ("p-2", {"square": "prial"}, 100)])
    prizes = Table(log, "merchandise_wheel", "dealer", table="prize-wheel", **MERCHANDISE_OPTIONS)
    for section in (0, 1, 2, 0, 1, 0, 1):
        if prizes.state.closed:
            break
        prizes.round(
            [("p-1", {"space": "1"}, 100), ("p-2", {"space": "2"}, 100)],
            {"section": section},
        )
    for mode in ("rng", "dealer"):

        def faces() -> list[int] | None:
            return None if mode == "rng" else [rnd.randint(1, 6), rnd.randint(1, 6)]  # noqa: B023

        beat = Table(log, "beat_the_dealer", mode, table=f"beat-{mode}", seed=seed)
        for r in range(3):
            beat.do(OpenRound())
            for p in ("p-1", "p-2", "p-3"):
                beat.do(PlaceBet(player=p, bet={"kind": "beat_the_dealer"}, amount=100))
            beat.do(CallNoMoreBets())
            beat.do(RollDice(dice=faces(), thrown_by=None if mode == "rng" else "cage"))
            if r == 2:
                beat.do(VoidRound(reason="a die left the table"))
                continue
            for p in ("p-1", "p-2", "p-3"):
                beat.do(RollDice(player=p, dice=faces()))
        bang = Table(log, "bang", mode, table=f"bang-{mode}", seed=seed)
        bang.do(SeatPlayer(seat=1, player="p-2"))
        bang.do(SeatPlayer(seat=2, player="p-3"))
        for r in range(4):
            bang.do(OpenRound())
            if r == 0:
                bang.do(PlaceBet(player="p-2", bet={"kind": "big_six"}, amount=100))
                bang.do(PlaceBet(player="p-3", bet={"kind": "big_eight"}, amount=100))
            bang.do(PlaceBet(player="p-2", bet={"kind": "field"}, amount=100))
            bang.do(PlaceBet(player="p-3", bet={"kind": "hi_dice"}, amount=100))
            bang.do(CallNoMoreBets())
            bang.do(RollDice(dice=faces()))
            bang.do(CallNoMoreBets())
            held = shooter(bang.state.play)
            assert held is not None
            bang.do(RollDice(player=held[1], dice=faces()))
        if mode == "dealer":  # a big six still riding when the table closes: returned
            bang.do(OpenRound())
            bang.do(PlaceBet(player="p-2", bet={"kind": "big_six"}, amount=200))
            bang.do(CallNoMoreBets())
            bang.do(RollDice(dice=[2, 3]))
            bang.do(CallNoMoreBets())
            held = shooter(bang.state.play)
            assert held is not None
            bang.do(RollDice(player=held[1], dice=[4, 5]))
        bang.do(CloseTable(reason="night over"))
    bj = Table(log, "black_jack", "rng", table="bj-1", seed=seed, tie_option=2)
    for r in range(24):
        bj.do(OpenRound())
        for space, player in ((1, "p-1"), (3, "p-2"), (5, "p-3")):
            bj.do(PlaceBet(player=player, bet={"space": space}, amount=100))
        bj.do(Deal())
        while not bj.state.play.ended:
            play = bj.state.play
            if round_stage(play) == "insurance":
                for h in play.hands:
                    bj.do(Insure(hand=h.hand, amount=h.wager // 2))
                bj.do(Peek())
                continue
            if r == 23:
                bj.do(VoidRound(reason="misdeal"))
                break
            act_at_random(bj, rnd)
    dealer_black_jack(log, rnd)
    return log


DECK = tuple(f"{rank}{suit}" for rank in (*"A23456789", "10", *"JQK") for suit in "SHDC")
TEN_COUNTS = tuple(card for card in DECK if card[:-1] in ("10", "J", "Q", "K"))


def act_at_random(bj: Table, rnd: random.Random) -> None:
    """The hand whose turn it is takes the first action the rules allow, the actions tried
    in a random order."""
    from services.games.black_jack import Act
    from services.games.black_jack_state import turn_hand

    hand = turn_hand(bj.state.play)
    assert hand is not None
    for action in rnd.sample(["split", "double", "hit", "stand"], 4):
        try:
            bj.do(Act(hand=hand.hand, action=action))
            return
        except RuleError:
            continue


def dealer_black_jack(log: Log, rnd: random.Random, rounds: int = 14) -> None:
    """Black Jack in dealer mode: the dealer enters every card (drawn from ``rnd``, a card
    the shoe can no longer hold drawn again), declares the peek (a natural about a third
    of the time), and the players act at random among the actions the rules allow."""
    from services.games.black_jack import Deal, EnterCards, Insure, Peek
    from services.games.black_jack_state import round_stage, turn_hand

    bj = Table(log, "black_jack", "dealer", table="bj-2", tie_option=1, decks=4)
    # the first two deals as entered: an ace up, insured, and the dealer's natural against
    # two other hands; then against a player's natural (a push under tie option 1)
    script = {0: ["10S", "9H", "AS", "QD", "7C"], 1: ["AH", "KC", "AD", "QH", "5D"]}
    for r in range(rounds):
        entered = list(script.get(r, ()))
        bj.do(OpenRound())
        for space, player in ((2, "p-1"), (4, "p-2")):
            bj.do(PlaceBet(player=player, bet={"space": space}, amount=100))
        bj.do(Deal())
        while not bj.state.play.ended:
            play = bj.state.play
            stage = round_stage(play)
            if stage in ("insurance", "peek"):
                if stage == "insurance":
                    bj.do(Insure(hand=play.hands[0].hand, amount=play.hands[0].wager // 2))
                natural = stage == "insurance" and (r in script or rnd.random() < 0.35)
                if natural:  # an ace up: a 10-count the shoe still holds is the hole card
                    for hole in TEN_COUNTS:
                        try:
                            bj.do(Peek(natural=True, hole=hole))
                            break
                        except RuleError:
                            continue
                else:
                    bj.do(Peek(natural=False))
                continue
            hand = turn_hand(play)
            if (
                stage == "players"
                and hand is not None
                and len(hand.cards) >= 2
                and not hand.waiting
            ):
                act_at_random(bj, rnd)
                continue
            if entered:
                bj.do(EnterCards(cards=(entered.pop(0),)))
                continue
            for _ in range(50):
                try:
                    bj.do(EnterCards(cards=(rnd.choice(DECK),)))
                    break
                except RuleError:
                    continue


@functools.cache
def night() -> tuple[Envelope, ...]:
    """:func:`every_game_night`'s envelopes, built once for every test module."""
    return tuple(every_game_night().envelopes)


def raffle_night() -> Log:
    """Raffles of every kind through the real pure rules (``tests.unit.raffles.support``),
    every command's events sealed: a standard raffle drawn by the CSPRNG, a 50/50 drawn by
    hand, a Queen of Hearts on a server-dealt board searched to its queen, and a Treasure
    Chest carried over once and then opened."""
    from services.raffles import queen_of_hearts as qoh
    from services.raffles.rules import draw_sizes
    from services.raffles.state import HoldDrawing, RevealCard, TryKey
    from tests.unit.raffles import support as raffles
    from tests.unit.raffles import test_rules as online_rules

    log = Log()

    def sealed(stream: str, r: raffles.Raffle, events: list[Event]) -> list[Event]:
        log.append(stream, events, actor="member-1")
        return events

    class Driven(raffles.Raffle):
        def __init__(self, stream: str, kind: str, raw: dict[str, Any], commitments: Any = ()):
            self.stream = stream
            super().__init__(kind, raw, commitments)

        def run(self, command: Any) -> list[Event]:
            return sealed(self.stream, self, super().run(command))

    now = raffles.NOW
    standard = Driven("raffle:standard", "standard", raffles.standard_config())
    standard.method("rng")
    for _ in range(5):
        standard.sell(1)
    standard.sell(1, online=online_rules.online())  # its purchaser: personal data, unchecked
    while draw_sizes(standard.state):
        standard.draw(*(1 for _ in draw_sizes(standard.state)), now=now + 31 * raffles.DAY)
    fifty = Driven("raffle:fifty", "fifty_fifty", raffles.fifty_fifty_config())
    fifty.method("hand")
    fifty.sell(3)
    fifty.sell(1)
    fifty.run(HoldDrawing(now_ms=now + 31 * raffles.DAY, serials=(3,)))
    cards, commitments = raffles.server_board()
    queen = Driven(
        "raffle:queen", "queen_of_hearts", raffles.qoh_config(board="server"), commitments
    )
    queen.method("rng")
    for week, position in ((1, 3), (2, cards.index(qoh.QUEEN_OF_HEARTS) + 1)):
        at = now + week * 7 * raffles.DAY
        for _ in range(3):
            queen.sell(1, now=at)
        queen.draw(1, now=at)
        queen.run(
            RevealCard(
                now_ms=at,
                position=position,
                card=cards[position - 1],
                salt=raffles.SALTS[position - 1],
            )
        )
    chest = Driven("raffle:chest", "treasure_chest", raffles.tc_config())
    chest.method("rng")
    for occasion in range(2):
        at = now + (occasion + 1) * raffles.DAY
        for _ in range(6):
            chest.sell(1, now=at)
        chest.draw(*(0 for _ in draw_sizes(chest.state)), now=at)
        keys = sorted(chest.state.handed)
        for k, key in enumerate(keys):
            opened = occasion == 1 and k == len(keys) - 1
            chest.run(TryKey(now_ms=at, key=key, opened=opened))
            if opened:
                break
    return log


def deal_night() -> Log:
    """Bell jar deals through the real pure rules (``tests.unit.bell_jars.support``), each
    command's events sealed: a deal alone sold out, with a prize redeemed, and a
    combination of two identical deals sharing the lead's bank, redeemed from both."""
    from services.bell_jars import rules as deals
    from services.bell_jars.state import (
        Commingle,
        DealState,
        PutDealInPlay,
        RecordSale,
        RedeemTicket,
        RemoveDeal,
    )
    from tests.unit.bell_jars import support as jars

    log = Log()
    states: dict[str, DealState] = {}

    def do(deal: str, command: Any) -> None:
        state = states.get(deal, DealState(deal=deal))
        events = deals.decide(state, command)
        states[deal] = deals.fold(state, events)
        log.append(f"deal:{deal}", events, actor="member-1")

    def sale(deal: str, count: int) -> None:
        price = states[deal].ticket_price
        do(deal, RecordSale(count=count, amount=count * price, seller="s-1", now_ms=jars.NOW))

    def redemption(deal: str, line: int, ticket: str, lead: str | None = None) -> None:
        do(
            deal,
            RedeemTicket(
                prize=line,
                ticket=ticket,
                redeemed_by="s-1",
                now_ms=jars.NOW,
                lead=None if lead is None else states[lead],
            ),
        )

    for deal in ("d-1", "d-2", "d-3"):
        do(deal, jars.registration(deal, f"S-{deal}"))
    do("d-1", PutDealInPlay(container="jar", column="", now_ms=jars.NOW))
    sale("d-1", 5)
    redemption("d-1", 0, "t-1")
    redemption("d-1", 1, "t-2")
    sale("d-1", 15)  # the last ticket: sold out
    do("d-3", Commingle(lead=states["d-2"], now_ms=jars.NOW))
    do(
        "d-2",
        PutDealInPlay(
            container="jar",
            column="",
            now_ms=jars.NOW,
            commingle=("d-3",),
            members=(states["d-3"],),
        ),
    )
    sale("d-2", 12)
    redemption("d-2", 0, "t-9")
    redemption("d-3", 1, "t-3", lead="d-2")
    redemption("d-3", 2, "t-4", lead="d-2")
    do("d-4", jars.registration("d-4", "S-d-4"))
    do("d-4", PutDealInPlay(container="vending_machine", column="A", now_ms=jars.NOW))
    sale("d-4", 10)
    for line, ticket in ((0, "t-40"), (1, "t-41"), (1, "t-42")):  # 75 % by count, 90 % by value
        redemption("d-4", line, ticket)
    do("d-4", RemoveDeal(now_ms=jars.NOW))
    return log


def whole_night() -> list[Envelope]:
    """Every game's night, then a raffle's and a bell jar night's, as one org log with
    log ids (many tables to deal out, and streams that stay with the first share)."""
    played = [*night(), *raffle_night().envelopes, *deal_night().envelopes]
    players = sorted({p for e in played for p, cents, _k in moves(e) if cents < 0})
    cage = Log()
    for player in players:  # each player's chips bought before the night
        cage.append("cage", [ChipsIssued(player=player, amount=10**7)], "cashier:c")
    log = [*cage.envelopes, *played]
    return [dataclasses.replace(e, log_id=f"{T0 + n}-0") for n, e in enumerate(log)]


def moves(env: Envelope) -> list[tuple[str, int, str]]:
    if env.type not in MONEY_EVENTS:
        return []
    return list(data_moves(env.type, env.data))


def entries(log: Sequence[Envelope]) -> list[tuple[bytes, list[bytes]]]:
    """The log as the store's XRANGE replies it."""
    return [((e.log_id or "0").encode(), [b"e", encode(e)]) for e in log]


def guarded_of(log: Sequence[Envelope]) -> dict[str, int]:
    """The balances the store would guard after ``log``, untampered."""
    out: dict[str, int] = {}
    for env in log:
        for player, cents, _kind in moves(env):
            out[player] = out.get(player, 0) + cents
    return out


def canonical(report: AuditReport) -> dict[str, Any]:
    """The report as audit.json holds it, its discrepancies and its figures' rows in one
    order (a shared pass lists them in log order, one pass as each check met them)."""
    doc = report.to_json()
    rows = doc["discrepancies"]
    assert isinstance(rows, list)
    doc["discrepancies"] = sorted(rows, key=lambda d: json.dumps(d, sort_keys=True))
    for name in report.figures:
        figure = doc[name]
        assert isinstance(figure, list)
        doc[name] = sorted(figure, key=lambda d: json.dumps(d, sort_keys=True))
    return doc

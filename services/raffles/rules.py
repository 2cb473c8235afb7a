"""A raffle's pure rules: ``decide(state, command) -> events``, ``evolve(state, event)``.

What every raffle shares lives here (setup, the drawing method, ticket sales, closing the
drum, drawing winners); what a family adds is in its module (``standard`` for standard
raffles and the 50/50, ``queen_of_hearts``, ``treasure_chest``). No I/O, clock or
randomness: ``now_ms`` and the CSPRNG's indices enter as command data.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, Final

from events.base import Event
from events.raffles import (
    AnnouncementRaised,
    CardRevealed,
    ChestCarriedOver,
    DrawingHeld,
    DrawingMethodRecorded,
    KeyTried,
    PrizeAwarded,
    ProceedsAllocated,
    ProfitKept,
    RaffleEnded,
    RaffleOpened,
    RaffleSalesClosed,
    TicketSold,
)
from events.records import replace
from services.aggregates import RuleError
from services.raffles import queen_of_hearts, standard, tickets, treasure_chest
from services.raffles import serials as runs
from services.raffles.purchasers import check_online_purchase
from services.raffles.state import (
    CloseSales,
    HoldDrawing,
    OnlinePurchase,
    RaffleCommand,
    RaffleState,
    RaiseDueAnnouncements,
    RecordDrawingMethod,
    RevealCard,
    SellTicket,
    SetupRaffle,
    TryKey,
)

METHODS: Final = ("rng", "hand")
"""How winning tickets are drawn: the server's CSPRNG, or stubs drawn from the drum by hand
and entered, announced before the first draw, 4620.22(b)(3)."""
MAX_DESCRIPTION: Final = 500
"""Characters of the announced method's description: an operator setting, not a rule."""
NY_STANDARD_OFFSET_MS: Final = -5 * 3_600_000
"""Eastern Standard Time. A purchaser's age is taken on the New York calendar day, counted
at UTC-5 all year: in summer (UTC-4) the day turns an hour late, never early, so no one is
taken for 18 before their birthday (docs/RULES.md)."""


def parse_config(
    kind: str, raw: Mapping[str, Any], board_commitments: Sequence[str] = ()
) -> dict[str, Any]:
    """A raffle's canonical configuration (``invalid_config`` or ``prize_over_limit``)."""
    if kind == "standard":
        return standard.parse_standard(raw)
    if kind == "fifty_fifty":
        return standard.parse_fifty_fifty(raw)
    if kind == "queen_of_hearts":
        return queen_of_hearts.parse_config(raw, board_commitments)
    if kind == "treasure_chest":
        return treasure_chest.parse_config(raw)
    raise RuleError("invalid_config", f"kind must be one of {', '.join(tickets.KINDS)}")


def decide(state: RaffleState, command: RaffleCommand) -> list[Event]:
    """The events ``command`` causes in this raffle, or a RuleError with its code."""
    if isinstance(command, SetupRaffle):
        return _setup(state, command)
    if not state.opened:
        raise RuleError("unknown_raffle", f"raffle {state.raffle} has not been set up")
    if state.ended:
        raise RuleError("raffle_ended", f"raffle {state.raffle} is over")
    if isinstance(command, RecordDrawingMethod):
        return _record_method(state, command)
    before: list[Event] = []
    if state.kind == "treasure_chest":
        before = treasure_chest.announcement(state, command.now_ms)
        if before:
            state = evolve(state, before[0])
    match command:
        case SellTicket():
            return before + _sell(state, command)
        case CloseSales():
            return before + _close_sales(state)
        case HoldDrawing():
            return before + _hold_drawing(state, command)
        case RevealCard():
            if state.kind != "queen_of_hearts":
                raise RuleError("wrong_raffle", "reveal_card is for a Queen of Hearts raffle")
            return before + queen_of_hearts.reveal(state, command)
        case TryKey():
            if state.kind != "treasure_chest":
                raise RuleError("wrong_raffle", "try_key is for a Treasure Chest raffle")
            return before + treasure_chest.try_key(state, command)
        case RaiseDueAnnouncements():
            return before
    raise RuleError("bad_request", f"unknown command {command!r}")  # pragma: no cover


def _setup(state: RaffleState, command: SetupRaffle) -> list[Event]:
    """Set a raffle up once with a validated configuration; the same again is a no-op.

    A server board is recorded as the raffle actor's adapter dealt it: its commitments in
    the configuration, the board sealed beside them. A setup of a raffle already open is
    compared with what it was set up with, a server board with the one dealt then (a board
    is never dealt twice)."""
    commitments = command.board_commitments
    if state.opened and not commitments:
        commitments = _dealt_commitments(state)
    config = parse_config(command.kind, command.config, commitments)
    if state.opened:
        if (state.kind, dict(state.config)) == (command.kind, config):
            return []
        raise RuleError(
            "raffle_exists",
            f"raffle {state.raffle} is already set up with another configuration; "
            "a raffle's configuration is fixed for its stream",
        )
    server_board = config.get("board", {}).get("mode") == "server"
    sealed = command.sealed_board if server_board else ""
    return [
        RaffleOpened(raffle=state.raffle, kind=command.kind, config=config, sealed_board=sealed)
    ]


def _dealt_commitments(state: RaffleState) -> tuple[str, ...]:
    """The commitments of the board an open raffle was dealt; for one without a server
    board, placeholders that let a setup asking for one be compared (never equal)."""
    board = state.config.get("board")
    if isinstance(board, Mapping) and board.get("mode") == "server":
        return tuple(board["commitments"])
    return queen_of_hearts.UNDEALT


def _record_method(state: RaffleState, command: RecordDrawingMethod) -> list[Event]:
    """The method of drawing is announced and described before any ticket is drawn,
    4620.22(b)(3); once a drawing was held it stays."""
    if command.method not in METHODS:
        raise RuleError("bad_request", "method must be 'rng' or 'hand'")
    description = command.description.strip()
    if not description or len(description) > MAX_DESCRIPTION:
        raise RuleError("bad_request", f"describe the method in 1 to {MAX_DESCRIPTION} characters")
    if state.drawings:
        raise RuleError("method_fixed", "the drawing method cannot change once a drawing was held")
    return [DrawingMethodRecorded(method=command.method, description=description)]


def scheduled_ms(state: RaffleState) -> int:
    """When the drawing the tickets now sold are for is scheduled (4620.22(b)(9))."""
    if state.kind == "queen_of_hearts":
        return queen_of_hearts.scheduled_ms(state)
    if state.kind == "treasure_chest":
        return treasure_chest.scheduled_ms(state)
    return standard.last_drawing_ms(state)


def _check_online(online: OnlinePurchase, now_ms: int) -> None:
    """An online sale needs an account, an adult, no self-exclusion and a purchaser in the
    State, 4620.22(b)(7) (``services.raffles.purchasers``)."""
    if online.account is None:
        raise RuleError(
            "unknown_purchaser", "no raffle ticket account with that id (4620.22(b)(7)(iii))"
        )
    check_online_purchase(
        online.account,
        today=tickets.calendar_day(now_ms + NY_STANDARD_OFFSET_MS),
        location_state=online.location_state,
        excluded=online.excluded,
    )
    try:
        base64.b64decode(online.location_sealed, validate=True)
    except (binascii.Error, ValueError):
        raise RuleError("bad_request", "the sealed location is not base64") from None


def _sell(state: RaffleState, command: SellTicket) -> list[Event]:
    """Tickets for the current drawing: while the drum is open (``sales_closed``), within
    180 days of the drawing (``too_early``, 4620.22(b)(9)), at the raffle's price
    (``wrong_price``, (b)(10)), with serials never sold before (``serial_taken``), within
    the prize limits (``prize_over_limit``, (b)(1)); online only for a checked purchaser
    ((b)(7))."""
    if not state.sales_open:
        raise RuleError(
            "sales_closed", f"sales for drawing {state.round} of {state.raffle} are closed"
        )
    if command.online is not None:
        _check_online(command.online, command.now_ms)
    tickets.check_sales_window(scheduled_ms(state), command.now_ms)
    price = tickets.check_price(state.config, command.count, command.amount)
    serials = tickets.sale_serials(
        state.sold, state.top_serial, state.config, command.count, command.serial
    )
    if state.kind == "queen_of_hearts":
        queen_of_hearts.check_sale(state, command.amount)
    elif state.kind == "treasure_chest":
        treasure_chest.check_sale(state, command.amount)
    else:
        standard.check_sale(state, command.amount)
    online = command.online
    return [
        TicketSold(
            round=state.round,
            serials=serials,
            amount=command.amount,
            price=price,
            channel="door" if online is None else "online",
            face_hash=state.face_hash,
            at=command.now_ms,
            occasion=command.occasion,
            purchaser=None if online is None else online.purchaser,
            location_state=None if online is None else online.location_state,
            location_sealed=None if online is None else online.location_sealed,
        )
    ]


def _close_sales(state: RaffleState) -> list[Event]:
    """The member in charge closes the drum before the drawing: the tickets in it are those
    sold for this drawing, 4620.23(b)(1), (b)(3); 4620.24(b)(1), (b)(6)."""
    if not state.sales_open:
        raise RuleError("sales_closed", f"sales for drawing {state.round} are already closed")
    return [RaffleSalesClosed(round=state.round)]


def _family_draw(state: RaffleState) -> tuple[tuple[int, ...], int]:
    """The tickets in the drum (ascending) and how many winners this drawing draws."""
    if state.kind == "queen_of_hearts":
        queen_of_hearts.check_can_draw(state)
        return queen_of_hearts.eligible(state), queen_of_hearts.winners_needed(state)
    if state.kind == "treasure_chest":
        treasure_chest.check_can_draw(state)
        return treasure_chest.eligible(state), treasure_chest.winners_needed(state)
    return standard.eligible(state), standard.winners_needed(state)


def draw_sizes(state: RaffleState) -> tuple[int, ...]:
    """The ranges the CSPRNG draws from for the next drawing, in order: one index per
    winner into the tickets left (without replacement), then, for a Treasure Chest, one
    per key ticket into the keys left. Empty when no drawing can be held now."""
    if not state.opened or state.ended:
        return ()
    try:
        pool, winners = _family_draw(state)
    except RuleError:
        return ()
    if len(pool) < winners or winners <= 0:
        return ()
    sizes = [len(pool) - k for k in range(winners)]
    if state.kind == "treasure_chest":
        keys = len(state.keys_in_play)
        sizes += [keys - k for k in range(treasure_chest.keys_needed(state, winners))]
    return tuple(sizes)


def _hold_drawing(state: RaffleState, command: HoldDrawing) -> list[Event]:
    """Draw the winners, each unexcluded ticket equally likely, 4620.22(a): by the
    server's CSPRNG (``rng``) or by hand (``hand``, the serials the member in charge drew),
    as announced before the first draw (``method_not_recorded``, 4620.22(b)(3))."""
    if state.method is None:
        raise RuleError(
            "method_not_recorded",
            "announce and record the drawing method before drawing (4620.22(b)(3))",
        )
    pool, winners = _family_draw(state)
    if len(pool) < winners:
        raise RuleError(
            "not_enough_tickets",
            f"this drawing draws {winners} ticket(s) and {len(pool)} are in the drum",
        )
    key_count = treasure_chest.keys_needed(state, winners) if state.kind == "treasure_chest" else 0
    keys: list[int] = []
    if state.method == "rng":
        if command.serials or command.keys:
            raise RuleError("wrong_method", "this raffle draws by the server's CSPRNG")
        draws = command.draws or ()
        if len(draws) != winners + key_count:
            raise RuleError("bad_request", "the drawing was not drawn")
        serials = tickets.pick(pool, draws[:winners])
        if key_count:
            keys = tickets.pick(sorted(state.keys_in_play), draws[winners:])
    else:
        if command.draws:
            raise RuleError("wrong_method", "this raffle's tickets are drawn by hand")
        if len(command.serials) != winners:
            raise RuleError("bad_request", f"this drawing draws {winners} ticket(s)")
        standard.check_hand_serials(state, command.serials, pool)
        serials = list(command.serials)
        if state.kind == "treasure_chest":
            treasure_chest.check_hand_keys(state, command.keys, winners)
            keys = list(command.keys)
        elif command.keys:
            raise RuleError("bad_request", "only a Treasure Chest draws key tickets")
    if state.kind == "queen_of_hearts":
        return queen_of_hearts.drawing_events(
            state, serials, state.method, len(pool), command.now_ms
        )
    if state.kind == "treasure_chest":
        return treasure_chest.drawing_events(
            state, serials, keys, state.method, len(pool), command.now_ms
        )
    return standard.drawing_events(state, serials, state.method, len(pool), command.now_ms)


def evolve(state: RaffleState, event: Event) -> RaffleState:
    """Fold one event into the raffle's state."""
    folded = _evolve(state, event)
    event_round = getattr(event, "round", None)
    if isinstance(event_round, int) and event_round != folded.event_round:
        return replace(folded, event_round=event_round)
    return folded


def _evolve(state: RaffleState, event: Event) -> RaffleState:
    version = state.version + 1
    match event:
        case RaffleOpened():
            face = tickets.ticket_face(event.raffle, event.kind, event.config)
            keys = frozenset(range(1, event.config.get("keys", 0) + 1))
            return replace(
                state,
                version=version,
                opened=True,
                kind=event.kind,
                config=event.config,
                sealed_board=event.sealed_board,
                face_hash=tickets.face_hash(face),
                keys_in_play=keys,
            )
        case DrawingMethodRecorded():
            return replace(state, version=version, method=event.method)
        case TicketSold():
            first, last = event.serials[0], event.serials[-1]  # consecutive serials
            return replace(
                state,
                version=version,
                sold=runs.add(state.sold, first, last),
                top_serial=max(state.top_serial, last),
                round_serials=runs.add(state.round_serials, first, last),
                round_sales=state.round_sales + event.amount,
                total_sales=state.total_sales + event.amount,
                tickets=state.tickets + len(event.serials),
                pool=state.pool + event.amount if state.kind == "queen_of_hearts" else state.pool,
                first_sale_ms=event.at if state.first_sale_ms is None else state.first_sale_ms,
            )
        case RaffleSalesClosed():
            return replace(state, version=version, sales_open=False)
        case DrawingHeld():
            return _drawing_held(replace(state, version=version), event)
        case ProceedsAllocated():
            return replace(state, version=version, pool=state.pool + event.pool, round_sales=0)
        case PrizeAwarded():
            pool = 0 if event.prize in ("grand", "secondary") else state.pool
            return replace(state, version=version, awarded=state.awarded + event.amount, pool=pool)
        case ProfitKept():
            return replace(state, version=version, profit=state.profit + event.amount)
        case CardRevealed():
            return replace(
                state,
                version=version,
                revealed={**state.revealed, event.position: event.card},
                searchers=state.searchers[1:],
            )
        case KeyTried():
            handed = {k: s for k, s in state.handed.items() if k != event.key}
            if event.opened:
                return replace(state, version=version, handed=handed)
            return replace(
                state,
                version=version,
                handed=handed,
                keys_in_play=state.keys_in_play - {event.key},
                tried=(*state.tried, event.key),
            )
        case ChestCarriedOver():
            return replace(
                state,
                version=version,
                round=state.round + 1,
                sales_open=True,
                round_serials=(),
                round_sales=0,
                tried=(),
                drawn_in_round=frozenset(),
            )
        case AnnouncementRaised():
            return replace(state, version=version, announced_round=event.round)
        case RaffleEnded():
            return replace(state, version=version, ended=True, sales_open=False, searchers=())
    return replace(state, version=version)


def _drawing_held(state: RaffleState, event: DrawingHeld) -> RaffleState:
    state = replace(state, drawings=state.drawings + 1, last_drawing_ms=event.at)
    serials = frozenset(w.serial for w in event.winners)
    if state.kind == "queen_of_hearts":
        # The week's other tickets are defaced and discarded, 4620.23(b)(5): sales go on
        # for the next week's drawing.
        return replace(
            state,
            round=state.round + 1,
            round_serials=(),
            round_sales=0,
            sales_open=True,
            searchers=tuple((event.round, w.serial) for w in event.winners),
        )
    if state.kind == "treasure_chest":
        return replace(
            state,
            sales_open=False,
            drawn_in_round=state.drawn_in_round | serials,
            handed={w.key: w.serial for w in event.winners if w.key is not None},
        )
    return replace(state, excluded=state.excluded | serials)


def fold(state: RaffleState, events: Sequence[Event]) -> RaffleState:
    for ev in events:
        state = evolve(state, ev)
    return state

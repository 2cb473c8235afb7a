"""The registry of ops: every command a client may send, declared once.

An :class:`Op` says everything the gateway knows of one command: its name; the aggregate
it goes to (:class:`Aggregate`: a table's stream, the cage, a raffle's stream, or off the
streams: the purchaser vault, the tokens); its fields, each with its parser (required or
optional); who may send it (:class:`Access`, with the messages ``forbidden`` gives); and how
its domain command is built from the checked fields (``build``), or, off the streams, what
is done (``perform``). The websocket and HTTP command paths (:func:`parse_command`),
authorization (:func:`authorize`) and the op tables of docs/PROTOCOL.md (checked by a test)
read this registry; the rules' ``decide`` and the actors' replies stay with the actors.
So does the typed decoder of the websocket (:func:`parse_frame`): each field helper names
the msgspec type its field is read as, and every op whose fields all have one gets a
Struct derived from its declaration.

Adding an op is one declaration here, plus its command class and its rule. A table op whose
command is a game's step is declared like ``cancel_bet``: a builder function, and the roles
it allows (for instance a hand's action, by its player or by the table's dealer for them)::

    Op(
        name="act",
        aggregate=TABLE,
        access=PlayerOrDealer(who="the player (own hand) or the table's dealer"),
        fields=(text("hand"), choice("action", ("hit", "stand", "double", "split"))),
        build=lambda a, ctx: Act(hand=a["hand"], action=a["action"], player=ctx.own_player),
    )
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, cast

import msgspec

from events.bell_jars import FlarePrize
from services.aggregates import (
    CAGE,
    EXPENSES,
    RuleError,
    deal_stream,
    raffle_stream,
    table_stream,
)
from services.bell_jars.limits import MAX_FLARE_LINES, MAX_TICKETS_PER_DEAL
from services.bell_jars.state import (
    CONTAINERS,
    KINDS,
    PutDealInPlay,
    RecordSale,
    RedeemTicket,
    RegisterDeal,
    RemoveDeal,
)
from services.cage.rules import BuyChips, CashOut
from services.expenses.rules import (
    CATEGORIES,
    COVERS,
    MAX_EXPENSE_TEXT,
    RecordExpense,
    check_expense,
)
from services.games import bang
from services.games import black_jack as bj
from services.games.dice_rounds import RollDice
from services.games.merchandise import AddStock
from services.games.single_outcome import DrawOutcome, RecordOutcome
from services.gateway import offstream
from services.gateway.auth import Principal
from services.gateway.protocol import (
    MAX_ID_LENGTH,
    MAX_JSON_CONTAINERS,
    MAX_LOCATION_BYTES,
    ProtocolError,
    amount_field,
    field,
    fingerprint,
    idempotency_key,
    int_field,
    text_field,
    typed_fingerprint,
)
from services.limits import MAX_SAFE_AMOUNT_CENTS
from services.night import ID_PATTERN
from services.raffles.config_input import raffle_options
from services.raffles.purchasers import parse_account, parse_exclusion_csv
from services.raffles.queen_of_hearts import POSITIONS
from services.raffles.state import (
    CloseSales,
    HoldDrawing,
    OnlinePurchase,
    RecordDrawingMethod,
    RevealCard,
    SellTicket,
    SetupRaffle,
    TryKey,
)
from services.tables.rules import (
    CallNoMoreBets,
    CancelBet,
    CloseTable,
    OpenRound,
    PlaceBet,
    VoidRound,
)
from services.text import has_control

if TYPE_CHECKING:
    from services.runtime import Runtime

Args = dict[str, Any]
"""An op's checked fields, by name (an optional field that was not sent: its default)."""
Parser = Callable[[Mapping[str, Any], str], Any]
"""Reads and checks one field of a request: ``parser(msg, name)``, or ProtocolError."""


# The aggregates an op goes to.


@dataclass(frozen=True, slots=True)
class Aggregate:
    """Where an op's command goes.

    ``target``: the field naming the aggregate (``table``, ``raffle``), or None; ``stream``
    maps that name (or None) to the stream; ``occasion_bound``: whether the night's occasion
    window applies (tables and the cage; raffles run through the license period,
    4620.22(b)(5), (b)(7)); ``off_stream``: no stream and no event (the op is ``perform``ed)."""

    name: str
    target: str | None
    stream: Callable[[str], str] | None
    occasion_bound: bool
    off_stream: bool = False


TABLE = Aggregate("table", "table", table_stream, occasion_bound=True)
CAGE_AGGREGATE = Aggregate("cage", None, lambda _name: CAGE, occasion_bound=True)
RAFFLE = Aggregate("raffle", "raffle", raffle_stream, occasion_bound=False)
DEAL = Aggregate("deal", "deal", deal_stream, occasion_bound=False)
"""A bell jar deal's stream: its sales run through the license period, not the occasion
(reading BJAR-7)."""
EXPENSES_AGGREGATE = Aggregate("expenses", None, lambda _name: EXPENSES, occasion_bound=False)
"""The expense stream: expenses are recorded after the night too (the GC-7 is due within
7 days after the license period, 4624.1), so the occasion's window does not bind them."""
VAULT = Aggregate("purchaser vault", None, None, occasion_bound=False, off_stream=True)
TOKENS = Aggregate("tokens", None, None, occasion_bound=False, off_stream=True)


# Who may send an op.


class Access:
    """Who may send an op: ``roles`` (the roles that may, within its scope), ``who`` (how
    docs/PROTOCOL.md's op tables say it) and :meth:`denied` (the ``forbidden`` message)."""

    roles: frozenset[str]
    who: str

    def denied(self, p: Principal, op: str, table: str | None, player: str | None) -> str | None:
        """Why ``p`` may not send ``op`` at ``table`` for ``player`` (None: it may)."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Roles(Access):
    """Any principal of one of ``roles``; others get ``message`` (``{op}`` is the op)."""

    roles: frozenset[str]
    message: str
    who: str

    def denied(self, p: Principal, op: str, table: str | None, player: str | None) -> str | None:
        return None if p.role in self.roles else self.message.format(op=op)


@dataclass(frozen=True, slots=True)
class TableDealer(Access):
    """A dealer of the op's table (a dealer token lists its tables)."""

    who: str = "dealer of the table"
    roles: frozenset[str] = frozenset({"dealer"})

    def denied(self, p: Principal, op: str, table: str | None, player: str | None) -> str | None:
        if p.role != "dealer":
            return f"{op} is for the table's dealer"
        if table not in p.tables:
            return f"you are not a dealer of {table}"
        return None


@dataclass(frozen=True, slots=True)
class PlayerOrDealer(Access):
    """A player for their own account (the op's ``player`` field, when it has one, must be
    the token's), or a dealer of the table acting for any player."""

    who: str
    own_only: str = "a player bets only for their own account"
    roles: frozenset[str] = frozenset({"player", "dealer"})

    def denied(self, p: Principal, op: str, table: str | None, player: str | None) -> str | None:
        if p.role == "dealer":
            return None if table in p.tables else f"you are not a dealer of {table}"
        if p.role == "player":
            if p.player is None or (player is not None and player != p.player):
                return self.own_only
            return None
        return f"{op} is for players and the table's dealer"


MEMBER_IN_CHARGE = Roles(
    frozenset({"member_in_charge"}), "{op} is for the member in charge", "member in charge"
)


# Fields, and the types the typed decoder reads them as (see "The typed decoder" below).

_Int = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
"""A whole number the typed decoder takes (int64: within what the store can encode)."""
_Text = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ID_LENGTH)]
"""An id-like text's length and type (its control characters are checked after)."""
_Scalar = Union[str, _Int, bool, None]  # noqa: UP007 - a runtime type for msgspec
_Value = Union[_Scalar, list[_Scalar]]  # noqa: UP007
_Json = Union[_Scalar, list[_Value], dict[str, _Value]]  # noqa: UP007
"""What the typed decoder takes as an object's or list's contents or as any JSON value:
text, whole numbers, booleans and null, nested at most three levels below the field and
never a float (anything else takes the exact path)."""
_TYPED: dict[type, Any] = {
    str: str,
    bool: bool,
    dict: dict[str, _Json],
    list: list[Union[_Scalar, list[_Value], dict[str, _Value]]],  # noqa: UP007
}
"""The typed decoder's reading of each JSON type a :func:`typed` field may have."""


@dataclass(frozen=True, slots=True)
class Field:
    """One field of an op: ``parse(msg, name)`` checks it. A required field must be sent
    (the parser says ``missing field``); an optional one not sent is ``default``.
    ``before_auth``: read before authorization, which needs it (a bet's ``player``).
    ``only_if``: read only when the request meets it (an online sale's ``location``).

    ``typed``: the type the typed decoder reads the field as (a msgspec type that accepts
    only values ``parse`` accepts unchanged; None: the op has no typed decoder, its
    requests always take ``parse``); ``text``: the value is an id-like text whose control
    characters the typed path checks after decoding."""

    name: str
    parse: Parser
    required: bool = True
    default: Any = None
    before_auth: bool = False
    only_if: Callable[[Mapping[str, Any]], bool] | None = None
    typed: Any = None
    text: bool = False


def text(name: str, *, required: bool = True, before_auth: bool = False) -> Field:
    """An id-like text field (:func:`services.gateway.protocol.text_field`)."""
    return Field(
        name, text_field, required=required, before_auth=before_auth, typed=_Text, text=True
    )


def amount() -> Field:
    """``amount``: a positive whole number of cents (``over_limit`` beyond any amount)."""
    return Field(
        "amount",
        lambda msg, _name: amount_field(msg),
        typed=Annotated[int, msgspec.Meta(gt=0, le=MAX_SAFE_AMOUNT_CENTS)],
    )


def typed(name: str, kind: type, *, required: bool = True, default: Any = None) -> Field:
    """A field of one JSON type (``bad_request`` when mistyped)."""
    return Field(
        name,
        lambda msg, n: field(msg, n, kind),
        required=required,
        default=default,
        typed=_TYPED.get(kind),
    )


def integer(name: str, low: int, high: int, *, required: bool = True, default: Any = None) -> Field:
    """A whole number from ``low`` to ``high`` (``2.0`` is 2)."""
    return Field(
        name,
        lambda msg, n: int_field(msg, n, low, high),
        required=required,
        default=default,
        typed=Annotated[int, msgspec.Meta(ge=low, le=high)],
    )


def choice(name: str, values: tuple[str, ...], *, default: str | None = None) -> Field:
    """One of ``values`` (optional when it has a ``default``)."""

    def parse(msg: Mapping[str, Any], n: str) -> str:
        value = msg.get(n)
        if value not in values:
            quoted = " or ".join(repr(v) for v in values)
            raise ProtocolError("bad_request", f"{n} must be {quoted}")
        return str(value)

    return Field(
        name, parse, required=default is None, default=default, typed=cast(Any, Literal)[values]
    )


def any_json(name: str) -> Field:
    """Any JSON value, required: the game says what it must look like (an outcome)."""

    def parse(msg: Mapping[str, Any], n: str) -> Any:
        if n not in msg:
            raise ProtocolError("bad_request", f"missing field {n!r}")
        return msg[n]

    return Field(name, parse, typed=_Json)


def _optional_str(msg: Mapping[str, Any], name: str) -> str | None:
    value = msg[name]
    if value is not None and not isinstance(value, str):
        raise ProtocolError("bad_request", f"field {name!r} must be str")
    return value


def _position(msg: Mapping[str, Any], name: str) -> int:
    """A whole number (``bad_request`` otherwise) on the board, 1 to 54
    (``invalid_position`` otherwise; 4620.23(b)(3))."""
    value = field(msg, name, (int, float))
    if isinstance(value, float):
        if not value.is_integer():
            raise ProtocolError("bad_request", f"{name} must be a whole number")
        value = int(value)
    if not 1 <= value <= POSITIONS:
        raise ProtocolError("invalid_position", f"positions are 1 to {POSITIONS}")
    return int(value)


def _int_list(msg: Mapping[str, Any], name: str) -> tuple[int, ...]:
    raw = msg[name]
    if not isinstance(raw, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 2**31 for v in raw
    ):
        raise ProtocolError("bad_request", f"{name} must be a list of positive whole numbers")
    return tuple(raw)


def _location(msg: Mapping[str, Any], name: str) -> dict[str, Any]:
    location: dict[str, Any] = field(msg, name, dict)
    if len(json.dumps(location)) > MAX_LOCATION_BYTES:
        raise ProtocolError("bad_request", "location is too large")
    return location


def _occasion(msg: Mapping[str, Any], name: str) -> str | None:
    named = msg[name]
    if named is not None and not (isinstance(named, str) and 0 < len(named) <= 128):
        raise ProtocolError("bad_request", "field 'occasion' must be 1 to 128 characters")
    return named


def _license_period(msg: Mapping[str, Any], name: str) -> str | None:
    named = msg[name]
    if named is not None and not (isinstance(named, str) and 0 < len(named) <= 64):
        raise ProtocolError("bad_request", f"field {name!r} must be 1 to 64 characters")
    return named


def _flag(msg: Mapping[str, Any], name: str) -> bool:
    value = msg[name]
    if not isinstance(value, bool):
        raise ProtocolError("bad_request", f"field {name!r} must be true or false")
    return value


def _entries(msg: Mapping[str, Any], name: str) -> list[tuple[str, str]]:
    raw = field(msg, name, list)
    if not all(isinstance(e, dict) for e in raw):
        raise ProtocolError("bad_request", "entries are {legal_name, date_of_birth}")
    return [(str(e.get("legal_name", "")), str(e.get("date_of_birth", ""))) for e in raw]


def _free_text(msg: Mapping[str, Any], name: str) -> str:
    """A required text of 1 to :data:`MAX_EXPENSE_TEXT` characters without control
    characters (an address, a description: ``bad_request`` otherwise)."""
    value: str = field(msg, name, str)
    if not value.strip() or len(value) > MAX_EXPENSE_TEXT:
        raise ProtocolError(
            "bad_request", f"field {name!r} must be 1 to {MAX_EXPENSE_TEXT} characters"
        )
    if has_control(value):
        raise ProtocolError("bad_request", f"field {name!r} may not hold control characters")
    return value


def free_text(name: str) -> Field:
    """A required free text (:func:`_free_text`)."""
    return Field(
        name,
        _free_text,
        typed=Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_EXPENSE_TEXT)],
        text=True,
    )


def _online(msg: Mapping[str, Any]) -> bool:
    return msg.get("channel") == "online"


# The ops.


@dataclass(slots=True, kw_only=True)
class OpContext:
    """What a builder may use beside the fields: who sends it, the server's clock (unix
    ms), the organization's name and the night's occasion. (Not frozen: one is made per
    command, and a frozen dataclass takes several times longer to make.)"""

    who: Principal
    now_ms: int = 0
    organization: str = ""
    occasion: str | None = None

    @property
    def own_player(self) -> str | None:
        """The sender's own account when a player sends it (None for a dealer acting)."""
        return self.who.player if self.who.role == "player" else None


Builder = Callable[[Args, OpContext], Any]
Performer = Callable[["Runtime", Principal, Args], Awaitable[Any]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Op:
    """One op, declared once (see the module docstring).

    ``build`` makes the domain command from the checked fields (stream ops); ``perform``
    does an off-stream op; ``creates``: the op names a new aggregate (its id must match
    :data:`services.night.ID_PATTERN`, instead of naming one that runs); ``prepared``: its
    command may need a look-up in the store before its actor sees it (the gateway's raffle
    preparation); ``location``: the field whose value the gateway seals for the purchaser
    (personal data, never in an event in clear); ``who_note``: added to ``access.who`` in
    docs/PROTOCOL.md (a mode the op needs)."""

    name: str
    aggregate: Aggregate
    access: Access
    fields: tuple[Field, ...] = ()
    build: Builder | None = None
    perform: Performer | None = None
    creates: bool = False
    prepared: bool = False
    location: str | None = None
    who_note: str = ""

    @property
    def who(self) -> str:
        """Who may send it, as docs/PROTOCOL.md's op tables say."""
        return f"{self.access.who}, {self.who_note}" if self.who_note else self.access.who

    @property
    def field_names(self) -> tuple[str, ...]:
        """Every field a client may send (the aggregate's name first), but ``op`` and
        ``id``."""
        target = (self.aggregate.target,) if self.aggregate.target else ()
        return (*target, *(f.name for f in self.fields))


def _sell_ticket(a: Args, ctx: OpContext) -> SellTicket:
    """A door sale counts toward the night's occasion unless it names another; an online
    sale toward the one it names, if any."""
    online: OnlinePurchase | None = None
    if a["channel"] == "online":
        state = a["location"].get("state")
        online = OnlinePurchase(
            purchaser=a["purchaser"],
            account=None,
            excluded=False,
            location_state=state if isinstance(state, str) else None,
            location_sealed="",
        )
    named = a["occasion"]
    return SellTicket(
        count=a["count"],
        amount=a["amount"],
        now_ms=ctx.now_ms,
        serial=a["serial"],
        occasion=named if named is not None or online else ctx.occasion,
        online=online,
    )


def _setup_raffle(a: Args, ctx: OpContext) -> SetupRaffle:
    try:
        options = raffle_options(a["config"], organization=ctx.organization)
    except RuleError as e:
        raise ProtocolError(e.code, e.message) from None
    return SetupRaffle(kind=a["kind"], config=options)


def _record_expense(a: Args, ctx: OpContext) -> RecordExpense:
    """An expense for an occasion is for the night's unless it names another; one for the
    license period names none, and may name its period (``license_period``, the GC-7's
    key; default the night's). Checked here as the rules check it, so a refusal is
    ``bad_request`` before any actor sees it and changes nothing; whether the occasion or
    the period is one the log started the actor's rules decide (``unknown_occasion``,
    ``unknown_license_period``)."""
    covers = a["covers"]
    named = a["occasion"]
    if covers == "license_period" and named is not None:
        raise ProtocolError("bad_request", "an expense for the license period names no occasion")
    command = RecordExpense(
        payee=a["payee"],
        address=a["address"],
        description=a["description"],
        amount=a["amount"],
        category=a["category"],
        covers=covers,
        occasion=(named or ctx.occasion) if covers == "occasion" else None,
        recorded_by=ctx.who.sub,
        now_ms=ctx.now_ms,
        license_period=a["license_period"],
    )
    try:
        check_expense(command)
    except RuleError as e:
        raise ProtocolError(e.code, e.message) from None
    return command


def _enter_cards(a: Args, ctx: OpContext) -> bj.EnterCards:
    """At most :data:`~services.games.black_jack.MAX_CARDS_ENTERED` cards at once."""
    if len(a["cards"]) > bj.MAX_CARDS_ENTERED:
        raise ProtocolError(
            "bad_request", f"at most {bj.MAX_CARDS_ENTERED} cards in one enter_cards"
        )
    return bj.EnterCards(cards=tuple(a["cards"]))


def _draw_outcome(a: Args, ctx: OpContext) -> DrawOutcome:
    # No draw here: the table actor's adapter draws, through its Chance.
    return DrawOutcome()


def _prizes(msg: Mapping[str, Any], name: str) -> tuple[FlarePrize, ...]:
    """The flare's prize table: a list of ``{value, count, kind}`` lines, a merchandise
    line with its ``description`` and ``value_basis`` (``bad_request`` when malformed; the
    rules check the figures)."""
    raw = field(msg, name, list)
    if not 0 < len(raw) <= MAX_FLARE_LINES:
        raise ProtocolError("bad_request", f"{name} lists 1 to {MAX_FLARE_LINES} prize lines")
    lines = []
    for i, line in enumerate(raw):
        if not isinstance(line, dict) or not set(line) <= {
            "value",
            "count",
            "kind",
            "description",
            "value_basis",
        }:
            raise ProtocolError(
                "bad_request",
                f"{name}[{i}] is {{value, count, kind, description, value_basis}}",
            )
        value = int_field(line, "value", 1, MAX_SAFE_AMOUNT_CENTS)
        count = int_field(line, "count", 1, MAX_TICKETS_PER_DEAL)
        kind = line.get("kind", "cash")
        if kind not in ("cash", "merchandise"):
            raise ProtocolError("bad_request", f"{name}[{i}].kind must be 'cash' or 'merchandise'")
        if kind == "cash":
            if "description" in line or line.get("value_basis", "cash") != "cash":
                raise ProtocolError(
                    "bad_request", f"{name}[{i}]: a cash prize has no description or basis"
                )
            lines.append(FlarePrize(value, count, "cash", "", "cash"))
            continue
        description = field(line, "description", str)
        basis = line.get("value_basis")
        if basis not in ("cost", "fair_market_value"):
            raise ProtocolError(
                "bad_request",
                f"{name}[{i}].value_basis must be 'cost' or 'fair_market_value'",
            )
        lines.append(FlarePrize(value, count, "merchandise", description, basis))
    return tuple(lines)


def _deal_ids(msg: Mapping[str, Any], name: str) -> tuple[str, ...]:
    raw = field(msg, name, list)
    if len(raw) > MAX_COMMINGLED or not all(
        isinstance(d, str) and ID_PATTERN.match(d) for d in raw
    ):
        raise ProtocolError("bad_request", f"{name} lists at most {MAX_COMMINGLED} deal ids")
    return tuple(raw)


MAX_COMMINGLED = 20
"""Other deals one ``put_deal_in_play`` may commingle: an input bound, not a rule."""


def _register_deal(a: Args, ctx: OpContext) -> RegisterDeal:
    return RegisterDeal(
        kind=a["kind"],
        supplier=a["supplier"],
        supplier_license=a["supplier_license"],
        invoice_number=a["invoice_number"],
        invoice_date=a["invoice_date"],
        serial_number=a["serial_number"],
        ticket_serial=a["ticket_serial"],
        flare_serial=a["flare_serial"],
        invoice_serial=a["invoice_serial"],
        form_number=a["form_number"],
        ticket_count=a["ticket_count"],
        ticket_price=a["ticket_price"],
        cost=a["cost"],
        prizes=a["prizes"],
        now_ms=ctx.now_ms,
    )


PLAYER_FIELD = text("player", before_auth=True)
CASHIERS = Roles(frozenset({"cashier"}), "{op} is for cashiers", "cashier")
DEAL_SELLERS = Roles(
    frozenset({"seller", "member_in_charge"}),
    "{op} is for sellers and the member in charge",
    "seller, member in charge",
)
"""Who records a deal's sales and redemptions (the member in charge may too)."""


def _optional_text(msg: Mapping[str, Any], name: str) -> str:
    """An id-like text, or ``""``."""
    value = msg[name]
    return "" if value == "" else text_field(msg, name)


"""Who may sell chips and cash them out."""

OP_LIST: tuple[Op, ...] = (
    # A table's stream (docs/PROTOCOL.md "Commands and replies").
    Op(name="open_round", aggregate=TABLE, access=TableDealer(), build=lambda a, c: OpenRound()),
    Op(
        name="place_bet",
        aggregate=TABLE,
        access=PlayerOrDealer(who="the player (own account) or the table's dealer"),
        fields=(PLAYER_FIELD, typed("bet", dict), amount()),
        build=lambda a, c: PlaceBet(player=a["player"], bet=a["bet"], amount=a["amount"]),
    ),
    Op(
        name="cancel_bet",
        aggregate=TABLE,
        access=PlayerOrDealer(who="the player (own bets) or the table's dealer"),
        fields=(text("bet_id"),),
        build=lambda a, c: CancelBet(bet_id=a["bet_id"], player=c.own_player),
    ),
    Op(
        name="no_more_bets",
        aggregate=TABLE,
        access=TableDealer(),
        build=lambda a, c: CallNoMoreBets(),
    ),
    Op(
        name="record_outcome",
        aggregate=TABLE,
        access=TableDealer(),
        who_note="`dealer` mode",
        fields=(any_json("outcome"),),
        build=lambda a, c: RecordOutcome(outcome=a["outcome"]),
    ),
    Op(
        name="draw_outcome",
        aggregate=TABLE,
        access=TableDealer(),
        who_note="`rng` mode",
        build=_draw_outcome,
    ),
    Op(
        name="add_stock",
        aggregate=TABLE,
        access=Roles(
            frozenset({"member_in_charge"}), "{op} is for a member in charge", "member in charge"
        ),  # a merchandise wheel's shelf is restocked by a member in charge (4620.10(e))
        fields=(typed("items", list),),
        build=lambda a, c: AddStock(items=a["items"]),
    ),
    Op(
        name="close_table",
        aggregate=TABLE,
        access=TableDealer(),
        fields=(typed("reason", str, required=False, default="closed by the dealer"),),
        build=lambda a, c: CloseTable(reason=a["reason"][:200]),
    ),
    Op(
        name="void_round",
        aggregate=TABLE,
        access=Roles(
            frozenset({"member_in_charge"}), "{op} is for a member in charge", "member in charge"
        ),
        fields=(typed("reason", str),),
        build=lambda a, c: VoidRound(reason=a["reason"][:200]),
    ),
    # Black Jack (4620.5): the steps of its round (services/games/black_jack.py).
    Op(name="deal", aggregate=TABLE, access=TableDealer(), build=lambda a, c: bj.Deal()),
    Op(
        name="act",
        aggregate=TABLE,
        access=PlayerOrDealer(who="the hand's player, or the table's dealer for them"),
        fields=(text("hand"), choice("action", ("hit", "stand", "double", "split"))),
        build=lambda a, c: bj.Act(hand=a["hand"], action=a["action"], player=c.own_player),
    ),
    Op(
        name="insure",
        aggregate=TABLE,
        access=PlayerOrDealer(who="the hand's player, or the table's dealer for them"),
        fields=(text("hand"), amount()),
        build=lambda a, c: bj.Insure(hand=a["hand"], amount=a["amount"], player=c.own_player),
    ),
    Op(
        name="peek",
        aggregate=TABLE,
        access=TableDealer(),
        fields=(typed("natural", bool, required=False), typed("hole", str, required=False)),
        build=lambda a, c: bj.Peek(natural=a["natural"], hole=a["hole"]),
    ),
    Op(
        name="enter_cards",
        aggregate=TABLE,
        access=TableDealer(),
        fields=(typed("cards", list),),
        build=_enter_cards,
    ),
    Op(name="shuffle", aggregate=TABLE, access=TableDealer(), build=lambda a, c: bj.Shuffle()),
    Op(
        name="burn_card",
        aggregate=TABLE,
        access=TableDealer(),
        fields=(typed("card", str),),
        build=lambda a, c: bj.BurnCard(card=a["card"]),
    ),
    # Beat the Dealer (4620.14) and Bang (4620.15): the rolls of their rounds, Bang's seats
    # and dice (services/games/beat_the_dealer.py, bang.py).
    Op(
        name="roll",
        aggregate=TABLE,
        access=TableDealer(),
        fields=(
            typed("dice", list, required=False),
            typed("thrown_by", str, required=False),
            text("player", required=False),
        ),
        build=lambda a, c: RollDice(player=a["player"], dice=a["dice"], thrown_by=a["thrown_by"]),
    ),
    Op(
        name="seat_player",
        aggregate=TABLE,
        access=TableDealer(),
        fields=(integer("seat", 1, bang.MAX_SEATS), text("player")),
        build=lambda a, c: bang.SeatPlayer(seat=a["seat"], player=a["player"]),
    ),
    Op(
        name="unseat_player",
        aggregate=TABLE,
        access=TableDealer(),
        fields=(integer("seat", 1, bang.MAX_SEATS),),
        build=lambda a, c: bang.UnseatPlayer(seat=a["seat"]),
    ),
    Op(name="pass_dice", aggregate=TABLE, access=TableDealer(), build=lambda a, c: bang.PassDice()),
    # The cage.
    Op(
        name="buy_chips",
        aggregate=CAGE_AGGREGATE,
        access=CASHIERS,
        fields=(PLAYER_FIELD, amount()),
        build=lambda a, c: BuyChips(player=a["player"], amount=a["amount"]),
    ),
    Op(
        name="cash_out",
        aggregate=CAGE_AGGREGATE,
        access=CASHIERS,
        fields=(PLAYER_FIELD, amount()),
        build=lambda a, c: CashOut(player=a["player"], amount=a["amount"]),
    ),
    # The tokens (off-stream; docs/OPERATIONS.md "A lost tablet").
    Op(
        name="revoke_token",
        aggregate=TOKENS,
        access=Roles(frozenset({"ops"}), "{op} is for ops", "ops"),
        fields=(
            typed("token_id", str, required=False),
            typed("token", str, required=False),
        ),
        perform=offstream.revoke_token,
    ),
    # A raffle's stream (docs/PROTOCOL.md "Raffles").
    Op(
        name="setup_raffle",
        aggregate=RAFFLE,
        access=MEMBER_IN_CHARGE,
        creates=True,
        fields=(typed("config", dict), text("kind")),
        build=_setup_raffle,
    ),
    Op(
        name="record_drawing_method",
        aggregate=RAFFLE,
        access=MEMBER_IN_CHARGE,
        fields=(text("method"), typed("description", str)),
        build=lambda a, c: RecordDrawingMethod(method=a["method"], description=a["description"]),
    ),
    Op(
        name="sell_ticket",
        aggregate=RAFFLE,
        access=Roles(frozenset({"seller"}), "{op} is for sellers", "seller"),
        prepared=True,
        location="location",
        fields=(
            integer("count", 1, 1000, required=False, default=1),
            integer("serial", 1, 2**31, required=False),
            choice("channel", ("door", "online"), default="door"),
            Field("location", _location, only_if=_online),
            Field("purchaser", text_field, only_if=_online),
            Field("occasion", _occasion, required=False),
            amount(),
        ),
        build=_sell_ticket,
    ),
    Op(
        name="close_sales",
        aggregate=RAFFLE,
        access=MEMBER_IN_CHARGE,
        build=lambda a, c: CloseSales(now_ms=c.now_ms),
    ),
    Op(
        name="hold_drawing",
        aggregate=RAFFLE,
        access=MEMBER_IN_CHARGE,
        fields=(
            Field("serials", _int_list, required=False, default=()),
            Field("keys", _int_list, required=False, default=()),
        ),
        build=lambda a, c: HoldDrawing(now_ms=c.now_ms, serials=a["serials"], keys=a["keys"]),
    ),
    Op(
        name="reveal_card",
        aggregate=RAFFLE,
        access=MEMBER_IN_CHARGE,
        prepared=True,
        fields=(Field("position", _position), Field("card", _optional_str, required=False)),
        build=lambda a, c: RevealCard(now_ms=c.now_ms, position=a["position"], card=a["card"]),
    ),
    Op(
        name="try_key",
        aggregate=RAFFLE,
        access=MEMBER_IN_CHARGE,
        fields=(integer("key", 1, 2**31), typed("opened", bool)),
        build=lambda a, c: TryKey(now_ms=c.now_ms, key=a["key"], opened=a["opened"]),
    ),
    # A bell jar deal's stream (docs/PROTOCOL.md "Bell jar deals").
    Op(
        name="register_deal",
        aggregate=DEAL,
        access=MEMBER_IN_CHARGE,
        creates=True,
        fields=(
            choice("kind", KINDS),
            text("supplier"),
            text("supplier_license"),
            text("invoice_number"),
            text("invoice_date"),
            text("serial_number"),
            text("ticket_serial"),
            text("flare_serial"),
            text("invoice_serial"),
            text("form_number"),
            integer("ticket_count", 1, MAX_TICKETS_PER_DEAL),
            integer("ticket_price", 1, MAX_SAFE_AMOUNT_CENTS),
            integer("cost", 0, MAX_SAFE_AMOUNT_CENTS),
            Field("prizes", _prizes),
        ),
        build=_register_deal,
    ),
    Op(
        name="put_deal_in_play",
        aggregate=DEAL,
        access=MEMBER_IN_CHARGE,
        fields=(
            choice("container", CONTAINERS),
            Field("column", _optional_text, required=False, default=""),
            Field("commingle", _deal_ids, required=False, default=()),
        ),
        build=lambda a, c: PutDealInPlay(
            container=a["container"],
            column=a["column"],
            commingle=a["commingle"],
            now_ms=c.now_ms,
        ),
    ),
    Op(
        name="record_sale",
        aggregate=DEAL,
        access=DEAL_SELLERS,
        fields=(integer("count", 1, MAX_TICKETS_PER_DEAL), amount()),
        build=lambda a, c: RecordSale(
            count=a["count"], amount=a["amount"], seller=c.who.sub, now_ms=c.now_ms
        ),
    ),
    Op(
        name="redeem_ticket",
        aggregate=DEAL,
        access=DEAL_SELLERS,
        fields=(integer("prize", 0, 2**31), text("ticket")),
        build=lambda a, c: RedeemTicket(
            prize=a["prize"], ticket=a["ticket"], redeemed_by=c.who.sub, now_ms=c.now_ms
        ),
    ),
    Op(
        name="remove_deal",
        aggregate=DEAL,
        access=MEMBER_IN_CHARGE,
        build=lambda a, c: RemoveDeal(now_ms=c.now_ms),
    ),
    # The expense stream (docs/PROTOCOL.md "Expenses"; the GC-7's Part B, docs/FORMS.md).
    Op(
        name="record_expense",
        aggregate=EXPENSES_AGGREGATE,
        access=MEMBER_IN_CHARGE,
        fields=(
            text("payee"),
            free_text("address"),
            free_text("description"),
            amount(),
            choice("category", tuple(CATEGORIES)),
            choice("covers", COVERS, default="occasion"),
            Field("occasion", _occasion, required=False, default=None),
            Field("license_period", _license_period, required=False, default=None),
        ),
        build=_record_expense,
    ),
    # The purchaser vault (off-stream: personal data never enters the log; 4620.22(b)(7)).
    Op(
        name="register_purchaser",
        aggregate=VAULT,
        access=Roles(
            frozenset({"seller", "member_in_charge"}),
            "{op} is for sellers and the member in charge",
            "seller, member in charge",
        ),
        fields=(Field("account", lambda msg, n: parse_account(field(msg, n, dict))),),
        perform=offstream.register_purchaser,
    ),
    Op(
        name="erase_purchaser",
        aggregate=VAULT,
        access=MEMBER_IN_CHARGE,
        fields=(text("purchaser"),),
        perform=offstream.erase_purchaser,
    ),
    Op(
        name="load_self_exclusions",
        aggregate=VAULT,
        access=MEMBER_IN_CHARGE,
        fields=(
            Field("replace", _flag, required=False, default=False),
            Field("csv", lambda msg, n: parse_exclusion_csv(field(msg, n, str)), required=False),
            Field("entries", _entries, required=False),
        ),
        perform=offstream.load_self_exclusions,
    ),
)

OPS: Mapping[str, Op] = {op.name: op for op in OP_LIST}
"""Every op by name."""
if len(OPS) != len(OP_LIST):  # pragma: no cover - a declaration error, caught at import
    raise ValueError("an op is declared twice")


@dataclass(slots=True, kw_only=True)
class ParsedCommand:
    """A command ready for its actor: the stream, the domain command, the idempotency key
    (``<role>:<subject>/<id>``: ids are unique per client, and a client is a token's role
    and subject). Not frozen, as :class:`OpContext`; nothing changes one once made."""

    op: str
    id: str
    stream: str
    command: Any
    key: str
    fingerprint: str
    table: str | None
    raffle: str | None = None
    deal_id: str | None = None
    """The bell jar deal the op names (its stream ``deal:<id>``)."""
    location: Mapping[str, Any] | None = None
    """An online sale's reported location, to be sealed under the purchaser's key by the
    gateway (personal data: never logged, never in an event in clear)."""
    spec: Op | None = None
    """The op's declaration (:mod:`services.gateway.ops`)."""


def op_spec(msg: Mapping[str, Any]) -> Op:
    """The declared op a request names (``bad_request`` for a missing or unknown op)."""
    name = field(msg, "op", str)
    spec = OPS.get(name)
    if spec is None:
        raise ProtocolError("bad_request", f"unknown op {name!r}")
    return spec


def authorize(p: Principal, op: str, table: str | None, player: str | None) -> str | None:
    """Why ``p`` may not send ``op`` (the ``forbidden`` message), or None when it may: the
    op's declared :class:`Access`, at ``table`` for ``player`` where the op has them."""
    spec = OPS.get(op)
    if spec is None:
        return f"{op} is not allowed for {p.role}"
    return spec.access.denied(p, op, table, player)


def read_fields(spec: Op, msg: Mapping[str, Any], *, before_auth: bool) -> Args:
    """The op's fields read before (``before_auth``) or after authorization, checked."""
    args: Args = {}
    for f in spec.fields:
        if f.before_auth != before_auth:
            continue
        if f.only_if is not None and not f.only_if(msg):
            args[f.name] = f.default
        elif f.required or f.name in msg:
            args[f.name] = f.parse(msg, f.name)
        else:
            args[f.name] = f.default
    return args


def check_off_stream(spec: Op, msg: Mapping[str, Any], who: Principal) -> Args:
    """An off-stream op's id, authorization and fields, checked (ProtocolError)."""
    text_field(msg, "id")
    args = read_fields(spec, msg, before_auth=True)
    denied = authorize(who, spec.name, None, args.get("player"))
    if denied:
        raise ProtocolError("forbidden", denied)
    args.update(read_fields(spec, msg, before_auth=False))
    return args


def parse_command(
    msg: Mapping[str, Any],
    who: Principal,
    tables: frozenset[str] | set[str],
    raffles: frozenset[str] | set[str] = frozenset(),
    *,
    now_ms: int = 0,
    organization: str = "",
    occasion: str | None = None,
    deals: frozenset[str] | set[str] = frozenset(),
) -> ParsedCommand:
    """Turn a request for a stream op into a command for its actor, or raise ProtocolError:
    the op (``bad_request``), the id, the aggregate it names (``unknown_table``,
    ``unknown_raffle``), the fields authorization needs, the principal's right
    (``forbidden``), then the other fields, then its command."""
    spec = op_spec(msg)
    if spec.aggregate.off_stream:
        raise ProtocolError("bad_request", f"{spec.name} writes no event: not a stream op")
    command_id = text_field(msg, "id")
    target = spec.aggregate.target
    name = text_field(msg, target) if target else ""
    table, raffle = _aggregate_of(spec, name, tables, raffles, deals)
    args = read_fields(spec, msg, before_auth=True)
    denied = authorize(who, spec.name, table, args.get("player"))
    if denied:
        raise ProtocolError("forbidden", denied)
    args.update(read_fields(spec, msg, before_auth=False))
    ctx = OpContext(who=who, now_ms=now_ms, organization=organization, occasion=occasion)
    return _parsed(spec, command_id, name, table, raffle, args, ctx, fingerprint(msg))


def _aggregate_of(
    spec: Op,
    name: str,
    tables: frozenset[str] | set[str],
    raffles: frozenset[str] | set[str],
    deals: frozenset[str] | set[str] = frozenset(),
) -> tuple[str | None, str | None]:
    """The (table, raffle) the op's target field names, checked (``unknown_table``,
    ``unknown_raffle``, ``unknown_deal``, or ``bad_request`` for a new raffle's or deal's
    id)."""
    target = spec.aggregate.target
    if target == "table":
        if name not in tables:
            raise ProtocolError("unknown_table", f"no table {name!r} tonight")
        return name, None
    if target == "raffle":
        if spec.creates:
            if not ID_PATTERN.match(name):
                raise ProtocolError("bad_request", f"raffle ids must match {ID_PATTERN.pattern}")
        elif name not in raffles:
            raise ProtocolError("unknown_raffle", f"no raffle {name!r}")
        return None, name
    if target == "deal":
        if spec.creates:
            if not ID_PATTERN.match(name):
                raise ProtocolError("bad_request", f"deal ids must match {ID_PATTERN.pattern}")
        elif name not in deals:
            raise ProtocolError("unknown_deal", f"no deal {name!r}")
        return None, None
    return None, None


def _parsed(
    spec: Op,
    command_id: str,
    name: str,
    table: str | None,
    raffle: str | None,
    args: Args,
    ctx: OpContext,
    fingerprint: str,
) -> ParsedCommand:
    assert spec.build is not None and spec.aggregate.stream is not None
    who = ctx.who
    return ParsedCommand(
        op=spec.name,
        id=command_id,
        stream=spec.aggregate.stream(name),
        command=spec.build(args, ctx),
        key=idempotency_key(who.role, who.sub, command_id),
        fingerprint=fingerprint,
        table=table,
        raffle=raffle,
        deal_id=name if spec.aggregate.target == "deal" else None,
        location=args.get(spec.location) if spec.location else None,
        spec=spec,
    )


# The typed decoder: one pass over a frame for the common, well-formed command.
#
# Each stream op whose fields all declare a ``typed`` reading gets a msgspec Struct derived
# from its declaration (the ``op`` field its tag, unknown fields refused), and one decoder
# reads a frame straight into the Struct of its op, checking types, lengths and ranges in
# C. It only ever accepts: a frame it cannot take whole (any error, an unknown field, a
# float, a control character, a wide or deep frame, a forbidden or unknown target...)
# goes to :func:`parse_command` after ``json.loads``, which gives every refusal its code
# and message as before. So the typed path gives the same command as the exact path or
# none at all.

FAST_FRAME_CHARS = MAX_JSON_CONTAINERS
"""Longest frame the typed decoder reads: no frame this short can hold more arrays,
objects or commas than a request may (``protocol.MAX_JSON_CONTAINERS``,
``MAX_JSON_COMMAS``), so the width check has nothing to refuse (a bet frame has ~120)."""


@dataclass(frozen=True, slots=True)
class _Typed:
    spec: Op
    target: str | None
    fields: tuple[Field, ...]
    texts: tuple[str, ...]
    """``id`` and the target: id-like texts, checked for control characters after
    decoding (as the fields declared ``text``)."""


def _typed_ops() -> tuple[msgspec.json.Decoder[Any] | None, dict[type, _Typed]]:
    structs: dict[type, _Typed] = {}
    for spec in OP_LIST:
        fields = spec.fields
        if (
            spec.aggregate.off_stream
            or spec.location is not None
            or any(f.typed is None or f.only_if is not None for f in fields)
        ):
            continue
        target = spec.aggregate.target
        members: list[tuple[str, Any] | tuple[str, Any, Any]] = [("id", _Text)]
        if target:
            members.append((target, _Text))
        for f in fields:
            if f.required:
                members.append((f.name, f.typed))
            else:
                members.append((f.name, f.typed | msgspec.UnsetType, msgspec.UNSET))
        struct = msgspec.defstruct(
            f"Typed_{spec.name}",
            members,
            tag_field="op",
            tag=spec.name,
            forbid_unknown_fields=True,
            kw_only=True,
        )
        texts = ("id", target) if target else ("id",)
        structs[struct] = _Typed(spec, target, fields, texts)
    if not structs:  # pragma: no cover - every registry has typed ops
        return None, structs
    union = Union[tuple(structs)]  # type: ignore[valid-type]  # noqa: UP007
    return msgspec.json.Decoder(union), structs


_DECODER, _TYPED_OPS = _typed_ops()


def parse_frame(
    text: str,
    who: Principal,
    tables: frozenset[str] | set[str],
    raffles: frozenset[str] | set[str] = frozenset(),
    *,
    now_ms: int = 0,
    organization: str = "",
    occasion: str | None = None,
    deals: frozenset[str] | set[str] = frozenset(),
) -> ParsedCommand | None:
    """The command a well-formed request frame asks, decoded in one pass: exactly what
    ``parse_command(parse_json(text), ...)`` gives it, or None when the frame is not one
    the typed decoder takes (then the exact path answers it, refusals included)."""
    if _DECODER is None or len(text) > FAST_FRAME_CHARS:
        return None
    try:
        decoded = _DECODER.decode(text)
    except (msgspec.DecodeError, UnicodeEncodeError):
        return None  # ValidationError is a DecodeError
    typed = _TYPED_OPS[type(decoded)]
    for name in typed.texts:
        if has_control(getattr(decoded, name)):
            return None
    spec = typed.spec
    target = typed.target
    name = getattr(decoded, target) if target else ""
    try:
        table, raffle = _aggregate_of(spec, name, tables, raffles, deals)
    except ProtocolError:
        return None
    body: dict[str, Any] = {"op": spec.name}
    if target:
        body[target] = name
    args: Args = {}
    for f in typed.fields:
        value = getattr(decoded, f.name)
        if value is msgspec.UNSET:
            args[f.name] = f.default
        elif f.text and has_control(value):
            return None
        else:
            args[f.name] = body[f.name] = value
    if spec.access.denied(who, spec.name, table, args.get("player")):
        return None
    ctx = OpContext(who=who, now_ms=now_ms, organization=organization, occasion=occasion)
    try:
        return _parsed(spec, decoded.id, name, table, raffle, args, ctx, typed_fingerprint(body))
    except ProtocolError:
        return None  # a builder's own refusal (too many cards...): the exact path says it

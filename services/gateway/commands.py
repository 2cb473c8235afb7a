"""Commands: one dispatch for the websocket and HTTP paths, driven by the op registry.

:func:`submit_command` checks a request against its op's declaration
(:mod:`services.gateway.ops`) and queues its command for the aggregate's actor, or, for an
off-stream op (the purchaser vault, the tokens), performs it in the background; either way
the caller gets one future with the one reply (and, if it asks, a callback with it).
:func:`submit_frame` is the websocket's typed path: a well-formed command frame decoded in
one pass and queued the same way; any other frame is left to :func:`submit_command`.

Raffle commands that need the store first (an online purchaser; a reveal on a Queen of
Hearts board dealt before the board moved into its event) are prepared before they are
queued. The gateway draws nothing: a raffle's
actor deals its board and draws its winners. A bell jar deal's command takes its steps on
other streams (a combination's other deals, the serial registry) around its own
(:mod:`services.deal_steps`).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import time
from collections.abc import Callable
from typing import Any

import structlog

from services import deal_steps
from services.actor import STORE_ERRORS, Reply, error_reply
from services.aggregates import EXPENSES, RuleError
from services.bell_jars.state import RegisterDeal
from services.cluster.forward import Message, Routed
from services.gateway.auth import Principal
from services.gateway.ops import (
    OPS,
    Op,
    ParsedCommand,
    check_off_stream,
    op_spec,
    parse_command,
    parse_frame,
)
from services.gateway.protocol import ProtocolError
from services.license import occasion_open
from services.raffles import board
from services.raffles.state import RaffleState, RevealCard, SellTicket, SetupRaffle
from services.raffles.vault import VaultError
from services.runtime import Runtime
from services.tables.rules import TableState
from services.tasks import CALLBACK_CONTEXT

log = structlog.get_logger(__name__)


def _resolved(reply: Reply) -> asyncio.Future[Reply]:
    done: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
    done.set_result(reply)
    return done


_BACKGROUND: set[asyncio.Task[None]] = set()
"""Commands being prepared or performed off the streams (vault, stored board and token
look-ups)."""


def _in_background(coro: Any) -> None:
    task = asyncio.get_running_loop().create_task(coro)
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


async def dispatch(runtime: Runtime, who: Principal, msg: dict[str, Any]) -> Reply:
    """Run one command for ``who`` and return its one reply (without ``re``)."""
    return await submit_command(runtime, who, msg)


Then = Callable[[Reply], None]
"""Called with a command's one reply when it is known (the websocket writes it)."""


def submit_command(
    runtime: Runtime,
    who: Principal,
    msg: dict[str, Any],
    hops: int = 0,
    then: Then | None = None,
) -> asyncio.Future[Reply]:
    """Check one command for ``who`` and queue it for its actor; the future is its one
    reply (without ``re``), counted in the metrics and, when refused, logged, and handed
    to ``then`` too when given. A table's and the cage's commands are refused
    (``occasion_closed``) outside the night's occasion window; raffles and off-stream ops
    are not bound by it. A command for a stream whose actor runs in another server process
    is checked here, then sent there (``hops``: how many times it was forwarded already;
    ``services.cluster``)."""
    started = time.perf_counter()
    op = msg.get("op")
    now_ms = time.time_ns() // 1_000_000
    try:
        spec = op_spec(msg)
        if spec.aggregate.off_stream:
            return _off_stream_command(runtime, who, spec, msg, started, then)
        parsed = parse_command(
            msg,
            who,
            runtime.table_ids,
            runtime.supervisor.raffles,
            now_ms=now_ms,
            organization=runtime.night.organization_name,
            occasion=runtime.night.occasion,
            deals=runtime.supervisor.deals,
        )
        night = runtime.night
        if spec.aggregate.occasion_bound and not occasion_open(
            night.occasion_starts_at, night.occasion_ends_at, now_ms
        ):
            raise ProtocolError(
                "occasion_closed",
                f"the occasion {night.occasion} is not open now; games run only during it",
            )
    except ProtocolError as e:
        runtime.metrics.answered(op if isinstance(op, str) and op in OPS else "invalid", e.code)
        refusal = error_reply(e.code, e.message)
        if then is not None:
            then(refusal)
        return _resolved(refusal)
    return _queue(runtime, who, parsed, started, then, msg, hops)


def submit_frame(runtime: Runtime, who: Principal, text: str, then: Then) -> str | None:
    """The typed path of a websocket frame (:func:`services.gateway.ops.parse_frame`): a
    well-formed command the principal may send, in the occasion's window, is queued for
    its actor at once (its reply goes to ``then``) and its id returned; any other frame
    returns None, and :func:`submit_command` answers it after ``json.loads``."""
    started = time.perf_counter()
    now_ms = time.time_ns() // 1_000_000
    night = runtime.night
    parsed = parse_frame(
        text,
        who,
        runtime.table_ids,
        runtime.supervisor.raffles,
        now_ms=now_ms,
        organization=night.organization_name,
        occasion=night.occasion,
        deals=runtime.supervisor.deals,
    )
    if parsed is None:
        return None
    assert parsed.spec is not None
    if parsed.spec.aggregate.occasion_bound and not occasion_open(
        night.occasion_starts_at, night.occasion_ends_at, now_ms
    ):
        return None
    _queue(runtime, who, parsed, started, then, text, 0)
    return parsed.id


def _queue(
    runtime: Runtime,
    who: Principal,
    parsed: ParsedCommand,
    started: float,
    then: Then | None,
    msg: Message,
    hops: int,
) -> asyncio.Future[Reply]:
    """Queue a checked command for its actor (or its raffle preparation); one callback
    counts, logs and hands on its reply, and the deadline answers it if nothing else does."""
    spec = parsed.spec
    assert spec is not None
    command = parsed.command
    state = runtime.supervisor.table_state(parsed.table) if parsed.table else None
    if isinstance(command, SetupRaffle) and parsed.raffle is not None:
        runtime.supervisor.ensure_raffle(parsed.raffle)
    if isinstance(command, RegisterDeal) and parsed.deal_id is not None:
        runtime.supervisor.ensure_deal(parsed.deal_id)
    if parsed.stream == EXPENSES:
        runtime.supervisor.follow(EXPENSES)  # the stream is made at the first expense
    answered = _Answered(runtime, who, parsed, state, started, then)
    future: asyncio.Future[Reply] | None = runtime.route(parsed.stream, who, msg, hops)
    if future is not None:
        pass  # another process runs the stream: it answers
    elif parsed.deal_id is not None:
        future = asyncio.get_running_loop().create_future()
        _in_background(_deal_command(runtime, who, parsed, future, msg, hops))
    elif spec.prepared and _needs_lookup(runtime, parsed):
        future = asyncio.get_running_loop().create_future()
        _in_background(_prepare_raffle(runtime, who, parsed, future, msg, hops))
    else:
        # The actor runs the callback itself when it answers (services.actor.answer).
        future = _submit(runtime, who, parsed, command, msg, hops, on_answer=answered)

    future.add_done_callback(answered, context=CALLBACK_CONTEXT)
    runtime.deadlines.watch(future)
    return future


class _Answered:
    """A queued command's reply, when its future has it: counted, logged when refused,
    handed on (``then``). (An object rather than a closure: one allocation per command.)"""

    __slots__ = ("parsed", "runtime", "started", "state", "then", "who")

    def __init__(
        self,
        runtime: Runtime,
        who: Principal,
        parsed: ParsedCommand,
        state: Any,
        started: float,
        then: Then | None,
    ) -> None:
        self.runtime = runtime
        self.who = who
        self.parsed = parsed
        self.state = state
        self.started = started
        self.then = then

    def __call__(self, f: asyncio.Future[Reply]) -> None:
        if f.cancelled() or f.exception() is not None:
            reply = error_reply("internal", "internal error; retry the same command id")
        else:
            reply = f.result()
        if self.then is not None:
            self.then(reply)
        parsed = self.parsed
        code = "ok" if reply["ok"] else reply["error"]["code"]
        self.runtime.metrics.answered(parsed.op, code, time.perf_counter() - self.started)
        if not reply["ok"]:
            self._refused(code)

    def _refused(self, code: str) -> None:
        runtime, parsed, command = self.runtime, self.parsed, self.parsed.command
        if isinstance(command, SetupRaffle) and parsed.raffle is not None:
            # a refused setup leaves no actor behind (once it is back to waiting)
            _in_background(runtime.supervisor.forget_unopened_raffle(parsed.raffle))
        if isinstance(command, RegisterDeal) and parsed.deal_id is not None:
            _in_background(deal_steps.forget_unregistered(runtime.supervisor, parsed.deal_id))
        state = self.state
        log.info(
            "command_refused",
            code=code,
            command_id=parsed.id,
            op=parsed.op,
            table=parsed.table,
            raffle=parsed.raffle,
            deal=parsed.deal_id,
            round=state.round if isinstance(state, TableState) else None,
            sub=self.who.sub,
        )


def _submit(
    runtime: Runtime,
    who: Principal,
    parsed: ParsedCommand,
    command: Any,
    msg: Message,
    hops: int,
    on_answer: Callable[[asyncio.Future[Reply]], None] | None = None,
) -> asyncio.Future[Reply]:
    # ``Routed`` keeps the request: if the stream moves to another process before the
    # command is applied, it is sent there (services.cluster).
    return runtime.supervisor.submit_nowait(
        parsed.stream,
        Routed(
            key=parsed.key,
            fingerprint=parsed.fingerprint,
            command_id=parsed.id,
            actor=f"{who.role}:{who.sub}",
            command=command,
            on_answer=on_answer,
            who=who,
            msg=msg,
            hops=hops,
        ),
    )


async def _deal_command(
    runtime: Runtime,
    who: Principal,
    parsed: ParsedCommand,
    future: asyncio.Future[Reply],
    msg: Message,
    hops: int,
) -> None:
    """A deal's command with its steps on other streams
    (:mod:`services.deal_steps`)."""
    assert parsed.deal_id is not None

    def submit(command: Any) -> asyncio.Future[Reply]:
        return _submit(runtime, who, parsed, command, msg, hops)

    try:
        steps = deal_steps.Steps(runtime.supervisor, take=runtime.cluster.take_if_free)
        reply = await steps.run(parsed.deal_id, parsed.command, submit)
    except Exception as e:
        log.error("deal_command_failed", op=parsed.op, error=type(e).__name__)
        reply = error_reply("internal", "internal error; retry the same command id")
    if not future.done():
        future.set_result(reply)


# The raffle preparation: what only the server may look up before a raffle's actor sees
# its command (the ops declared ``prepared``).


def _stored_board(runtime: Runtime, raffle: str) -> bool:
    """Whether the raffle's server board is kept in Redis: dealt before ``RaffleOpened``
    version 2, which seals the board in the event (the raffle's actor opens that one)."""
    state = runtime.supervisor.raffle_state(raffle)
    return (
        isinstance(state, RaffleState)
        and state.config.get("board", {}).get("mode") == "server"
        and not state.sealed_board
    )


def _needs_lookup(runtime: Runtime, parsed: ParsedCommand) -> bool:
    """Whether a raffle command needs the store before its actor sees it (see
    :func:`_raffle_command`); every other command is queued at once, in arrival order."""
    command = parsed.command
    if isinstance(command, RevealCard):
        return parsed.raffle is not None and _stored_board(runtime, parsed.raffle)
    return isinstance(command, SellTicket) and command.online is not None


async def _stored_card(runtime: Runtime, raffle: str, command: RevealCard) -> RevealCard:
    """A reveal on a board kept in Redis (see :func:`_stored_board`): the position's card
    and salt read from there, for the rules to check against the commitment."""
    found = await board.position(
        runtime.store.redis, runtime.legacy_board_key, runtime.store.org, raffle, command.position
    )
    if found is not None:
        command = dataclasses.replace(command, card=found[0], salt=found[1])
    return command


async def _raffle_command(runtime: Runtime, parsed: ParsedCommand) -> Any:
    """The raffle command with what only the server may look up: a board kept in Redis
    (:func:`_stored_card`) and an online purchaser's account, self-exclusion and sealed
    location (4620.22(b)(7)).

    The account is personal data: it goes into the command in memory, for the pure rules
    to check, and nowhere else."""
    command = parsed.command
    raffle = parsed.raffle
    assert raffle is not None
    if isinstance(command, RevealCard):
        return await _stored_card(runtime, raffle, command)
    if isinstance(command, SellTicket) and command.online is not None:
        vault = runtime.vault
        purchaser = command.online.purchaser
        account = await vault.get(purchaser)
        sealed = ""
        excluded = False
        if account is not None:
            excluded = await vault.is_account_excluded(account)
            blob = await vault.seal(purchaser, dict(parsed.location or {}))
            sealed = base64.b64encode(blob).decode()
        online = dataclasses.replace(
            command.online, account=account, excluded=excluded, location_sealed=sealed
        )
        command = dataclasses.replace(command, online=online)
    return command


async def _prepare_raffle(
    runtime: Runtime,
    who: Principal,
    parsed: ParsedCommand,
    future: asyncio.Future[Reply],
    msg: Message,
    hops: int,
) -> None:
    try:
        command = await _raffle_command(runtime, parsed)
        reply = await _submit(runtime, who, parsed, command, msg, hops)
    except RuleError as e:
        reply = error_reply(e.code, e.message)
    except board.BoardUnreadable:
        # Not transient: the server's secret changed, or the stored board was altered.
        log.error("raffle_board_unreadable", raffle=parsed.raffle)
        reply = error_reply(
            "board_unreadable",
            "the stored board cannot be opened with this server's secret; nothing was revealed",
        )
    except (VaultError, OSError, ConnectionError) as e:
        log.warning("raffle_prepare_failed", op=parsed.op, error=type(e).__name__)
        reply = error_reply("unavailable", "the store is unreachable; retry the same command id")
    except Exception as e:
        # The type only: the command may hold a purchaser's account (personal data), and
        # an exception's text or traceback must not carry any of it into the log.
        log.error("raffle_prepare_failed", op=parsed.op, error=type(e).__name__)
        reply = error_reply("internal", "internal error; retry the same command id")
    if not future.done():
        future.set_result(reply)


# The off-stream ops (the purchaser vault, the tokens).

_UNREACHABLE: tuple[type[BaseException], ...] = (VaultError, ConnectionError, *STORE_ERRORS)
"""What an off-stream op's store or vault raises when it cannot be reached: ``unavailable``."""


def _off_stream_command(
    runtime: Runtime,
    who: Principal,
    spec: Op,
    msg: dict[str, Any],
    started: float,
    then: Then | None = None,
) -> asyncio.Future[Reply]:
    """An op that writes no event: checked (id, role, fields), then ``perform``ed in the
    background; its one reply is the future, by the deadline too. Not recorded for
    idempotency (a vault op's message carries personal data, which the command results
    never keep; revoking again changes nothing). A failure is logged with the exception's
    type only (no log line may hold personal data)."""
    op = spec.name
    failure = "vault_op_failed" if spec.aggregate.name == "purchaser vault" else "token_op_failed"
    future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
    assert spec.perform is not None
    perform = spec.perform

    async def run() -> None:
        try:
            args = check_off_stream(spec, msg, who)
            reply: Reply = {"ok": True, "result": await perform(runtime, who, args)}
        except (ProtocolError, RuleError) as e:
            reply = error_reply(e.code, e.message)
        except _UNREACHABLE as e:
            log.warning(failure, op=op, error=type(e).__name__)
            reply = error_reply("unavailable", "the store is unreachable; retry")
        except Exception as e:
            log.error(failure, op=op, error=type(e).__name__)
            reply = error_reply("internal", "internal error")
        code = "ok" if reply["ok"] else reply["error"]["code"]
        runtime.metrics.answered(op, code, time.perf_counter() - started)
        if not reply["ok"]:
            log.info("command_refused", code=code, op=op, sub=who.sub)  # never the message
        if not future.done():  # the deadline may have answered it
            future.set_result(reply)

    _in_background(run())
    if then is not None:
        future.add_done_callback(lambda f: then(f.result()))
    runtime.deadlines.watch(future)
    return future

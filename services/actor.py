"""The aggregate actor: the only writer of one stream, with a bounded mailbox.

On start it folds its stream into state. Then, for each batch of queued commands
(group commit): ``decide`` each command against the state so far → append all their events
in one script call, which also refuses a retried command id and an overdraft (then the
actor reads the stored replies and balances, answers the retries and decides the rest
again) → publish → reply. The state moves only after the store acknowledged the append;
if the store's answer is lost (Redis died mid-call), the actor reloads from the stream
before its next batch, and the client's retry with the same command id finds the stored
result.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import structlog

from events.base import Event
from events.envelope import Envelope, event_id, seal
from services.aggregates import RuleError
from services.mailbox import FairMailbox, MailboxFull
from services.store.redis_store import (
    Appended,
    BalanceMove,
    CommandWrite,
    DuplicateCommand,
    EventStore,
    Fenced,
    Head,
    InsufficientFunds,
    VersionConflict,
    pack_result,
    unpack_result,
)
from services.store.replication import STORE_UNAVAILABLE, NotReplicated

log = structlog.get_logger(__name__)

S = TypeVar("S")
C = TypeVar("C")
C_contra = TypeVar("C_contra", contravariant=True)

Reply = dict[str, Any]
"""``{"ok": true, "result": {...}}`` or ``{"ok": false, "error": {"code", "message"}}``."""

MAX_BATCH = 64
"""Commands one append may carry (group commit)."""
MAX_ATTEMPTS = 8
"""Version conflicts one batch may meet before it fails as ``busy`` (retry the same id)."""
STORE_ERRORS = STORE_UNAVAILABLE
"""The store is unreachable, slow, failing over, or its replicas did not confirm an append:
the fate of an append is unknown."""


def _unavailable(error: BaseException) -> str:
    """The message of an ``unavailable`` reply after a store fault."""
    if isinstance(error, NotReplicated):
        return str(error)  # "not confirmed on N replicas (...); retry the same id"
    return "the event store is unreachable; retry the same command id"


MOVED = "ownership of this stream moved to another server process; retry the same id"
"""The ``unavailable`` message of a command whose stream changed owner before it was
applied (nothing of it was)."""


class FencedOut(Exception):
    """The append script refused the actor's append: its lease is no longer the stream's
    (another process owns the stream now). Nothing of the batch was written."""

    def __init__(self, holder: str) -> None:
        super().__init__(holder)
        self.holder = holder


def error_reply(code: str, message: str) -> Reply:
    return {"ok": False, "error": {"code": code, "message": message}}


class Rules(Protocol[S, C_contra]):
    """The pure rules an actor runs: its aggregate's decide/evolve and what they imply."""

    def initial(self, stream: str) -> S: ...

    def decide(self, state: S, command: C_contra) -> list[Event]: ...

    def evolve(self, state: S, event: Event) -> S: ...

    def correlation(self, state: S) -> str | None: ...

    def moves(self, events: Sequence[Event]) -> list[tuple[str, int]]: ...

    def debtors(self, state: S, command: C_contra) -> Sequence[str]:
        """Players whose balance the command may debit at ``state`` (read when an
        overdraft was met)."""
        ...

    def result(self, state: S, envelopes: Sequence[Envelope]) -> dict[str, Any]: ...


@dataclass(slots=True, kw_only=True)
class Submission(Generic[C]):
    """A command on its way to an actor, with who sent it and its idempotency key."""

    key: str
    fingerprint: str
    command_id: str
    actor: str
    command: C
    future: asyncio.Future[Reply] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    on_answer: Callable[[asyncio.Future[Reply]], None] | None = field(default=None, repr=False)
    """The future's done callback, if it has one that the actor may run itself, at once,
    when it answers (:func:`answer`): the reply is then handed on in the actor's own turn
    rather than a turn of the event loop later (each turn a few milliseconds when the
    loop is busy). Whatever else answers the future leaves it to run as a done callback."""
    identity: int = field(init=False, repr=False)
    """:func:`command_identity` of its sender and id (0 for the server's own commands)."""

    def __post_init__(self) -> None:
        self.identity = command_identity(self.actor, self.command_id) if self.key else 0


def answer(sub: Submission[Any], reply: Reply) -> None:
    """Answer a submission not answered yet: set its future's result and run its
    :attr:`~Submission.on_answer` now (taken off the future's done callbacks first, so it
    runs once). A fault of that callback is logged; it never fails the actor's batch."""
    future = sub.future
    if future.done():
        return
    hook = sub.on_answer
    if hook is None:
        future.set_result(reply)
        return
    future.remove_done_callback(hook)
    future.set_result(reply)
    try:
        hook(future)
    except Exception:
        log.exception("reply_not_handed_on", command_id=sub.command_id)


SYSTEM = "system"
"""The ``actor`` of the server's own commands (no idempotency key)."""


def command_identity(actor: str, causation: str) -> int:
    """A 64-bit digest of who sent a command and its id (an envelope's ``actor`` and
    ``causation``): what the actor remembers of every command that caused events."""
    digest = hashlib.blake2b(
        f"{actor}\x00{causation}".encode(errors="surrogatepass"), digest_size=8
    )
    return int.from_bytes(digest.digest(), "big")


class Actor(Generic[S, C]):
    """One aggregate's single writer."""

    def __init__(
        self,
        store: EventStore,
        stream: str,
        rules: Rules[S, C],
        *,
        publish: Callable[[Sequence[Envelope]], None],
        mailbox_size: int = 1024,
        clock: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        on_batch: Callable[[int, float], None] | None = None,
    ) -> None:
        self.store = store
        self.stream = stream
        self.rules = rules
        self.publish = publish
        self.clock = clock
        self.mailbox: FairMailbox[Submission[C]] = FairMailbox(mailbox_size)
        self.applied: set[int] = set()
        """:func:`command_identity` of every client command that caused events in this
        stream: such a command is never applied again, even if its stored reply is gone."""
        self.state: S = rules.initial(stream)
        self.head = Head(0)
        self.stale = True
        self.on_batch = on_batch
        self.idle = False
        """True while the actor waits for its next command (nothing in hand)."""
        self._log = log.bind(stream=stream)
        self.lease = ""
        """The stream's lease value this process holds (``services.cluster``), sent with
        every append; '' for no lease (allowed only while the stream has none)."""
        self.on_fenced: Callable[[list[Submission[C]]], None] | None = None
        """Called once, when an append is fenced, with every unanswered submission (the
        batch's and the queued ones), and takes them over (each still gets exactly one
        reply): the actor has stopped, and nothing of them was applied."""
        self.fenced = False

    async def load(self) -> None:
        """Fold every event not yet folded (all of them at start)."""
        since = self.head.version
        while True:
            page = await self.store.read(self.stream, since=since, limit=1000)
            for env in page:
                self.state = self.rules.evolve(self.state, env.event())
                self.head = Head(env.seq, env.hash)
                self._remember(env)
            since = self.head.version
            if len(page) < 1000:
                break
        self.stale = False

    def _remember(self, env: Envelope) -> None:
        if env.actor != SYSTEM:
            self.applied.add(command_identity(env.actor, env.causation))

    def submit_nowait(self, submission: Submission[C]) -> asyncio.Future[Reply]:
        """Queue a command in its sender's turn (MailboxFull when the mailbox is full)."""
        try:
            self.mailbox.put_nowait(submission.actor, submission)
        except MailboxFull:
            raise MailboxFull(self.stream) from None
        return submission.future

    async def run(self) -> None:
        """Process the mailbox until cancelled; then answer whatever is still queued."""
        try:
            await self._run()
        finally:
            queued = self.mailbox.take(self.mailbox.qsize())
            if self.fenced:
                self._fail(queued, "unavailable", MOVED)
            else:
                self._fail(queued, "unavailable", "the server is shutting down; retry the same id")

    async def _run(self) -> None:
        while True:
            self.idle = True
            batch = await self.mailbox.get(MAX_BATCH)
            self.idle = False
            started = time.perf_counter()
            try:
                await self._process(batch)
            except FencedOut as e:
                self._stop_fenced(e, batch)
                return
            except STORE_ERRORS as e:
                # The append's fate is unknown: reload before the next batch; the client's
                # retry with the same command id learns what happened.
                self.stale = True
                self._log.warning("store_unavailable", error=str(e))
                self._fail(batch, "unavailable", _unavailable(e))
            except asyncio.CancelledError:
                self._fail(
                    batch, "unavailable", "the server is shutting down; retry the same command id"
                )
                raise
            except Exception:
                self.stale = True
                self._log.exception("actor_batch_failed", commands=len(batch))
                try:
                    await self._one_by_one(batch)
                except FencedOut as e:
                    self._stop_fenced(e, batch)
                    return
            if self.on_batch is not None:
                try:
                    self.on_batch(len(batch), time.perf_counter() - started)
                except Exception:  # what follows a batch never stops the actor
                    self._log.exception("on_batch_failed")

    def _stop_fenced(self, error: FencedOut, batch: list[Submission[C]]) -> None:
        """Another process owns the stream now: stop writing. Nothing of the batch was
        applied; its unanswered commands go to :attr:`on_fenced` (the new owner), and
        whatever that leaves unanswered gets ``unavailable``."""
        self.fenced = True
        self.stale = True
        self._log.warning("append_fenced", holder=error.holder, commands=len(batch))
        queued = self.mailbox.take(self.mailbox.qsize())
        unanswered = [s for s in (*batch, *queued) if not s.future.done()]
        if self.on_fenced is not None:
            self.on_fenced(unanswered)
        else:
            self._fail(unanswered, "unavailable", MOVED)

    async def _one_by_one(self, batch: list[Submission[C]]) -> None:
        """After a batch failed for no reason of the store: try each of its commands alone,
        so that one command's fault fails that command only."""
        for sub in batch:
            if sub.future.done():
                continue
            try:
                await self._process([sub])
            except FencedOut:
                raise
            except STORE_ERRORS as e:
                self.stale = True
                self._log.warning("store_unavailable", error=str(e))
                self._fail([sub], "unavailable", _unavailable(e))
            except asyncio.CancelledError:
                self._fail(batch, "unavailable", "the server is shutting down; retry the same id")
                raise
            except Exception:
                self.stale = True
                self._log.exception("command_failed", command_id=sub.command_id)
                self._fail([sub], "internal", "internal error; retry the same command id")

    @staticmethod
    def _resolve(batch: Sequence[Submission[C]], replies: dict[int, Reply]) -> None:
        for i, reply in replies.items():
            answer(batch[i], reply)

    @staticmethod
    def _fail(batch: Sequence[Submission[C]], code: str, message: str) -> None:
        for sub in batch:
            if not sub.future.done():
                answer(sub, error_reply(code, message))

    async def _process(self, batch: list[Submission[C]]) -> None:
        """Decide and append a batch in one script call when all goes well.

        The first attempt reads nothing before deciding: the append script itself refuses a
        retried command id (``duplicate``) and an overdraft (``insufficient``). Only then
        does the actor read the stored replies and the balances (one round trip), answer the
        retries, refuse what the balances cannot cover, and decide the rest again.
        """
        refused: dict[int, Reply] = {}
        conflicts = 0
        # A command that already caused events here is answered from its stored reply:
        # read the replies first (a retry that the append script would find anyway).
        look_up = any(sub.identity in self.applied for sub in batch if sub.key)
        while conflicts < MAX_ATTEMPTS:
            if self.stale:
                await self.load()
                # The reload may have found commands of this batch applied (an append whose
                # answer was lost): answer those from their stored replies.
                look_up = look_up or any(sub.identity in self.applied for sub in batch if sub.key)
            balances: dict[str, int] | None = None
            if look_up:
                pending, duplicates, balances = await self._answer_retries(batch)
            else:
                pending, duplicates = _first_of_each_key(batch)
            writes, replies, envelopes, state = self._decide_all(
                batch, pending, duplicates, refused, balances
            )
            if not writes:
                self._resolve(batch, replies)
                return
            outcome = await self.store.append(
                self.stream, self.head, [w for _i, w in writes], self.lease
            )
            if isinstance(outcome, Appended):
                for env, log_id in zip(envelopes, outcome.log_ids, strict=True):
                    env.with_log_id(log_id)
                self.state = state
                if envelopes:
                    self.head = Head(envelopes[-1].seq, envelopes[-1].hash)
                self.applied.update(
                    batch[i].identity for i, w in writes if w.events and batch[i].key
                )
                self.publish(envelopes)
                self._resolve(batch, replies)
                return
            if isinstance(outcome, InsufficientFunds):
                # Refuse this command; read the balances and decide the rest again (bounded
                # by the batch's size, as each round refuses one more command).
                index = writes[outcome.index][0]
                refused[index] = _insufficient(outcome.player)
                look_up = True
                continue
            if isinstance(outcome, Fenced):
                raise FencedOut(outcome.holder)
            if isinstance(outcome, DuplicateCommand):
                look_up = True  # a retry of an applied command: answer it from its reply
                continue
            # Another writer moved the stream: reload it and decide again.
            assert isinstance(outcome, VersionConflict)
            self._log.warning("append_conflict", outcome=repr(outcome))
            self.stale = True
            look_up = True
            conflicts += 1
        self._fail(batch, "busy", "the stream kept moving under this command; retry it")

    async def _answer_retries(
        self, batch: list[Submission[C]]
    ) -> tuple[list[int], dict[int, int], dict[str, int]]:
        """Reply to commands already applied (same key); read the balances they may debit.

        Returns the indexes still to decide, the in-batch repeats of a key (index -> index
        of its first occurrence, which get the first one's reply) and the balances.
        """
        debtors = {p for sub in batch for p in self.rules.debtors(self.state, sub.command)}
        stored, balances = await self.store.lookup([s.key for s in batch], sorted(debtors))
        for sub, raw in zip(batch, stored, strict=True):
            if raw is not None and not sub.future.done():
                fingerprint, reply = unpack_result(raw)
                answer(sub, _retry_reply(sub, fingerprint, reply))
        pending, duplicates = _first_of_each_key(batch)
        return pending, duplicates, balances

    def _decide_all(
        self,
        batch: list[Submission[C]],
        pending: list[int],
        duplicates: dict[int, int],
        refused: dict[int, Reply],
        balances: dict[str, int] | None,
    ) -> tuple[list[tuple[int, CommandWrite]], dict[int, Reply], list[Envelope], S]:
        """Decide each pending command against the state so far; seal and encode its
        events and reply.

        Each command is decided, sealed and encoded on its own: one that fails (a rule
        refusal, data that cannot be encoded, a fault) gets its own reply and leaves the
        state and the batch as they were before it. With ``balances`` read, a command whose
        debits they cannot cover is refused here with ``insufficient_funds`` (the append
        script guards again, atomically). A client command that already caused events in
        this stream, with no stored reply found, is refused with ``already_applied``.
        """
        state = self.state
        head = self.head
        writes: list[tuple[int, CommandWrite]] = []
        replies: dict[int, Reply] = {}
        envelopes: list[Envelope] = []
        for i in pending:
            sub = batch[i]
            if sub.key and sub.identity in self.applied:
                self._log.error("idempotency_record_missing", command_id=sub.command_id)
                replies[i] = _already_applied(sub)
                continue
            try:
                decided = self._decide_one(sub, state, head, refused.get(i), balances)
            except Exception as e:
                replies[i] = self._faulted(sub, e)
                continue
            reply, write, sealed, state, head, moves = decided
            if balances is not None:
                for player, delta in moves:
                    if player in balances:  # a balance not read is the append script's
                        balances[player] += delta
            writes.append((i, write))
            envelopes += sealed
            replies[i] = reply
        for dup, first in duplicates.items():
            if first in replies:
                replies[dup] = _retry_reply(batch[dup], batch[first].fingerprint, replies[first])
        return writes, replies, envelopes, state

    def _decide_one(
        self,
        sub: Submission[C],
        state: S,
        head: Head,
        reply: Reply | None,
        balances: dict[str, int] | None,
    ) -> tuple[Reply, CommandWrite, list[Envelope], S, Head, list[tuple[str, int]]]:
        """One command: its reply, its write, its sealed events, and the state, head and
        balance moves after it. Raises on a fault (the caller keeps what was before)."""
        events: list[Event] = []
        moves: list[tuple[str, int]] = []
        rules = self.rules
        if reply is None:
            try:
                events = rules.decide(state, sub.command)
            except RuleError as e:
                if not e.stored:
                    raise  # answered, not stored: a retry once the fault is fixed goes on
                reply = error_reply(e.code, e.message)
        if reply is None and events:
            moves = rules.moves(events)
            short = None if balances is None else _first_overdrawn(balances, moves)
            if short is not None:
                reply, events, moves = _insufficient(short), [], []
        sealed: list[Envelope] = []
        if reply is None:
            ts = self.clock()
            stream, actor, causation = self.stream, sub.actor, sub.command_id
            seq, last_hash = head.version, head.last_hash
            for index, ev in enumerate(events):
                state = rules.evolve(state, ev)
                seq += 1
                env = seal(
                    ev,
                    id=event_id(stream=stream, actor=actor, causation=causation, index=index),
                    stream=stream,
                    seq=seq,
                    ts=ts,
                    actor=actor,
                    causation=causation,
                    correlation=rules.correlation(state),
                    prev_hash=last_hash,
                )
                last_hash = env.hash
                sealed.append(env)
            if sealed:
                head = Head(seq, last_hash)
            reply = {"ok": True, "result": rules.result(state, sealed)}
        write = CommandWrite(
            key=sub.key,
            result=pack_result(sub.fingerprint, reply),
            events=sealed,
            moves=[BalanceMove(p, d) for p, d in moves],
        )
        return reply, write, sealed, state, head, moves

    def _faulted(self, sub: Submission[C], error: Exception) -> Reply:
        """The reply of a command that could not be decided or encoded (not stored: it
        changed nothing)."""
        if isinstance(error, RuleError):  # a refusal not to be stored (RuleError.stored)
            return error_reply(error.code, error.message)
        if isinstance(error, UnicodeError | OverflowError):
            self._log.warning("command_not_encodable", command_id=sub.command_id)
            return error_reply("bad_request", "the command holds data that cannot be stored")
        self._log.exception("command_failed", command_id=sub.command_id)
        return error_reply("internal", "internal error; retry the same command id")


def _first_of_each_key(batch: Sequence[Submission[Any]]) -> tuple[list[int], dict[int, int]]:
    """The unanswered commands to decide, and the in-batch repeats of a key (index ->
    index of its first occurrence), which get the first one's reply."""
    pending: list[int] = []
    seen: dict[str, int] = {}
    duplicates: dict[int, int] = {}
    for i, sub in enumerate(batch):
        if sub.future.done():
            continue
        if sub.key and sub.key in seen:
            duplicates[i] = seen[sub.key]
        else:
            seen[sub.key] = i
            pending.append(i)
    return pending, duplicates


def _first_overdrawn(balances: dict[str, int], moves: Sequence[tuple[str, int]]) -> str | None:
    """The first player these moves would take below zero, given ``balances``. A player
    whose balance was not read (a debtor the state before the batch did not know, such as
    the owner of a hand dealt earlier in the same batch) is left to the append script,
    which guards every debit atomically."""
    trial: dict[str, int] = {}
    for player, delta in moves:
        if player not in balances:
            continue
        trial[player] = trial.get(player, balances[player]) + delta
        if delta < 0 and trial[player] < 0:
            return player
    return None


def _already_applied(sub: Submission[Any]) -> Reply:
    return error_reply(
        "already_applied",
        f"command id {sub.command_id!r} was applied already, but its reply is missing from "
        "the store; nothing was applied again (see its events, causation "
        f"{sub.command_id!r})",
    )


def _insufficient(player: str) -> Reply:
    return error_reply("insufficient_funds", f"{player}'s balance does not cover this command")


def _retry_reply(sub: Submission[Any], fingerprint: str, reply: Reply) -> Reply:
    """A retry gets the first reply; the same id with other content is a conflict."""
    if fingerprint != sub.fingerprint:
        return error_reply(
            "conflict",
            f"command id {sub.command_id!r} was already used for a different command",
        )
    return reply

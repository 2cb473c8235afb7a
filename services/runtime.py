"""The running night: Redis (embedded or external), store, actors, projections, broker."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from events.codec import decode
from events.envelope import Envelope
from projections.bankroll import Bankrolls
from projections.bell_jars import BellJars
from projections.cash_control import CashControl
from projections.control_sheets import ControlSheets
from projections.expenses import Expenses
from projections.raffles import Raffles
from projections.runner import ProjectionRunner, checkpoint_key
from projections.timeline import Timeline
from services.actor import Reply, error_reply
from services.aggregates import CAGE, TABLE_PREFIX, deal_stream, raffle_stream, table_stream
from services.bell_jars.views import flare_view, staff_view
from services.broker import LOG, Broker
from services.chance import ServerChance, seal_key
from services.cluster.forward import Message, inbox_mac_key
from services.cluster.identity import NodeLock, check_node_id, default_node_id, new_incarnation
from services.cluster.node import ClusterNode, tail_skips
from services.cluster.tail import stream_and_seq
from services.dashboard import (
    ALERT_CHECK_SECONDS,
    DASHBOARD_KEY,
    DASHBOARD_PUSH_SECONDS,
    Alerts,
    LagWatch,
    NightWatch,
    RoundTally,
    dashboard_view,
)
from services.deadlines import Deadlines
from services.expenses.actor import calendar_of
from services.expenses.rules import Calendar
from services.gateway.auth import Principal
from services.gateway.metrics import Metrics
from services.gateway.revocations import Revocations
from services.night import Night
from services.raffles import board
from services.raffles.vault import PurchaserVault, master_key_from_secret
from services.reports.catalog import DueReport, ReportInputs, due_reports
from services.reports.due import local_date
from services.settings import Settings
from services.store import keys
from services.store.anchor import Anchor, AnchorError, CheckpointFiles, checkpoint_dir
from services.store.anchor import ensure_signing_key as ensure_anchor_key
from services.store.embedded import EmbeddedRedis
from services.store.redis_store import (
    EventStore,
    RedisClient,
    close_redis,
    open_redis,
    redact,
)
from services.store.replication import STORE_UNAVAILABLE, replicas_online
from services.supervisor import Supervisor
from services.tables.view import table_view
from services.tasks import cancel_and_wait, raise_if_cancelled
from services.view_pushes import CoalescedPushes

log = structlog.get_logger(__name__)

RAFFLE_CLOCK_SECONDS = 3600.0
"""How often the server looks in on running raffles for announcements that fall due
(the 170-day announcement of 4620.24(b)(12)); a day's granularity needs no finer."""

ViewListener = Callable[[dict[str, Any] | None], None]
VIEWS = ("control_sheet", "raffle", "flare", "deal", "table", "bankroll", "dashboard")
"""Views a client may watch (``subscribe`` with ``view``): a merchandise wheel's control
sheet, keyed by table id; a raffle, keyed by raffle id; a bell jar deal's flare (every
reader) or its staff view (``deal``), keyed by deal id, from the deal's actor; a table as
``GET /api/tables/{id}`` shows it, keyed by table id, from the table's actor; a player's
bankroll, keyed by player id, from the bankroll projection; the ops dashboard
(``services.dashboard``), one key (``"night"``), pushed at most every
:data:`services.dashboard.DASHBOARD_PUSH_SECONDS`."""
ACTOR_VIEWS = frozenset({"flare", "deal", "table"})
"""The views read from an actor's state rather than a projection: pushed when the actor
publishes its events."""
COALESCED_VIEWS = frozenset({"table", "bankroll"})
"""The views that change with every bet: pushed at most every
:data:`services.view_pushes.VIEW_PUSH_SECONDS`, and only when they changed."""
BANKROLL_STREAMS = (TABLE_PREFIX, CAGE)
"""A player's bankroll moves with the events of the tables and the cage."""


@dataclass(kw_only=True)
class Runtime:
    """Everything one server process runs for one night."""

    settings: Settings
    night: Night
    secret: bytes
    metrics: Metrics = field(default_factory=Metrics)
    rng: secrets.SystemRandom = field(default_factory=secrets.SystemRandom)
    embedded: EmbeddedRedis | None = None
    redis: RedisClient | None = None
    store: EventStore = field(init=False)
    broker: Broker = field(default_factory=Broker)
    supervisor: Supervisor = field(init=False)
    bankrolls: Bankrolls = field(default_factory=Bankrolls)
    control_sheets: ControlSheets = field(default_factory=ControlSheets)
    view_listeners: dict[tuple[str, str], set[ViewListener]] = field(default_factory=dict)
    _actor_view_feeds: dict[tuple[str, str], Callable[[Envelope], None]] = field(
        default_factory=dict
    )
    pushes: CoalescedPushes = field(init=False)
    """The coalesced pushes of :data:`COALESCED_VIEWS`."""
    raffles: Raffles = field(default_factory=Raffles)
    expenses: Expenses = field(default_factory=Expenses)
    """Every expense recorded (the GC-7's Part B)."""
    cash_control: CashControl = field(default_factory=CashControl)
    """Each occasion's cage and tables, and the reporting calendar (the GC-7, GC-7B)."""
    timeline: Timeline = field(default_factory=Timeline)
    """The house result a minute, per occasion, and the tables' closings (the dashboard)."""
    alerts: Alerts = field(default_factory=Alerts)
    """This process's recent alerts, shown on the dashboard (``services.dashboard``)."""
    night_watch: NightWatch = field(init=False)
    lag_watch: LagWatch = field(default_factory=LagWatch)
    dashboard_pushes: CoalescedPushes = field(init=False)
    """The dashboard's coalesced pushes (its own interval, ``DASHBOARD_PUSH_SECONDS``)."""
    round_tally: RoundTally = field(default_factory=RoundTally)
    bell_jars: BellJars = field(init=False)
    """Every bell jar deal's ledger and the GC-7Q figures, in the night's time zone."""
    vault: PurchaserVault = field(init=False)
    runner: ProjectionRunner = field(init=False)
    anchor: Anchor = field(init=False)
    revocations: Revocations = field(init=False)
    """Revoked tokens of the organization, followed for every process (started first,
    so that no revoked token is accepted once the site is up)."""
    deadlines: Deadlines = field(init=False)
    """Answers ``unavailable`` for every command its actor has not answered by
    ``command_deadline_seconds``."""
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)
    cluster: ClusterNode = field(init=False)
    """This process's part among the organization's server processes: the leases of the
    streams it owns, their placement, the forwarding of commands (``services.cluster``)."""
    node_lock: NodeLock | None = None
    submit_local: Callable[[Principal, dict[str, Any], int], asyncio.Future[Reply]] | None = None
    """The gateway's command path (``submit_command``), for the commands other processes
    forward here."""
    after_batch: list[Callable[[], None]] = field(default_factory=list)
    """Called after every actor batch, once its commands are answered (the gateway writes
    the replies and events gathered meanwhile: ``transport.DueWrites``)."""

    def __post_init__(self) -> None:
        self.bell_jars = BellJars(self.night.timezone)
        self.deadlines = Deadlines(self.settings.command_deadline_seconds, _no_reply_in_time)
        self.pushes = CoalescedPushes(self._pushed_view, self._view_watchers)
        self.dashboard_pushes = CoalescedPushes(
            self._pushed_view, self._view_watchers, interval=DASHBOARD_PUSH_SECONDS
        )
        self.night_watch = NightWatch(self.alerts)
        self.alerts.on_raised = self._dashboard_changed
        self.metrics.on_refusal = lambda code: self.alerts.count(code, now_ms())

    @functools.cached_property
    def table_ids(self) -> frozenset[str]:
        return frozenset(t.id for t in self.night.tables)

    @functools.cached_property
    def legacy_board_key(self) -> bytes:
        """Opens the Queen of Hearts boards dealt before ``RaffleOpened`` version 2, kept
        in Redis (``services.raffles.board``); newer boards are sealed in their event."""
        return board.board_key(self.secret)

    async def start(self) -> None:
        s = self.settings
        self.tasks.append(asyncio.create_task(self.deadlines.run(), name="deadlines"))
        url = s.redis_url
        node = check_node_id(s.node or default_node_id(s.data_dir))
        self.node_lock = NodeLock(s.data_dir)
        if url is None:
            self.embedded = EmbeddedRedis(s.data_dir / "redis", appendfsync=s.appendfsync)
            await asyncio.to_thread(self.embedded.start)
            url = self.embedded.local_url  # this process: the unix socket
            self.tasks.append(asyncio.create_task(self.embedded.watch(), name="embedded-redis"))
        try:
            # The embedded Redis's own lock refuses a second process first, in its words.
            self.node_lock.acquire()
        except Exception:
            await cancel_and_wait(self.tasks)
            self.tasks.clear()
            if self.embedded is not None:
                await asyncio.to_thread(self.embedded.stop)
            raise
        try:
            await self._start_night(url, node)
        except BaseException:
            await self._release_after_failed_start()
            raise

    async def _release_after_failed_start(self) -> None:
        """What a start that failed part way took is given back (its tasks, the append
        writer, the Redis connections, the embedded Redis, the node lock), so that the
        process, or a test, can go on or try again."""
        await cancel_and_wait(self.tasks)
        self.tasks.clear()
        if self.redis is not None:
            store = getattr(self, "store", None)
            with contextlib.suppress(Exception):
                if store is not None:
                    await store.writer.stop()
            with contextlib.suppress(Exception):
                await close_redis(self.redis)
            self.redis = None
        if self.embedded is not None:
            await asyncio.to_thread(self.embedded.stop)
        if self.node_lock is not None:
            self.node_lock.release()

    async def _start_night(self, url: str, node: str) -> None:
        s = self.settings
        self.redis = await open_redis(url)
        self.store = EventStore(
            self.redis,
            self.night.organization,
            wait_replicas=s.wait_replicas,
            wait_timeout_ms=s.wait_timeout_ms,
        )
        if s.wait_replicas:
            await self._check_replicas(s.wait_replicas)
        self.revocations = Revocations(self.redis, self.night.organization)
        await self.revocations.load()
        self.tasks.append(asyncio.create_task(self.revocations.run(), name="revocations"))
        self.vault = PurchaserVault(
            self.redis, self.night.organization, master_key_from_secret(self.secret)
        )
        self.store.writer.start()
        await self._open_anchor()
        self.supervisor = Supervisor(
            self.store,
            self.broker,
            self.night,
            mailbox_size=s.mailbox_size,
            on_batch=self._batch_done,
            chance=ServerChance(seal_key(self.secret), self.rng),
        )
        self.supervisor.expense_calendar = self._expense_calendar
        await self.supervisor.start()
        self.cluster = ClusterNode(
            redis=self.redis,
            org=self.night.organization,
            node=node,
            incarnation=new_incarnation(),
            settings=s,
            supervisor=self.supervisor,
            metrics=self.metrics,
            mac_key=inbox_mac_key(self.secret),
        )
        self.cluster.inbox.submit = self.submit_local
        try:
            await self.cluster.start()
        except Exception:
            # Leave at once (a refused opening, say): the leases taken so far go too.
            await self.supervisor.stop()
            await self.cluster.leave()
            raise
        self.tasks += self.cluster.run_tasks()
        await self._start_anchor()
        self.runner = ProjectionRunner(
            self.store,
            [
                self.bankrolls,
                self.control_sheets,
                self.raffles,
                self.bell_jars,
                self.timeline,
                self.expenses,
                self.cash_control,
            ],
            on_entries=self._publish_log,
            mac_key=checkpoint_key(self.secret),
            on_rejected=lambda _reason: self.metrics.checkpoint_rejections.inc(),
            saver=self.cluster.save_projections,
        )
        await self.runner.load_checkpoint()
        await self.runner.catch_up()
        self.night_watch.seed(self.timeline, self.control_sheets)
        self.tasks.append(asyncio.create_task(self.runner.run(), name="projections"))
        self.tasks.append(asyncio.create_task(self._watch_alerts(), name="alerts"))
        self.tasks.append(asyncio.create_task(self._raffle_clock(), name="raffle-clock"))
        log.info(
            "night_started",
            organization=self.night.organization,
            redis=redact(url),
            node=node,
            streams=sorted(self.cluster.active),
        )

    async def _check_replicas(self, wanted: int) -> None:
        """Say at start when the organization's master has fewer replicas online than
        ``wait_replicas`` asks for: until they are, every command is answered
        ``unavailable`` (no append can be confirmed). A warning, not a refusal: a replica
        may just be resyncing."""
        assert self.redis is not None
        try:
            online = await replicas_online(self.redis, keys.log(self.night.organization))
        except STORE_UNAVAILABLE as e:
            log.warning("replicas_not_counted", error=str(e))
            return
        if online < wanted:
            log.warning(
                "wait_replicas_unmet",
                wait_replicas=wanted,
                replicas_online=online,
                effect="every command is answered unavailable until enough replicas are online",
            )

    async def _raffle_clock(self) -> None:
        """What raffles must announce by a date they raise by themselves: looked in on at
        start and every ``RAFFLE_CLOCK_SECONDS``."""
        while True:
            try:
                raised = await self.supervisor.raise_due_announcements(time.time_ns() // 1_000_000)
                if raised:
                    log.info("raffle_announcements_raised", raffles=raised)
            except Exception as e:  # the store may be restarting: look in again later
                raise_if_cancelled()
                log.warning("raffle_clock_failed", error=type(e).__name__)
            await asyncio.sleep(RAFFLE_CLOCK_SECONDS)

    async def _watch_alerts(self) -> None:
        """Every ``ALERT_CHECK_SECONDS``: the refusal counts due, the closings and wheels
        near their limit not yet seen, and whether the projections lag the log
        (``projection_lag``)."""
        while True:
            await asyncio.sleep(ALERT_CHECK_SECONDS)
            try:
                await self._look_for_alerts()
            except Exception as e:  # the store may be restarting: look again in a moment
                raise_if_cancelled()
                log.warning("alerts_not_checked", error=type(e).__name__)

    async def _look_for_alerts(self) -> None:
        self.alerts.flush(now_ms())
        # What the runner folded without a page to hand on (its catch-up as it starts).
        self.night_watch.page(None, self.timeline, self.control_sheets, now_ms())
        head = await self.store.log_head()
        lag = self.lag_watch.observe(self.runner.last_id, head, now_ms())
        if lag is not None:
            self.alerts.raise_alert(
                "projection_lag",
                "projections",
                f"the projections are at least {lag / 1000:.1f} s behind the log"
                f" (folded {self.runner.last_id}, log end {head})",
                now_ms(),
            )

    def alert(self, kind: str, subject: str, message: str) -> None:
        """Raise an alert now (the dashboard shows it)."""
        self.alerts.raise_alert(kind, subject, message, now_ms())

    def _dashboard_changed(self) -> None:
        if ("dashboard", DASHBOARD_KEY) in self.view_listeners:
            self.dashboard_pushes.changed("dashboard", DASHBOARD_KEY)

    def dashboard(self) -> dict[str, Any]:
        """The ``dashboard`` view now (``services.dashboard.dashboard_view``)."""
        supervisor = self.supervisor
        return dashboard_view(
            self.night,
            {t.id: supervisor.table_state(t.id) for t in self.night.tables},
            self.bankrolls,
            self.control_sheets,
            self.raffles,
            self.timeline,
            self.alerts,
            self.runner.last_id,
            now_ms(),
            self.round_tally,
            [r.view() for r in self.due_reports()],
        )

    def _expense_calendar(self) -> Calendar:
        """The occasions and license periods the log started, as this process's cash
        control has folded them, for the expense rules (``services.expenses.actor``)."""
        night, cash = self.night, self.cash_control
        return calendar_of(
            cash.occasions,
            [(p["period_start"], p["period_end"]) for p in cash.periods.values()],
            occasion=night.occasion,
            period=(night.period_start, night.period_end),
        )

    def report_inputs(self) -> ReportInputs:
        """What the forms are built from: this process's projections and the night."""
        night = self.night
        return ReportInputs(
            organization=night.organization_name,
            timezone=night.timezone,
            cash_control=self.cash_control,
            bankrolls=self.bankrolls,
            expenses=self.expenses,
            control_sheets=self.control_sheets,
            member_in_charge=night.member_in_charge,
            use_of_proceeds=night.use_of_proceeds,
            raffles=self.raffles,
            bell_jars=self.bell_jars,
        )

    def due_reports(self) -> list[DueReport]:
        """Every form that is or will be due, as of today in the organization's zone."""
        return due_reports(self.report_inputs(), local_date(now_ms(), self.night.timezone))

    def _batch_done(self, size: int, seconds: float) -> None:
        """An actor's batch is over: its metrics, then each :attr:`after_batch` hook. A
        hook's fault is logged; it skips no other hook and never stops the actor."""
        self.metrics.observe_batch(size, seconds)
        for hook in self.after_batch:
            try:
                hook()
            except Exception:
                log.exception("after_batch_failed")

    def _publish_log(self, page: Sequence[tuple[str, bytes]]) -> None:
        """The one tail of the org log feeds, in log order: the subscribers of every
        stream whose events this process's actors did not publish themselves (another
        process's streams; a stream's events from before this process took it), the
        subscribers of the log (events decoded only when someone listens), then each
        watched view the page changed. A raffle stream not known yet (set up by another
        process) gets its follower actor."""
        broker = self.broker
        log_listeners = broker.subscribers(LOG) > 0
        touched: set[str] = set()
        decoded: list[Envelope] = []
        for log_id, raw in page:
            env = None
            try:
                stream, seq = stream_and_seq(raw)
                touched.add(stream)
                if broker.subscribers(stream) and not tail_skips(self.cluster, stream, seq):
                    env = decode(raw, log_id)
                    broker.publish([env])
            except Exception:  # one entry that cannot be read must not stop the tail
                log.exception("log_entry_not_published", log_id=log_id)
            if log_listeners:
                decoded.append(env if env is not None else decode(raw, log_id))
        for stream in touched:
            self.supervisor.follow(stream)
        if decoded:
            broker.publish_log(decoded)
        self.night_watch.page(touched, self.timeline, self.control_sheets, now_ms())
        if self.view_listeners:
            money_moved = any(s.startswith(BANKROLL_STREAMS) for s in touched)
            for (kind, key), listeners in list(self.view_listeners.items()):
                if kind == "bankroll":
                    if money_moved:
                        self.pushes.changed(kind, key)
                elif kind == "dashboard":
                    self.dashboard_pushes.changed(kind, key)
                elif kind not in ACTOR_VIEWS and view_stream(kind, key) in touched:
                    data = self.view(kind, key)
                    for listener in tuple(listeners):
                        listener(data)

    def route(
        self, stream: str, who: Principal, msg: Message, hops: int
    ) -> asyncio.Future[Reply] | None:
        """Where a checked command for ``stream`` runs: None when its actor runs here (queue
        it locally), else the future of its one reply from the process that owns it."""
        return self.cluster.route(stream, who, msg, hops)

    async def head(self, stream: str) -> int:
        """A stream's version: its actor's when it runs here, else the store's."""
        if self.cluster.owns(stream):
            return self.supervisor.actors[stream].head.version
        return (await self.store.head(stream)).version

    def view(self, kind: str, key: str) -> dict[str, Any] | None:
        """A projection view's current data (None: nothing to show for that key)."""
        if kind == "control_sheet":
            return self.control_sheets.sheet(key)
        if kind == "raffle":
            return self.raffles.view(key)
        if kind in ("flare", "deal"):
            state = self.supervisor.deal_state(key)
            if state is None or not state.registered:
                return None
            if kind == "flare":
                return flare_view(state)
            return staff_view(state, self.supervisor.deal_state)
        if kind == "table":
            table = self.supervisor.table_state(key)
            return None if table is None else table_view(table)
        if kind == "bankroll":
            figures = self.bankrolls.players.get(key)
            return None if figures is None else {"player": key, **figures}
        if kind == "dashboard":
            return self.dashboard()
        raise KeyError(kind)

    async def _pushed_view(self, kind: str, key: str) -> dict[str, Any] | None:
        """A coalesced view's data, once the stream it reads is folded here (another
        process may run the table)."""
        if kind == "table":
            await self.supervisor.refresh(table_stream(key))
        elif kind == "dashboard":
            for spec in self.night.tables:  # nothing to do for the tables run here
                await self.supervisor.refresh(table_stream(spec.id))
        return self.view(kind, key)

    def _view_watchers(self, kind: str, key: str) -> tuple[ViewListener, ...]:
        return tuple(self.view_listeners.get((kind, key), ()))

    def watch(self, kind: str, key: str, listener: ViewListener) -> None:
        first = (kind, key) not in self.view_listeners
        self.view_listeners.setdefault((kind, key), set()).add(listener)
        if first and kind in ACTOR_VIEWS:
            # A deal's views come from its actor's state, which moves when the actor
            # publishes its events (the log's tail may see them before): push from there.
            def changed(_env: Envelope) -> None:
                if kind in COALESCED_VIEWS:
                    self.pushes.changed(kind, key)
                    return
                data = self.view(kind, key)
                for each in tuple(self.view_listeners.get((kind, key), ())):
                    each(data)

            self._actor_view_feeds[(kind, key)] = changed
            self.broker.add(view_stream(kind, key), changed)

    def unwatch(self, kind: str, key: str, listener: ViewListener) -> None:
        listeners = self.view_listeners.get((kind, key))
        if listeners is not None:
            listeners.discard(listener)
            if not listeners:
                del self.view_listeners[(kind, key)]
                self.pushes.forget(kind, key)
                self.dashboard_pushes.forget(kind, key)
                feed = self._actor_view_feeds.pop((kind, key), None)
                if feed is not None:
                    self.broker.remove(view_stream(kind, key), feed)

    # The signed checkpoints outside Redis (services/store/anchor.py).

    async def _open_anchor(self) -> None:
        """Before anything is appended: load the signing key and check that the store still
        holds what the newest checkpoint signed; refuse to start (AnchorError) if not."""
        s = self.settings
        try:
            key = await asyncio.to_thread(ensure_anchor_key, s.data_dir, s.anchor_key)
            files = CheckpointFiles(checkpoint_dir(s.data_dir, self.night.organization))
            self.anchor = Anchor(
                self.store, key, files, occasion_ends_at=self.night.occasion_ends_at
            )
            await self.anchor.open()
        except AnchorError:
            await self.store.writer.stop()
            await cancel_and_wait(self.tasks)
            self.tasks.clear()
            if self.redis is not None:
                await close_redis(self.redis)
            if self.embedded is not None:
                await asyncio.to_thread(self.embedded.stop)
            if self.node_lock is not None:
                self.node_lock.release()
            raise

    async def _start_anchor(self) -> None:
        """Sign the heads the actors know (and those read at start) now, then every second
        while they move, and at the occasion's end."""
        actors = self.supervisor.actors
        self.anchor.attach(lambda: {name: actor.head for name, actor in actors.items()})
        await self.anchor.sign("start", force=True)
        self.tasks.append(asyncio.create_task(self.anchor.run(), name="anchor"))

    async def _sign_shutdown(self) -> None:
        """The last checkpoint, once the actors have stopped: their final heads."""
        try:
            await self.anchor.sign("shutdown", force=True)
        except Exception:  # the night still stops; the previous checkpoint stands
            log.exception("anchor_not_written", path=str(self.anchor.files.latest))

    async def stop(self) -> None:
        await self.pushes.stop()
        await self.dashboard_pushes.stop()
        await self.cluster.halt()
        await self.supervisor.stop()
        await self.store.writer.stop()
        await cancel_and_wait(self.tasks)
        self.tasks.clear()
        await self._sign_shutdown()
        try:
            # What the tail had not read yet (appended during its gather wait) goes in too.
            await self.runner.catch_up()
            await self.runner.save_checkpoint()
        except Exception as e:  # Redis may be gone; the checkpoint is only a shortcut
            log.warning("checkpoint_not_saved", error=str(e))
        await self.cluster.leave()
        if self.redis is not None:
            await close_redis(self.redis)
        if self.embedded is not None:
            await asyncio.to_thread(self.embedded.stop)
        if self.node_lock is not None:
            self.node_lock.release()


def now_ms() -> int:
    """The server's time, unix ms."""
    return time.time_ns() // 1_000_000


def _no_reply_in_time(seconds: float) -> dict[str, Any]:
    return error_reply(
        "unavailable",
        f"no reply within {seconds:g} s (the event store is slow or unreachable); "
        "retry the same command id",
    )


def view_stream(kind: str, key: str) -> str:
    """The aggregate stream whose events change a view."""
    if kind == "control_sheet":
        return table_stream(key)
    if kind == "raffle":
        return raffle_stream(key)
    if kind in ("flare", "deal"):
        return deal_stream(key)
    if kind == "table":
        return table_stream(key)
    return key

"""The ops dashboard view over real websockets: who may watch it, its figures against
``GET /api/bankrolls`` after a round, its pushes, and the alerts it carries (a table or a
wheel closed, a wheel near its limit, ``busy`` and ``unavailable`` replies, a client
dropped as too slow, projections behind the log). And the house-result series rebuilt
from the log and from a checkpoint."""

from __future__ import annotations

import asyncio
from typing import Any

from projections.runner import ProjectionRunner, checkpoint_key
from projections.timeline import Timeline
from services.dashboard import Alerts, LagWatch
from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import (
    SECRET,
    LiveServer,
    StuckClient,
    WsClient,
    dealer_token,
    player_token,
    start_server,
    token,
)

DASHBOARD = {"op": "subscribe", "view": "dashboard"}
STRAIGHT_17 = {"kind": "straight", "numbers": ["17"]}


async def watch(server: LiveServer, role: str = "ops") -> tuple[WsClient, dict[str, Any]]:
    client = await server.connect(token(role))
    reply = await client.send({**DASHBOARD, "id": client.next_id()})
    assert reply["ok"], reply
    assert reply["result"]["view"] == "dashboard"
    data: dict[str, Any] = reply["result"]["data"]
    return client, data


def row(data: dict[str, Any], table: str) -> dict[str, Any]:
    [found] = [t for t in data["tables"] if t["table"] == table]
    return found


def alerted(kind: str, subject: str | None = None) -> Any:
    def check(data: dict[str, Any]) -> bool:
        return any(
            a["kind"] == kind and (subject is None or a["subject"] == subject)
            for a in data["alerts"]
        )

    return check


async def play_a_round(server: LiveServer) -> tuple[WsClient, WsClient]:
    """p-1 buys $100, bets $2 on 17 and $5 on red at roulette-1; the pocket is 17."""
    cashier = await server.connect(token("cashier"))
    dealer = await server.connect(dealer_token("roulette-1"))
    player = await server.connect(player_token("p-1"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=10_000))["ok"]
    assert (await cashier.cmd("cash_out", player="p-1", amount=1_000))["ok"]
    assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]
    for bet, amount in ((STRAIGHT_17, 200), ({"kind": "red"}, 500)):
        reply = await player.cmd(
            "place_bet", table="roulette-1", player="p-1", bet=bet, amount=amount
        )
        assert reply["ok"], reply
    return dealer, player


async def test_only_ops_and_auditors_watch_the_dashboard(server: LiveServer) -> None:
    for tok in (token("cashier"), dealer_token("roulette-1"), player_token("p-1")):
        client = await server.connect(tok)
        reply = await client.send({**DASHBOARD, "id": client.next_id()})
        assert reply["ok"] is False and reply["error"]["code"] == "forbidden", reply
    for role in ("ops", "auditor"):
        reader, data = await watch(server, role)
        assert [t["table"] for t in data["tables"]] == ["roulette-1", "roulette-2"]
        assert data["occasion"] == {
            "id": "night-1",
            "name": "Test night",
            "starts_at": None,
            "ends_at": None,
        }
        assert data["log_id"] == server.runtime.runner.last_id
    # The view's one key may be named (the pushes carry it); no other.
    named = await reader.send({**DASHBOARD, "id": "k-1", "key": "night"})
    assert named["ok"] and named["result"]["data"]["tables"]
    other = await reader.send({**DASHBOARD, "id": "k-2", "key": "day"})
    assert other["error"]["code"] == "bad_request", other
    # And it stops when asked.
    listeners = server.runtime.view_listeners[("dashboard", "night")]
    client, _data = await watch(server)
    assert len(listeners) == 3
    stop = await client.send({"op": "unsubscribe", "id": "u-1", "view": "dashboard"})
    assert stop["ok"], stop
    assert len(listeners) == 2


async def test_the_figures_after_a_round_equal_the_bankrolls(server: LiveServer) -> None:
    ops, first = await watch(server)
    assert row(first, "roulette-1")["handle"] == 0
    dealer, _player = await play_a_round(server)
    # Pushed while the round takes bets: its count and stake.
    betting = await ops.wait_view(lambda d: row(d, "roulette-1")["bets"] == 2)
    assert row(betting, "roulette-1")["staked"] == 700
    assert row(betting, "roulette-1")["phase"] == "betting"
    assert (await dealer.cmd("no_more_bets", table="roulette-1"))["ok"]
    done = await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "17"})
    assert done["ok"], done
    data = await ops.wait_view(lambda d: row(d, "roulette-1")["rounds"] == 1)
    status, bankrolls = await server.get("/api/bankrolls", token("auditor"))
    assert status == 200
    assert set(bankrolls["tables"]) == {"roulette-1"}
    for table, figures in bankrolls["tables"].items():
        mine = row(data, table)
        named = {"bets_placed" if k == "bets" else k: v for k, v in figures.items()}
        assert {k: mine[k] for k in named} == named
    one = row(data, "roulette-1")
    assert one["handle"] == 700 and one["paid_out"] == 200 * 36
    assert one["house_win"] == 700 - 7200 and one["hold"] == round(-6500 / 700, 4)
    assert one["last_outcome"] == "17" and one["recent_outcomes"] == ["17"]
    assert one["bets"] == 0 and one["phase"] == "idle"
    assert row(data, "roulette-2")["hold"] is None
    org = bankrolls["organization"]
    assert data["cage"]["issued"] == org["issued"] == 10_000
    assert data["cage"]["redeemed"] == org["redeemed"] == 1_000
    assert data["cage"]["outstanding"] == org["outstanding"]
    occasion = bankrolls["occasions"]["night-1"]
    assert data["cage"]["occasion"] == occasion
    assert data["raised"] == {
        "tables": occasion["house_win"],
        "raffles": 0,
        "total": occasion["house_win"],
        "expenses": None,
    }
    assert data["house_result"]["occasion"] == "night-1"
    assert data["house_result"]["points"][-1][1] == occasion["house_win"]
    assert data["log_id"] == server.runtime.runner.last_id


async def test_a_closed_table_is_an_alert_and_a_row(server: LiveServer) -> None:
    ops, data = await watch(server)
    assert data["alerts"] == []
    dealer = await server.connect(dealer_token("roulette-2"))
    assert (await dealer.cmd("close_table", table="roulette-2"))["ok"]
    data = await ops.wait_view(alerted("table_closed", "roulette-2"))
    assert row(data, "roulette-2")["closed"] is True
    [alert] = data["alerts"]
    assert alert["id"] == 1 and alert["message"] == "roulette-2 closed"


def prize_night(org: str) -> dict[str, Any]:
    doc = night_doc(org)
    doc["license"]["games"] = ["roulette", "merchandise_wheel"]
    doc["tables"] = [
        {
            "id": "prizes-1",
            "game": "merchandise_wheel",
            "outcome_mode": "dealer",
            "options": {
                "sections": [{"shows": ["1"], "prize": "mug"}, {"shows": ["2"]}],
                "aggregate_prize_limit": 1_000,
                "inventory": [
                    {"item": "mug-1", "prize": "mug", "value": 850},
                    {"item": "mug-2", "prize": "mug", "value": 150},
                ],
            },
        }
    ]
    return doc


async def test_a_wheel_near_its_limit_and_then_closed_by_it(
    redis_server: EmbeddedRedis, org: str
) -> None:
    server = await start_server(redis_server.url, prize_night(org))
    try:
        ops, data = await watch(server)
        assert data["control_sheets"] == [
            {
                "table": "prizes-1",
                "aggregate": 0,
                "limit": 1_000,
                "distance_to_limit": 1_000,
                "closed": None,
                "awarded": 0,
            }
        ]
        cashier = await server.connect(token("cashier"))
        dealer = await server.connect(dealer_token("prizes-1"))
        player = await server.connect(player_token("p-1"))
        assert (await cashier.cmd("buy_chips", player="p-1", amount=1_000))["ok"]

        async def win_a_mug() -> None:
            assert (await dealer.cmd("open_round", table="prizes-1"))["ok"]
            bet = {"space": "1"}
            reply = await player.cmd(
                "place_bet", table="prizes-1", player="p-1", bet=bet, amount=100
            )
            assert reply["ok"], reply
            assert (await dealer.cmd("no_more_bets", table="prizes-1"))["ok"]
            done = await dealer.cmd("record_outcome", table="prizes-1", outcome={"section": 0})
            assert done["ok"], done

        await win_a_mug()  # 850 of 1,000: past 80 %
        data = await ops.wait_view(alerted("limit_80", "prizes-1"))
        assert not alerted("wheel_closed")(data)
        [sheet] = data["control_sheets"]
        assert (sheet["aggregate"], sheet["distance_to_limit"], sheet["awarded"]) == (850, 150, 1)
        await win_a_mug()  # 1,000: the limit, the wheel closes
        data = await ops.wait_view(alerted("wheel_closed", "prizes-1"))
        assert [a["kind"] for a in data["alerts"]] == ["wheel_closed", "limit_80"]  # once each
        assert data["control_sheets"][0]["closed"] == "prize_limit"
        assert row(data, "prizes-1")["closed"] is True
    finally:
        await server.stop()


async def test_busy_replies_are_an_alert(redis_server: EmbeddedRedis, org: str) -> None:
    """An HTTP command past its principal's message rate is answered ``busy`` (the
    principal's rate here: one message, then one every 100 s)."""
    server = await start_server(
        redis_server.url, night_doc(org), principal_rate=0.01, principal_burst=1
    )
    try:
        ops, _data = await watch(server)
        sale = {"op": "buy_chips", "player": "p-1", "amount": 100}
        _status, first = await server.post_command({**sale, "id": "b-1"}, token("cashier"))
        assert first["ok"], first
        _status, second = await server.post_command({**sale, "id": "b-2"}, token("cashier"))
        assert second["error"]["code"] == "busy", second
        data = await ops.wait_view(alerted("busy"))
        [alert] = [a for a in data["alerts"] if a["kind"] == "busy"]
        assert alert["message"].startswith("1 reply busy")
    finally:
        await server.stop()


async def test_unavailable_replies_are_an_alert(redis_server: EmbeddedRedis, org: str) -> None:
    """A store that takes longer than the command deadline: Redis's writes paused
    (``CLIENT PAUSE … WRITE``) for longer than the server's 0.3 s deadline, so the sale is
    answered ``unavailable`` (it is applied once Redis writes again)."""
    server = await start_server(redis_server.url, night_doc(org), command_deadline_seconds=0.3)
    try:
        ops, _data = await watch(server)
        cashier = await server.connect(token("cashier"))
        await server.runtime.store.redis.execute_command("CLIENT", "PAUSE", "1500", "WRITE")
        reply = await cashier.cmd("buy_chips", player="p-1", amount=100)
        assert reply["error"]["code"] == "unavailable", reply
        data = await ops.wait_view(alerted("unavailable"))
        [alert] = [a for a in data["alerts"] if a["kind"] == "unavailable"]
        assert alert["subject"] == "commands" and alert["message"].startswith("1 reply")
    finally:
        await server.runtime.store.redis.execute_command("CLIENT", "UNPAUSE")
        await server.stop()


async def test_a_client_dropped_as_too_slow_is_an_alert(
    redis_server: EmbeddedRedis, org: str
) -> None:
    server = await start_server(redis_server.url, night_doc(org), send_buffer_bytes=16 * 1024)
    port = int(server.base.rsplit(":", 1)[1])
    stuck = await StuckClient.connect(port, token("auditor", "stuck-tablet"))
    try:
        ops, _data = await watch(server)
        stuck.send({"op": "subscribe", "id": "s", "stream": "table:roulette-1", "since": 0})
        broker = server.runtime.broker
        for _ in range(100):
            if broker.subscribers("table:roulette-1"):
                break
            await asyncio.sleep(0.01)
        cashier = await server.connect(token("cashier"))
        dealer = await server.connect(dealer_token("roulette-1"))
        player = await server.connect(player_token("p-1"))
        assert (await cashier.cmd("buy_chips", player="p-1", amount=100_000))["ok"]
        assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]
        slow = server.runtime.metrics.slow_disconnects
        for _ in range(400):
            bets = [
                player.cmd("place_bet", table="roulette-1", player="p-1", bet=STRAIGHT_17, amount=1)
                for _ in range(50)
            ]
            assert all(r["ok"] for r in await asyncio.gather(*bets))
            if slow._value.get() >= 1:
                break
        data = await ops.wait_view(alerted("client_dropped", "stuck-tablet"))
        [alert] = [a for a in data["alerts"] if a["kind"] == "client_dropped"]
        assert "auditor stuck-tablet" in alert["message"] and "1013" in alert["message"]
    finally:
        stuck.close()
        await server.stop()


async def test_projections_behind_the_log_are_an_alert(server: LiveServer) -> None:
    """The projections stopped (their task cancelled here, as a runner stuck on a page
    would be): the log moves on without them and the lag is reported."""
    runtime = server.runtime
    ops, _data = await watch(server)
    runtime.lag_watch.threshold_ms = 300
    [task] = [t for t in runtime.tasks if t.get_name() == "projections"]
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    cashier = await server.connect(token("cashier"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=100))["ok"]
    data = await ops.wait_view(alerted("projection_lag"))
    [alert] = [a for a in data["alerts"] if a["kind"] == "projection_lag"]
    assert "behind the log" in alert["message"]
    assert data["log_id"] != await runtime.store.log_head()


async def test_the_series_rebuilds_from_the_log_and_from_a_checkpoint(
    server: LiveServer,
) -> None:
    dealer, _player = await play_a_round(server)
    assert (await dealer.cmd("no_more_bets", table="roulette-1"))["ok"]
    assert (await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "3"}))["ok"]
    runtime = server.runtime
    for _ in range(200):
        if await runtime.runner.caught_up():
            break
        await asyncio.sleep(0.02)
    live = runtime.timeline.snapshot()
    assert live["series"]["night-1"][-1][1] == runtime.bankrolls.occasions["night-1"]["house_win"]
    rebuilt = Timeline()
    await ProjectionRunner(runtime.store, [rebuilt]).catch_up()
    assert rebuilt.snapshot() == live
    key = checkpoint_key(SECRET)
    saver = ProjectionRunner(runtime.store, [Timeline()], checkpoint="dash-test", mac_key=key)
    await saver.catch_up()
    await saver.save_checkpoint()
    restored = Timeline()
    loader = ProjectionRunner(runtime.store, [restored], checkpoint="dash-test", mac_key=key)
    await loader.load_checkpoint()
    assert loader.last_id == runtime.runner.last_id
    assert restored.snapshot() == live


def test_refusals_are_one_alert_per_kind_every_ten_seconds() -> None:
    alerts = Alerts()
    alerts.count("busy", 1_000)
    for at in range(1_001, 1_006):
        alerts.count("busy", at)
    alerts.count("unavailable", 2_000)
    alerts.flush(10_999)
    assert [(a["kind"], a["message"]) for a in alerts.newest()] == [
        ("unavailable", "1 reply unavailable (clients retry with the same id)"),
        ("busy", "1 reply busy (clients retry with the same id)"),
    ]
    alerts.flush(11_000)  # ten seconds after the first: the five since, in one alert
    newest = alerts.newest()[0]
    assert (newest["id"], newest["kind"], newest["at"]) == (3, "busy", 11_000)
    assert newest["message"] == "5 replies busy in the last 10 s (clients retry with the same id)"
    alerts.flush(30_000)
    assert len(alerts.newest()) == 3  # nothing more to say


def test_the_ring_is_bounded_and_shows_the_newest_first() -> None:
    alerts = Alerts(kept=5)
    for i in range(8):
        alerts.raise_alert("table_closed", f"t-{i}", "closed", i)
    assert [a["id"] for a in alerts.newest(3)] == [8, 7, 6]
    assert [a["id"] for a in alerts.newest()] == [8, 7, 6, 5, 4]


def test_a_lag_is_reported_once_per_episode() -> None:
    watch = LagWatch(threshold_ms=2_000)
    assert watch.observe("1000-0", "1000-0", 50_000) is None  # caught up, however old
    assert watch.observe("1000-0", "9000-3", 9_500) is None  # behind, for 0.5 s
    assert watch.observe("1000-0", "10000-0", 11_500) == 2_500  # 9000-3 still not folded
    assert watch.observe("1000-0", "10000-0", 20_000) is None  # said once
    assert watch.observe("9000-3", "20000-0", 20_500) is None  # past the mark: a new one
    assert watch.observe("12000-0", "20000-0", 22_500) == 2_500
    assert watch.observe("20000-0", "20000-0", 40_000) is None
    assert watch.observe("20000-0", "39000-0", 42_000) == 3_000

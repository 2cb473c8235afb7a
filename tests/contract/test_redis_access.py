"""Access to Redis (docs/OPERATIONS.md, "Redis access"): the embedded Redis wants its
password and listens on loopback only; ``REDIS_URL`` logs in as an ACL user restricted to
one organization's keys, channels and the commands of ``services.store.access``, and
speaks TLS (``rediss://``) through a real TLS server; a refused login or an untrusted
certificate is a clear :class:`RedisAccessError`."""

from __future__ import annotations

import asyncio
import hashlib
import re
import stat
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
import redis.exceptions

from projections.bankroll import Bankrolls
from projections.runner import ProjectionRunner
from services.store import access, keys
from services.store.embedded import (
    PASSWORD_FILE,
    EmbeddedRedis,
    free_port,
    read_password,
    redis_server_binary,
    running_url,
)
from services.store.redis_store import (
    EventStore,
    RedisAccessError,
    close_redis,
    open_redis,
    redact,
)
from services.store.verify import verify_all
from tests.conftest import night_doc
from tests.gateway.test_raffles import QOH, raffle_night
from tests.support import (
    acl_denials,
    acl_user,
    dealer_token,
    player_token,
    start_server,
    token,
)
from tests.tls import TlsProxy, issue_server_cert, make_ca

ROOT = Path(__file__).resolve().parents[2]
DOCS_ORG = "st-marys"
"""The organization id the ACL of docs/OPERATIONS.md and deploy/users.acl is written for."""


def ok(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply["ok"], reply
    result: dict[str, Any] = reply["result"]
    return result


# The embedded Redis.


async def test_the_embedded_redis_wants_its_password_and_listens_on_loopback_only(
    redis_server: EmbeddedRedis, redis_client: aioredis.Redis
) -> None:
    password = read_password(redis_server.data_dir)
    assert password is not None and re.fullmatch(r"[0-9a-f]{64}", password)
    path = redis_server.data_dir / PASSWORD_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert redis_server.url == f"redis://:{password}@127.0.0.1:{redis_server.port}/0"
    for url in (
        f"redis://127.0.0.1:{redis_server.port}/0",
        f"redis://:wrong@127.0.0.1:{redis_server.port}/0",
    ):
        stranger = aioredis.Redis.from_url(url)
        with pytest.raises(redis.exceptions.AuthenticationError):
            await stranger.get("anything")
        await stranger.aclose()
    assert await _config(redis_client, "bind") == "127.0.0.1"
    assert await _config(redis_client, "protected-mode") == "yes"
    assert await _config(redis_client, "requirepass") == password
    # Handed over on stdin: the password never was on the command line.
    assert redis_server.proc is not None
    assert password.encode() not in _cmdline(redis_server.proc.pid)


async def _config(client: aioredis.Redis, name: str) -> str:
    got: dict[Any, Any] = await client.config_get(name)
    ((_key, value),) = got.items()
    return value.decode() if isinstance(value, bytes) else str(value)


def _cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


async def test_a_restart_keeps_the_password_and_a_loose_password_file_is_narrowed(
    tmp_path: Path,
) -> None:
    first = EmbeddedRedis(tmp_path / "redis", die_with_parent=False)
    first.start()
    try:
        url = first.url
        assert running_url(tmp_path / "redis") == url  # what replay and verify connect to
    finally:
        first.stop()
    (tmp_path / "redis" / PASSWORD_FILE).chmod(0o644)
    second = EmbeddedRedis(tmp_path / "redis", port=first.port, die_with_parent=False)
    second.start()
    try:
        assert second.url == url
        assert stat.S_IMODE((tmp_path / "redis" / PASSWORD_FILE).stat().st_mode) == 0o600
        client = await open_redis(url)
        assert await client.ping()
        await close_redis(client)
    finally:
        second.stop()


def test_urls_are_redacted_before_they_reach_a_message() -> None:
    assert redact("redis://casino:s3cr%40t@db:6379/0") == "redis://casino:***@db:6379/0"
    assert redact("redis://:pw@127.0.0.1:1/0") == "redis://:***@127.0.0.1:1/0"
    assert redact("redis://db:6379/0") == "redis://db:6379/0"
    assert (
        redact(
            "rediss://u:pw@db/0?ssl_ca_certs=/etc/ca.pem&ssl_password=k3y&ssl_cert_reqs=required"
        )
        == "rediss://u:***@db/0?ssl_ca_certs=/etc/ca.pem&ssl_password=***&ssl_cert_reqs=required"
    )


async def test_a_refused_login_is_a_clear_access_error(redis_server: EmbeddedRedis) -> None:
    url = f"redis://nobody:not-the-password@127.0.0.1:{redis_server.port}/0"
    with pytest.raises(RedisAccessError) as refused:
        await open_redis(url)
    message = str(refused.value)
    assert message.startswith(
        f"cannot use the Redis at redis://nobody:***@127.0.0.1:{redis_server.port}/0: login refused"
    )
    assert "not-the-password" not in message
    with pytest.raises(RedisAccessError, match="Error 111 connecting"):
        await open_redis(f"redis://127.0.0.1:{free_port()}/0")


# An ACL user restricted to one organization.


async def test_an_acl_user_of_one_organization_serves_its_night_and_nothing_else(
    redis_server: EmbeddedRedis, redis_client: aioredis.Redis, org: str
) -> None:
    user = await acl_user(redis_client, org)
    url = user.url(redis_server.port)
    server = await start_server(url, raffle_night(org))
    try:
        await _play_a_night(server)
        store = server.runtime.store
        assert all(r.ok for r in await verify_all(store))
        rebuilt = Bankrolls()
        await ProjectionRunner(store, [rebuilt], checkpoint="acl-test").catch_up()
        for _ in range(300):
            if await server.runtime.runner.caught_up():
                break
            await asyncio.sleep(0.01)
        assert rebuilt.snapshot() == server.runtime.bankrolls.snapshot()
    finally:
        await server.stop()  # saves the projection checkpoint, as this user too
    assert await redis_client.exists(keys.projection(org, "runner"))
    assert await acl_denials(redis_client, user) == []
    await _only_its_own_keys_channels_and_commands(url, org)


async def _play_a_night(server: Any) -> None:
    """Every kind of Redis call the server makes: appends (with balance guard), reads,
    catch-up, the raffle board, the purchaser vault and self-exclusion list."""
    cashier = await server.connect(token("cashier"))
    dealer = await server.connect(dealer_token("roulette-1"))
    player = await server.connect(player_token("p-1"))
    seller = await server.connect(token("seller"))
    mic = await server.connect(token("member_in_charge"))
    ok(await cashier.cmd("buy_chips", player="p-1", amount=600))
    ok(await dealer.cmd("subscribe", stream="table:roulette-1", since=0))
    ok(await dealer.cmd("open_round", table="roulette-1"))
    ok(
        await player.cmd(
            "place_bet", table="roulette-1", player="p-1", bet={"kind": "red"}, amount=300
        )
    )
    refused = await player.cmd(
        "place_bet", table="roulette-1", player="p-1", bet={"kind": "odd"}, amount=400
    )
    assert refused["error"]["code"] == "insufficient_funds"
    ok(await dealer.cmd("no_more_bets", table="roulette-1"))
    ok(await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "1"}))
    ok(await cashier.cmd("cash_out", player="p-1", amount=100))
    assert len(await dealer.wait_events("table:roulette-1", 6)) == 6
    status, _body = await server.get("/api/bankrolls/players/p-1", token("cashier"))
    assert status == 200
    # A server-dealt Queen of Hearts board (SET NX, GET) and the purchaser vault (scripts).
    config = {
        "name": "Board",
        "location": "Online",
        "price": 100,
        "first_drawing_at": int(time.time() * 1000) + 86_400_000,
        "board": "server",
    }
    ok(await mic.cmd("setup_raffle", raffle="qoh-2", kind="queen_of_hearts", config=config))
    ok(await seller.cmd("sell_ticket", raffle="qoh-2", amount=100))
    ok(await mic.cmd("record_drawing_method", raffle="qoh-2", method="hand", description="drum"))
    ok(await mic.cmd("hold_drawing", raffle="qoh-2", serials=[1]))
    ok(await mic.cmd("reveal_card", raffle="qoh-2", position=5))
    account = {
        "legal_name": "Jane Q. Public",
        "date_of_birth": "1990-04-01",
        "account_number": "ACC-1",
        "address": "1 Elm St, Albany NY",
        "email": "jane@example.org",
        "phone": "518-555-0100",
    }
    pid = ok(await seller.cmd("register_purchaser", account=account))["purchaser"]
    where = {"state": "NY", "lat": 42.65, "lon": -73.75, "accuracy_m": 30}
    sale = {"raffle": QOH, "amount": 200, "channel": "online", "purchaser": pid}
    ok(await seller.cmd("sell_ticket", **sale, location=where))
    entries = [{"legal_name": "Someone Else", "date_of_birth": "1970-01-01"}]
    ok(await mic.cmd("load_self_exclusions", entries=entries))
    ok(await mic.cmd("load_self_exclusions", entries=entries, replace=True))
    ok(await mic.cmd("erase_purchaser", purchaser=pid))
    assert await server.runtime.vault.get(pid) is None


async def _only_its_own_keys_channels_and_commands(url: str, org: str) -> None:
    client = aioredis.Redis.from_url(url)
    try:
        other = keys.balances(f"{org}-other")
        with pytest.raises(redis.exceptions.NoPermissionError):
            await client.hget(other, "p-1")
        with pytest.raises(redis.exceptions.NoPermissionError):
            await client.publish(f"cn:{{{org}-other}}:revocations", b"x")
        for command in (("KEYS", "*"), ("CONFIG", "GET", "*"), ("FLUSHALL",), ("ACL", "LIST")):
            with pytest.raises(redis.exceptions.NoPermissionError):
                await client.execute_command(*command)
        # Its own channels work both ways, for the processes of one organization.
        channel = f"cn:{{{org}}}:revocations"
        pubsub = client.pubsub()
        await pubsub.subscribe(channel)
        assert (await pubsub.get_message(timeout=5))["type"] == "subscribe"
        assert await client.publish(channel, b"token-1") == 1
        got = await pubsub.get_message(timeout=5)
        assert got is not None and got["data"] == b"token-1"
        await pubsub.unsubscribe(channel)
        await pubsub.aclose()
    finally:
        await client.aclose()


# One list of commands: the code, the docs and the deploy files agree.


def _rules_after_password(line: str) -> list[str]:
    """The rules of a ``user casino on <password> <rules...>`` line."""
    words = line.split()
    assert words[:3] == ["user", "casino", "on"], line
    assert words[3].startswith(("#", ">")), line
    return words[4:]


def _acl_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("user casino ")]


def test_the_docs_and_deploy_users_acl_give_the_commands_of_the_code() -> None:
    docs = (ROOT / "docs" / "OPERATIONS.md").read_text()
    (doc_line,) = _acl_lines(docs)
    assert _rules_after_password(doc_line) == access.acl_rules(DOCS_ORG)
    cluster = re.search(r"For a Redis Cluster, add `([^`]+)`", docs)
    assert cluster is not None
    assert cluster.group(1).split() == [f"+{c}" for c in access.CLUSTER_COMMANDS]
    (deploy_line,) = _acl_lines((ROOT / "deploy" / "users.acl").read_text())
    assert _rules_after_password(deploy_line) == access.acl_rules(DOCS_ORG)


def test_every_command_a_lua_script_calls_is_in_the_list() -> None:
    called: set[str] = set()
    for path in [*ROOT.glob("services/**/*.lua"), *ROOT.glob("services/**/*.py")]:
        called |= {
            m.lower() for m in re.findall(r"redis\.p?call\(['\"](\w+)['\"]", path.read_text())
        }
    assert {"xadd", "hincrby", "hdel"} <= called  # the scan sees the scripts
    assert called <= set(access.SERVER_COMMANDS)


async def test_deploy_redis_conf_and_users_acl_start_a_redis_with_that_user(
    tmp_path: Path,
) -> None:
    """deploy/redis.conf with deploy/users.acl (its placeholder hash replaced) starts a real
    redis-server: the default user is off and ``casino`` has the rules of the code. With the
    placeholder left in, Redis refuses to start."""
    password = "correct horse battery staple"
    digest = hashlib.sha256(password.encode()).hexdigest()
    text = (ROOT / "deploy" / "users.acl").read_text()
    placeholder = re.search(r"#(\S+)", _acl_lines(text)[0])
    assert placeholder is not None and not re.fullmatch(r"[0-9a-f]{64}", placeholder.group(1))
    acl = tmp_path / "users.acl"
    acl.write_text(
        text.replace(placeholder.group(0), "#" + digest) + "user admin on >admin-pw ~* &* +@all\n"
    )
    conf = (ROOT / "deploy" / "redis.conf").read_text()
    assert re.search(r"^aclfile \S+$", conf, re.M) and re.search(r"^bind 127\.0\.0\.1", conf, re.M)
    assert re.search(r"^protected-mode yes$", conf, re.M)
    untouched = _redis_with_deploy_conf(free_port(), tmp_path, ROOT / "deploy" / "users.acl")
    assert await asyncio.to_thread(untouched.wait, 10) != 0
    port = free_port()
    proc = _redis_with_deploy_conf(port, tmp_path, acl)
    try:
        casino = aioredis.Redis.from_url(f"redis://casino:{password}@127.0.0.1:{port}/0")
        for _ in range(200):
            try:
                await casino.ping()
                break
            except redis.exceptions.ConnectionError:
                await asyncio.sleep(0.02)
        assert await casino.set(keys.balances(DOCS_ORG), b"x")
        with pytest.raises(redis.exceptions.NoPermissionError):
            await casino.get(keys.balances("another-org"))
        await casino.aclose()
        nobody = aioredis.Redis.from_url(f"redis://127.0.0.1:{port}/0")
        with pytest.raises(redis.exceptions.AuthenticationError):
            await nobody.ping()
        await nobody.aclose()
        admin = aioredis.Redis.from_url(f"redis://admin:admin-pw@127.0.0.1:{port}/0")
        listed = [line.decode() for line in await admin.execute_command("ACL", "LIST")]
        await admin.aclose()
        (line,) = [x for x in listed if x.startswith("user casino ")]
        allowed = {w[1:] for w in line.split() if w.startswith("+")}
        assert allowed == set(access.SERVER_COMMANDS)
        assert f"~{keys.org_pattern(DOCS_ORG)}" in line.split()
        assert f"&{keys.org_pattern(DOCS_ORG)}" in line.split()
        assert any(x.startswith("user default off ") for x in listed)
    finally:
        proc.terminate()
        proc.wait(10)


def _redis_with_deploy_conf(port: int, home: Path, acl: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            redis_server_binary(), str(ROOT / "deploy" / "redis.conf"),
            "--port", str(port), "--dir", str(home), "--aclfile", str(acl),
            "--supervised", "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


# TLS.


@pytest.fixture
async def tls_proxy(
    redis_server: EmbeddedRedis, tmp_path: Path
) -> AsyncIterator[tuple[TlsProxy, Path, Path]]:
    """A TLS server in front of the session Redis; yields it, its CA and an unrelated CA."""
    ca = make_ca(tmp_path, "casino-test-ca")
    stranger = make_ca(tmp_path, "some-other-ca")
    cert, key = issue_server_cert(ca, tmp_path)
    proxy = TlsProxy(redis_server.port, cert, key)
    await proxy.start()
    yield proxy, ca.cert_path, stranger.cert_path
    await proxy.stop()


async def test_rediss_with_the_ca_in_the_url_runs_a_round(
    tls_proxy: tuple[TlsProxy, Path, Path], redis_client: aioredis.Redis, org: str
) -> None:
    proxy, ca, _stranger = tls_proxy
    user = await acl_user(redis_client, org)
    url = user.url(proxy.port, scheme="rediss", query=f"ssl_ca_certs={ca}&ssl_cert_reqs=required")
    server = await start_server(url, night_doc(org))
    try:
        cashier = await server.connect(token("cashier"))
        dealer = await server.connect(dealer_token("roulette-1"))
        player = await server.connect(player_token("p-1"))
        ok(await cashier.cmd("buy_chips", player="p-1", amount=500))
        ok(await dealer.cmd("open_round", table="roulette-1"))
        ok(
            await player.cmd(
                "place_bet", table="roulette-1", player="p-1", bet={"kind": "red"}, amount=100
            )
        )
        ok(await dealer.cmd("no_more_bets", table="roulette-1"))
        done = ok(await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "1"}))
        assert done["paid"] == 200
        assert all(r.ok for r in await verify_all(server.runtime.store))
    finally:
        await server.stop()
    assert proxy.handshakes > 0
    assert await EventStore(redis_client, org).balance("p-1") == 600
    assert await acl_denials(redis_client, user) == []


async def test_an_untrusted_certificate_is_refused(
    tls_proxy: tuple[TlsProxy, Path, Path], redis_client: aioredis.Redis, org: str
) -> None:
    proxy, _ca, stranger = tls_proxy
    user = await acl_user(redis_client, org)
    for query in (f"ssl_ca_certs={stranger}", ""):  # another CA; the system's CAs
        url = user.url(proxy.port, scheme="rediss", query=query)
        with pytest.raises(RedisAccessError, match="certificate verify failed"):
            await open_redis(url)
    assert proxy.handshakes == 0


async def test_the_embedded_redis_is_reached_by_its_unix_socket_with_its_password(
    tmp_path: Path,
) -> None:
    server = EmbeddedRedis(tmp_path / "redis", die_with_parent=False)
    server.start()
    try:
        socket_path = server.socket_path
        assert socket_path is not None and socket_path.is_socket()
        assert stat.S_IMODE(socket_path.stat().st_mode) == 0o700
        assert server.local_url.startswith("unix://") and redact(server.local_url).startswith(
            "unix://:***@"
        )
        client = await open_redis(server.local_url)
        try:
            await client.set("k", "v")
            assert await client.get("k") == b"v"
        finally:
            await close_redis(client)
        # Without the password the socket lets nothing through either.
        bare = aioredis.Redis(unix_socket_path=str(socket_path))
        try:
            with pytest.raises(
                (redis.exceptions.AuthenticationError, redis.exceptions.ConnectionError),
                match="authenticat",
            ):
                await bare.get("k")
        finally:
            await bare.aclose()
    finally:
        server.stop()


def test_a_data_directory_too_deep_for_a_socket_is_reached_by_tcp(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120) / "redis"
    server = EmbeddedRedis(deep, die_with_parent=False)
    assert server.socket_path is None
    server.password = "pw"
    assert server.local_url == server.url and server.url.startswith("redis://")

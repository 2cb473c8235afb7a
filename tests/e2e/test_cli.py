"""The ``casino-night`` command line against the real server process and its data dir."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path

import aiohttp
import redis.asyncio as aioredis

from services.gateway.auth import read_claims, verify
from services.store import keys
from tests.e2e.conftest import ServeFactory
from tests.e2e.serve import EXE, ServeProcess, pid_alive

TABLES = [{"id": "roulette-1", "outcome_mode": "dealer", "options": {}}]


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EXE), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )


async def test_verify_and_replay_attach_to_a_running_servers_redis(serve: ServeFactory) -> None:
    server = await serve("cli-live", TABLES, ["p-1"])
    cashier = await server.connect(server.token("cashier"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=700))["ok"]
    redis_pid = server.redis_pid
    verified = await server.cli("verify")
    assert verified.returncode == 0, verified.stderr
    assert "ok      cage: 1 events" in verified.stdout
    assert "ok      log:" in verified.stdout
    assert "ok      balances: 1 players" in verified.stdout
    replayed = await server.cli("replay", "--show")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.lstrip().startswith("{")  # stdout is the JSON report alone
    # The running server's Redis was used, not stopped; the server still answers.
    assert pid_alive(redis_pid) and server.current_redis_pid() == redis_pid
    assert (await cashier.cmd("buy_chips", player="p-1", amount=1))["ok"]


async def test_a_second_server_on_the_same_data_dir_is_refused(serve: ServeFactory) -> None:
    server = await serve("cli-busy", TABLES, ["p-1"])
    second = await asyncio.to_thread(
        run,
        "serve", "--night", str(server.night), "--data-dir", str(server.data_dir),
        "--port", "0",
        cwd=server.workdir,
        env=server.env(),
    )  # fmt: skip
    assert second.returncode == 2
    assert "another process runs the embedded Redis" in second.stderr
    assert server.running


def test_token_mints_with_the_data_dirs_secret(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CASINO_SECRET"}
    missing = run(
        "token",
        "--role",
        "cashier",
        "--sub",
        "c",
        "--data-dir",
        str(tmp_path),
        cwd=tmp_path,
        env=env,
    )
    assert missing.returncode == 2 and "no secret" in missing.stderr
    (tmp_path / "secret").write_bytes(b"kept-secret")
    made = run(
        "token", "--role", "dealer", "--sub", "d", "--tables", "roulette-1,roulette-2",
        "--ttl", "2h", "--data-dir", str(tmp_path), cwd=tmp_path, env=env,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    who = verify(b"kept-secret", made.stdout.strip(), now=int(time.time()))
    assert (who.role, who.sub, who.tables) == ("dealer", "d", ("roulette-1", "roulette-2"))
    assert 7100 < who.exp - time.time() <= 7200
    # Its id and expiry on stderr, stdout the token alone.
    assert made.stdout.count("\n") == 1
    assert f"token id {who.jti}, expires " in made.stderr and f"({who.exp})" in made.stderr
    inspected = run(
        "token", "--inspect", made.stdout.strip(), "--data-dir", str(tmp_path),
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert inspected.returncode == 0, inspected.stderr
    claims = json.loads(inspected.stdout)
    assert claims["jti"] == who.jti and claims["tables"] == ["roulette-1", "roulette-2"]
    assert {"role", "sub", "iat", "exp", "jti"} <= claims.keys()
    for sub in ("", "tab\tbed", "bell\x07", "nel\u0085"):
        refused = run(
            "token", "--role", "cashier", "--sub", sub, "--data-dir", str(tmp_path),
            cwd=tmp_path, env=env,
        )  # fmt: skip
        assert refused.returncode == 2 and "casino-night token: sub" in refused.stderr
        assert refused.stdout == ""
    other = run(
        "token", "--inspect", made.stdout.strip(), "--data-dir", str(tmp_path), cwd=tmp_path,
        env={**env, "CASINO_SECRET": "another-secret"},
    )  # fmt: skip
    assert other.returncode == 2 and "bad signature" in other.stderr
    bad = run(
        "token", "--role", "owner", "--sub", "x", "--data-dir", str(tmp_path), cwd=tmp_path, env=env
    )
    assert bad.returncode == 2 and "unknown role" in bad.stderr


def test_a_night_the_license_refuses_does_not_start(tmp_path: Path) -> None:
    night = tmp_path / "night.toml"
    night.write_text(
        """
[organization]
id = "org-x"
name = "X"
[license]
number = "GC-1"
games = ["roulette", "black_jack", "big_six", "money_wheel", "craps", "hazard"]
period_start = "2026-11-01"
period_end = "2026-11-30"
[occasion]
id = "n1"
name = "N"
"""
    )
    out = run("serve", "--night", str(night), "--data-dir", str(tmp_path / "d"), cwd=tmp_path)
    assert out.returncode == 2
    assert "6 single types" in out.stderr and "4620.2" in out.stderr


async def _refused_with(server: ServeProcess, tok: str, within: float = 10.0) -> str:
    """Connect with ``tok`` until the server refuses it (a revocation reaches the server a
    moment after the command that made it); the refusal's message."""
    assert server.session is not None
    deadline = time.monotonic() + within
    while True:
        try:
            ws = await server.session.ws_connect(f"{server.base}/ws?token={tok}")
        except aiohttp.WSServerHandshakeError as e:
            assert e.status == 401
            status, body = await server.get("/api/tables", tok)
            assert status == 401
            message: str = body["error"]["message"]
            return message
        await ws.close()
        assert time.monotonic() < deadline, "the token was never refused"
        await asyncio.sleep(0.05)


async def test_token_revoke_refuses_the_token_on_the_running_server(serve: ServeFactory) -> None:
    server = await serve("cli-revoke", TABLES, ["p-1"])
    # The banner prints each token's id beside it.
    banner = {
        line.split()[0]: line.split()[-2:]
        for line in server.out_path().read_text().splitlines()
        if line.startswith("    ") and line.split()[0] in ("cashier", "seller", "dealer")
    }
    assert sorted(banner) == ["cashier", "dealer", "seller"]
    for role, (jti, tok) in banner.items():
        who = read_claims(server.secret, tok)
        assert (who.jti, who.role) == (jti, role)

    minted = await server.cli("token", "--role", "player", "--sub", "tablet-7", "--player", "p-1")
    assert minted.returncode == 0, minted.stderr
    lost = minted.stdout.strip()
    jti = read_claims(server.secret, lost).jti
    tablet = await server.connect(lost)
    await tablet.close()
    cashier = await server.connect(banner["cashier"][1])

    revoked = await server.cli("token", "--revoke", jti)
    assert revoked.returncode == 0, revoked.stderr
    assert revoked.stdout == f"revoked token {jti}\n"
    assert await _refused_with(server, lost) == "token revoked"
    again = await server.cli("token", "--revoke", jti)
    assert again.returncode == 0 and again.stdout == f"token {jti} was already revoked\n"

    # By the whole token too (the banner's seller token), with its expiry recorded.
    seller_jti, seller = banner["seller"]
    by_token = await server.cli("token", "--revoke", seller)
    assert by_token.returncode == 0 and by_token.stdout == f"revoked token {seller_jti}\n"
    assert await _refused_with(server, seller) == "token revoked"
    exp = read_claims(server.secret, seller).exp
    client = aioredis.Redis.from_url(server.embedded_url())
    try:
        stored = await client.hgetall(keys.revoked("cli-revoke"))
    finally:
        await client.aclose()
    assert stored == {jti.encode(): b"0", seller_jti.encode(): str(exp).encode()}

    # Nothing else changed: the other tokens and open sockets work.
    assert (await cashier.cmd("buy_chips", player="p-1", amount=300))["ok"]
    dealer = await server.connect(banner["dealer"][1])
    assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]
    bad = await server.cli("token", "--revoke", "not an id")
    assert bad.returncode == 2 and "neither a token id nor a token" in bad.stderr

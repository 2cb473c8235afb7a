"""The ``casino-night`` command line against the real server process and its data dir."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

from services.gateway.auth import verify
from tests.e2e.conftest import ServeFactory
from tests.e2e.serve import EXE, pid_alive

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

"""The export of a night the real server played, checked by ``tools/verify_export.py`` run
alone (Python and ``cryptography`` only), which names each tampering; and ``casino-night
recall`` on the same night (docs/AUDIT.md).

The night is test_tamper's (its module fixture, played once more for this module): chips
sold to two players, one roulette round lost by p-1, a cash-out; served and stopped."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from events.envelope import expected_hash
from services.export import read_export
from services.store import anchor
from services.store.embedded import EmbeddedRedis
from tests.e2e.serve import EXE, ServeProcess
from tests.e2e.test_tamper import NIGHT, ORG, stopped_night

__all__ = ["stopped_night"]  # test_tamper's fixture: the stopped night's data directory

ROOT = Path(__file__).resolve().parents[2]
VERIFIER = ROOT / "tools" / "verify_export.py"
ISOLATED = """
import importlib.abc, runpy, sys
ROOT = sys.argv[1]
class NoProject(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("events", "services", "projections", "tests", "msgpack"):
            raise ImportError(f"the verifier imported {name}")
        return None
sys.path[:] = [p for p in sys.path if p and p.rstrip("/") not in (ROOT, ROOT + "/tools")]
sys.meta_path.insert(0, NoProject())
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
"""Runs the verifier with ``-I``, the project off ``sys.path`` and any import of it (or of
msgpack) refused: only the standard library and ``cryptography`` are there."""


def verifier(path: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-c", ISOLATED, str(ROOT), str(VERIFIER), str(path), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module")
def night_copy(
    stopped_night: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServeProcess]:
    """A copy of the stopped night for the export and recall commands, its embedded Redis
    running (the commands attach to it, as to a live server's, instead of each starting
    it)."""
    server = ServeProcess(tmp_path_factory.mktemp("export-night"), NIGHT)
    shutil.copytree(stopped_night, server.data_dir)
    redis = EmbeddedRedis(server.data_dir / "redis")
    redis.start()
    try:
        yield server
    finally:
        redis.stop()
        asyncio.run(server.aclose())


@pytest.fixture(scope="module")
def export(night_copy: ServeProcess) -> Path:
    out = night_copy.workdir / "night.jsonl"
    done = asyncio.run(night_copy.cli("export", "--out", str(out)))
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}: 11 events of 3 streams" in done.stdout
    return out


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(d, sort_keys=True, separators=(",", ":")) + "\n" for d in docs)
    )
    return path


def event_index(docs: list[dict[str, Any]], stream: str, seq: int) -> int:
    return next(
        i
        for i, d in enumerate(docs)
        if d["kind"] == "event" and (d["event"]["stream"], d["event"]["seq"]) == (stream, seq)
    )


def broken(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 1, (done.stdout, done.stderr)
    return [x for x in done.stdout.splitlines() if x.startswith("BROKEN")]


def test_the_servers_export_verifies_alone_and_its_totals_are_the_nights(
    export: Path, night_copy: ServeProcess, tmp_path: Path
) -> None:
    done = verifier(export, "--json", cwd=tmp_path)
    assert done.returncode == 0, (done.stdout, done.stderr)
    report = json.loads(done.stdout)
    assert report["ok"] and report["problems"] == [] and report["unpinned"] == {}
    assert (report["events"], report["streams"]) == (11, 3)
    replayed = asyncio.run(night_copy.cli("replay", "--show"))
    assert replayed.returncode == 0, replayed.stderr
    bankrolls = json.loads(replayed.stdout)["bankrolls"]
    [table] = report["totals"]["tables"].items()
    figures = bankrolls["tables"]["roulette-1"]
    assert table[0] == "table:roulette-1"
    assert (table[1]["wagered"], table[1]["paid"], table[1]["house_result"]) == (
        figures["handle"],
        figures["paid_out"],
        figures["house_win"],
    )
    cage = report["totals"]["cage"]
    org = bankrolls["organization"]
    assert (cage["issued"], cage["redeemed"], cage["outstanding"]) == (
        org["issued"],
        org["redeemed"],
        org["outstanding"],
    )
    # The readable report, and the auditor's own copy of the key.
    key_out = tmp_path / "anchor.pub"
    public = anchor.load_signing_key(night_copy.data_dir / anchor.KEY_FILE).public_key()
    key_out.write_text(anchor.public_pem(public) + f"fingerprint: {anchor.fingerprint(public)}\n")
    kept = anchor.checkpoint_dir(night_copy.data_dir, ORG) / anchor.LATEST_FILE
    done = verifier(export, "--public-key", str(key_out), "--checkpoint", str(kept), cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert "11 events of 3 streams, 3 signed checkpoints" in done.stdout
    assert "ok: every chain, checkpoint and count holds" in done.stdout
    assert "table:roulette-1: wagered 1.00, paid 0.00, house result 1.00, rounds 1" in done.stdout
    # read_export gives the audit the same events, in log order, and the checkpoints.
    opened = read_export(export)
    envelopes = list(opened.envelopes())
    assert len(envelopes) == 11 and all(expected_hash(e) == e.hash for e in envelopes)
    assert [e.log_id for e in envelopes] == sorted(
        (e.log_id or "" for e in envelopes), key=lambda x: tuple(map(int, x.split("-")))
    )
    assert opened.signed_checkpoints()[-1].streams["cage"][0] == 3


def test_an_occasion_export_and_bad_requests(night_copy: ServeProcess, tmp_path: Path) -> None:
    out = tmp_path / "occasion.jsonl"
    done = asyncio.run(night_copy.cli("export", "--occasion", "e2e-night", "--out", str(out)))
    assert done.returncode == 0, done.stderr
    header = lines_of(out)[0]
    assert header["scope"] == {
        "occasion": "e2e-night",
        "streams": ["cage", "license", "table:roulette-1"],
    }
    assert verifier(out, cwd=tmp_path).returncode == 0
    missing = tmp_path / "none.jsonl"
    done = asyncio.run(night_copy.cli("export", "--occasion", "no-such", "--out", str(missing)))
    assert done.returncode == 2 and "no occasion 'no-such'" in done.stderr
    assert not missing.exists() and not any(tmp_path.glob(".none.jsonl*"))


def test_recall_prints_the_round_and_refuses_what_was_not_played(night_copy: ServeProcess) -> None:
    done = asyncio.run(night_copy.cli("recall", "--table", "roulette-1", "--round", "1", "--json"))
    assert done.returncode == 0, done.stderr
    recalled = json.loads(done.stdout)
    assert recalled["status"] == "settled" and recalled["outcomes"][0]["outcome"]["pocket"] == "0"
    [bet] = recalled["bets"]
    assert (bet["player"], bet["amount"], bet["settlement"][0]["result"]) == ("p-1", 100, "lost")
    for args, said in [
        (("--table", "roulette-1", "--round", "2"), "round 2 of roulette-1 was not played"),
        (("--table", "roulette-1", "--round", "x"), "a round number is a whole number from 1"),
        (("--table", "nope", "--round", "1"), "unknown table 'nope'"),
    ]:
        done = asyncio.run(night_copy.cli("recall", *args))
        assert done.returncode == 2 and said in done.stderr, (args, done.stderr)


def test_every_tampering_is_named(export: Path, tmp_path: Path) -> None:
    docs = lines_of(export)
    bet = event_index(docs, "table:roulette-1", 3)
    cage1, cage2 = event_index(docs, "cage", 1), event_index(docs, "cage", 2)
    checkpoint = max(i for i, d in enumerate(docs) if d["kind"] == "checkpoint")

    edited = [dict(d) for d in docs]
    edited[bet] = json.loads(json.dumps(docs[bet]))
    edited[bet]["event"]["data"]["amount"] = 1
    lines = broken(verifier(write(tmp_path / "edited.jsonl", edited), cwd=tmp_path))
    assert any(x.startswith("BROKEN  table:roulette-1 seq 3: edited") for x in lines), lines

    deleted = docs[:cage2] + docs[cage2 + 1 :]
    lines = broken(verifier(write(tmp_path / "deleted.jsonl", deleted), cwd=tmp_path))
    assert any(x.startswith("BROKEN  cage seq 2: missing") and "deleted" in x for x in lines), lines

    swapped = list(docs)
    swapped[cage1], swapped[cage2] = docs[cage2], docs[cage1]
    lines = broken(verifier(write(tmp_path / "reordered.jsonl", swapped), cwd=tmp_path))
    assert any(x.startswith("BROKEN  cage seq 1: reordered") for x in lines), lines

    # A checkpoint signed by another key, and one whose head was edited.
    other = Ed25519PrivateKey.generate()
    body = dict(docs[checkpoint]["checkpoint"]["body"])
    body["key"] = anchor.fingerprint(other.public_key())
    forged = list(docs)
    signature = base64.b64encode(other.sign(anchor.canonical(body))).decode()
    forged[checkpoint] = {
        "kind": "checkpoint",
        "checkpoint": {"body": body, "signature": signature},
    }
    lines = broken(verifier(write(tmp_path / "forged.jsonl", forged), cwd=tmp_path))
    assert any("names key " + body["key"] in x for x in lines), lines
    head = json.loads(json.dumps(docs[checkpoint]))
    head["checkpoint"]["body"]["streams"]["cage"]["seq"] = 2
    lines = broken(
        verifier(
            write(tmp_path / "head.jsonl", [*docs[:checkpoint], head, *docs[checkpoint + 1 :]]),
            cwd=tmp_path,
        )
    )
    assert any("its signature does not verify: it was forged or edited" in x for x in lines), lines
    kept = tmp_path / "kept.json"
    kept.write_text(json.dumps(head["checkpoint"]))
    lines = broken(verifier(export, "--checkpoint", str(kept), cwd=tmp_path))
    assert any(f"(your {kept}): its signature does not verify" in x for x in lines), lines

    # A consistent rewrite of the last chip sale: its hash recomputed, the trailer's digest too.
    rewrite = json.loads(json.dumps(docs))
    last = event_index(rewrite, "cage", 3)
    ev = rewrite[last]["event"]
    ev["data"]["amount"] = 5
    from events.envelope import Envelope

    fields = {k: ev[k] for k in ev if k != "log_id"}
    ev["hash"] = expected_hash(Envelope(**fields))
    lines = broken(verifier(write(tmp_path / "rewrite.jsonl", rewrite), cwd=tmp_path))
    assert any(x.startswith("BROKEN  cage seq 3: not the event checkpoint #") for x in lines), lines

    raw = export.read_bytes().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(raw[:-2]))
    lines = broken(verifier(cut, cwd=tmp_path))
    assert any("no trailer: the file was cut short" in x for x in lines), lines
    cut.write_bytes(b"".join(raw[:-1])[:-20])
    lines = broken(verifier(cut, cwd=tmp_path))
    assert any("cut off in the middle" in x for x in lines), lines

    trailer = json.loads(json.dumps(docs))
    trailer[-1]["events"] = 10
    lines = broken(verifier(write(tmp_path / "trailer.jsonl", trailer), cwd=tmp_path))
    assert "BROKEN  trailer: it says 10 events, the file has 11" in lines, lines
    assert "BROKEN  trailer: its signature does not verify: it was forged or edited" in lines

    # The whole file re-signed with another key: the auditor's own copy of the key names it.
    key = tmp_path / "theirs.pub"
    key.write_text(anchor.public_pem(other.public_key()))
    lines = broken(verifier(export, "--public-key", str(key), cwd=tmp_path))
    assert any("is not the key you gave" in x for x in lines), lines


def audit_alone(path: Path, cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """``casino-night audit --export`` as an auditor runs it: no server, no Redis, no night
    file, no data directory (``cwd`` holds none)."""
    out = cwd / f"audit-{path.stem}"
    alone = ["--night", str(cwd / "no-night.toml"), "--data-dir", str(cwd / "no-data")]
    done = subprocess.run(
        [
            str(EXE),
            "audit",
            "--export",
            str(path),
            *alone,
            "--no-progress",
            "--out",
            str(out),
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    assert not (cwd / "no-data").exists()
    return done.returncode, json.loads((out / "audit.json").read_text())


def test_the_audit_recomputes_an_export_alone_and_names_its_tampering(
    export: Path, tmp_path: Path
) -> None:
    code, report = audit_alone(export, tmp_path)
    assert (code, report["ok"], report["events"]) == (0, True, 11), report["discrepancies"]
    checked = {c["name"]: c["checked"] for c in report["checks"]}
    assert checked["settlements"] and checked["chains"]

    docs = lines_of(export)
    settled = next(
        i for i, d in enumerate(docs) if d["kind"] == "event" and d["event"]["type"] == "Settled"
    )
    # A Settled that pays more, its hash recomputed: the chain still breaks at the next
    # checkpointed head, and the rules name the payout that is not theirs.
    rewrite = json.loads(json.dumps(docs))
    ev = rewrite[settled]["event"]
    ev["data"]["paid"] += 100
    from events.envelope import Envelope

    ev["hash"] = expected_hash(Envelope(**{k: ev[k] for k in ev if k != "log_id"}))
    code, report = audit_alone(write(tmp_path / "paid.jsonl", rewrite), tmp_path)
    named = {(d["check"], d["stream"], d["seq"]) for d in report["discrepancies"]}
    assert code == 1
    assert ("settlements", ev["stream"], ev["seq"]) in named, report["discrepancies"]
    assert ("export", "export", None) in named  # and the file is not as it was signed

    raw = export.read_bytes().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(raw[:-2]))
    code, report = audit_alone(cut, tmp_path)
    assert code == 1 and any("cut short" in d["what"] for d in report["discrepancies"])

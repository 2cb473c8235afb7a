"""``casino-night audit --export`` on a file with damaged lines (cut in the middle, not
JSON, an event missing a field or holding one of another type): each is named as a
discrepancy with its line (and its stream and seq when the line still says them) and the
rest of the file is audited; exit status 1, not a crash (docs/AUDIT.md)."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from events.codec import to_json
from services import export
from services.cli import main
from services.store import anchor
from tests.unit.audit.support import T0, night

ORG = "org-audit"


def written(path: Path, lines: dict[int, bytes | None]) -> tuple[Path, list[dict[str, Any]]]:
    """An export of the audit tests' night, as ``write_export`` lays it out and signed, with
    the event lines numbered in ``lines`` replaced by those bytes (None: left out)."""
    key = Ed25519PrivateKey.generate()
    public = key.public_key()
    docs: list[dict[str, Any]] = [
        {
            "kind": "header",
            "format": export.FORMAT,
            "version": export.VERSION,
            "organization": ORG,
            "organization_name": "Audit test",
            "scope": {"occasion": None, "streams": "all"},
            "exported_at": T0,
            "exported_at_utc": "2026-11-17T00:00:00Z",
            "log_end": f"{T0 + len(night())}-0",
        },
        {
            "kind": "key",
            "algorithm": "Ed25519",
            "fingerprint": anchor.fingerprint(public),
            "pem": anchor.public_pem(public),
        },
    ]
    for n, env in enumerate(night()):
        docs.append(
            {"kind": "event", "event": to_json(dataclasses.replace(env, log_id=f"{T0 + n}-0"))}
        )
    body = [export.line_bytes(d) for d in docs]
    for number, raw in lines.items():
        body[number - 1] = raw if raw is not None else b""
    out = b"".join(body)
    trailer: dict[str, Any] = {
        "kind": "trailer",
        "lines": len(docs),
        "events": len(docs) - 2,
        "checkpoints": 0,
        "streams": {},
        "sha256": hashlib.sha256(out).hexdigest(),
    }
    trailer["signature"] = base64.b64encode(key.sign(export.trailer_signed_bytes(trailer))).decode()
    path.write_bytes(out + export.line_bytes(trailer))
    return path, docs


def audit_json(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    code = main(["audit", "--export", str(path), "--no-progress", "--out", str(tmp_path / "out")])
    capsys.readouterr()
    return code, json.loads((tmp_path / "out" / "audit.json").read_text())


def event_line(docs: list[dict[str, Any]], number: int, **change: Any) -> bytes:
    event = dict(docs[number - 1]["event"])
    for k, v in change.items():
        if v is None:
            event.pop(k)
        else:
            event[k] = v
    return export.line_bytes({"kind": "event", "event": event})


def test_damaged_event_lines_are_named_and_the_rest_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, docs = written(tmp_path / "clean.jsonl", {})
    clean, report = audit_json(tmp_path / "clean.jsonl", tmp_path, capsys)
    # a clean file: no checkpoint in it, and the night's players were issued no chips
    assert {d["check"] for d in report["discrepancies"]} == {"checkpoints", "balances"}
    whole = export.line_bytes(docs[10])
    damage = {
        10: whole[: len(whole) // 2] + b"\n",  # cut in the middle
        20: event_line(docs, 20, seq=None),  # a field missing
        30: event_line(docs, 30, data="x"),  # data that is no map
        40: event_line(docs, 40, seq=True),  # a bool for a seq
        50: b'{"event": [1, 2]}\n',  # no event at all
    }
    path, _ = written(tmp_path / "damaged.jsonl", damage)
    code, report = audit_json(path, tmp_path, capsys)
    assert (clean, code) == (1, 1)  # named, not a crash (2 is for what cannot run)
    lines = {
        int(d["what"].split()[1]): d
        for d in report["discrepancies"]
        if d["check"] == "export" and d["what"].startswith("line ")
    }
    assert sorted(lines) == sorted(damage)
    assert (lines[10]["stream"], lines[10]["seq"]) == ("export", None)  # nothing to read
    said = docs[29]["event"]
    assert (lines[30]["stream"], lines[30]["seq"], lines[30]["log_id"]) == (
        said["stream"],
        said["seq"],
        said["log_id"],
    )
    assert "not a map" in lines[30]["what"] and "not JSON" in lines[10]["what"]
    # the events left out break their chains there: the chains name each gap too
    gaps = {(d["stream"], d["seq"]) for d in report["discrepancies"] if d["check"] == "chains"}
    assert (said["stream"], said["seq"]) in gaps
    assert report["events"] == len(docs) - 2 - len(damage)

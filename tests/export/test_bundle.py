"""Support bundle: the three reports, raw captures, probe samples and a manifest of them."""
from __future__ import annotations

import hashlib
import io
import json
import zipfile

import export_runs

from triage.export import render
from triage.export.json_ import comparable
from triage.store import RunRecord


def _unzip(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.testzip() is None
        return {n.split("/", 1)[1]: zf.read(n) for n in zf.namelist()}


def test_bundle_members_and_manifest(record: RunRecord) -> None:
    files = _unzip(render(record, "bundle"))
    assert {"report.md", "report.html", "run.json", "manifest.json", "raw/target-cmdline.txt",
            "raw/005-log-server.log", "raw/006-cmdline-vllm_serve.txt", "probes/001-short-long.json"} <= set(files)
    metrics = sorted(n for n in files if n.startswith("raw/") and "metrics-page" in n)
    assert metrics == [f"raw/00{i}-metrics-page-{name}" for i, name in enumerate(export_runs.PAGES.values(), 1)]
    assert files["raw/003-metrics-page-metrics-livelock-9s.txt"] == \
        (export_runs.REAL / "metrics-livelock-9s.txt").read_bytes()
    assert files["raw/005-log-server.log"] == (export_runs.REAL / "server.log").read_bytes()
    probe = json.loads(files["probes/001-short-long.json"])
    assert probe["outcome"] == "livelock" and probe["request"]["truncate_prompt_tokens"] == 256

    manifest = json.loads(files["manifest.json"])
    assert manifest["document"] == "bundle-manifest" and manifest["run_id"] == record.run.id
    listed = {f["path"]: f for f in manifest["files"]}
    assert set(listed) == set(files) - {"manifest.json"}
    for path, entry in listed.items():
        assert entry["bytes"] == len(files[path]) and entry["sha256"] == hashlib.sha256(files[path]).hexdigest()
    assert listed["raw/005-log-server.log"]["kind"] == "log" and listed["raw/005-log-server.log"]["captured_at"]
    assert comparable(json.loads(files["run.json"])) == comparable(json.loads(render(record, "json")))
    assert files["report.md"].startswith(b"# vLLM embedding triage")
    assert files["report.html"].startswith(b"<!DOCTYPE html>")

"""The stored per-release knowledge: a base snapshot and per-release changes, replayed on demand.

A snapshot is a dict of SECTIONS, each a flat dict keyed by a name (an option, a metric, a log
marker, a pooling case, a refusal text …). A change entry holds, per section, ``set`` (keys with
their new value) and ``del`` (keys gone). No vLLM import: the data was read once by extract.py.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("releases.json")
SECTIONS = ("options", "parser", "pooling_defaults", "batch_rule", "pooler_config", "max_model_len", "scheduler",
            "metrics", "log_formats", "refusals", "envs")


def normalize(raw: dict[str, Any]) -> dict[str, Any]:
    """extract.py's output -> flat sections (what is diffed and stored)."""
    parser = raw.get("parser") or {}
    envs = raw.get("envs") or {}
    snap: dict[str, Any] = {
        "release": raw["release"],
        "wheel": raw.get("wheel"),
        "options": parser.get("options", {}),
        "parser": {k: v for k, v in parser.items() if k != "options"},
        "pooling_defaults": raw.get("pooling_defaults") or {},
        "batch_rule": raw.get("batch_rule") or {},
        "pooler_config": raw.get("pooler_config") or {},
        "max_model_len": raw.get("max_model_len") or {},
        "scheduler": raw.get("scheduler") or {},
        "metrics": raw.get("metrics") or {},
        "log_formats": {k: v for k, v in (raw.get("log_formats") or {}).items() if v},
        "refusals": raw.get("refusals") or {},
        "envs": {n: envs.get("file", "vllm/envs.py") for n in envs.get("names", [])},
    }
    return snap


def diff_snapshots(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for section in SECTIONS:
        a, b = old.get(section) or {}, new.get(section) or {}
        sets = {k: v for k, v in b.items() if a.get(k) != v}
        dels = sorted(k for k in a if k not in b)
        if sets or dels:
            out[section] = {k: v for k, v in (("set", sets), ("del", dels)) if v}
    if new.get("wheel") != old.get("wheel"):
        out["wheel"] = new.get("wheel")
    return out


@lru_cache(maxsize=2)
def load_data(path: Path = DATA) -> dict[str, Any]:
    return json.loads(path.read_text())


def known_releases(data: dict[str, Any] | None = None) -> list[str]:
    d = data or load_data()
    return [d["base"]["release"], *(c["release"] for c in d["changes"])]


def _replay(release: str, data: dict[str, Any]) -> dict[str, Any]:
    base = data["base"]
    snap = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    if release == base["release"]:
        return snap
    for change in data["changes"]:
        for section in SECTIONS:
            delta = change.get(section)
            if not delta:
                continue
            cur = snap.setdefault(section, {})
            for k in delta.get("del", ()):
                cur.pop(k, None)
            cur.update(delta.get("set", {}))
        snap["release"] = change["release"]
        if "wheel" in change:
            snap["wheel"] = change["wheel"]
        if change["release"] == release:
            return snap
    raise KeyError(f"vLLM {release} is not in the knowledge data (known: {', '.join(known_releases(data))})")


@lru_cache(maxsize=64)
def _cached(release: str) -> dict[str, Any]:
    return _replay(release, load_data())


def materialize(release: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    """The full snapshot of one known release (KeyError when unknown)."""
    if data is not None:
        return _replay(release, data)
    return _cached(release)


materialize.cache_clear = _cached.cache_clear  # type: ignore[attr-defined]

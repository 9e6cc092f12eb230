"""Every repeatable CLI option takes both forms, ``--opt A B`` and ``--opt A --opt B`` (argparse
``action="extend"``): `lab prometheus up --scrape A --scrape B` used to scrape only B."""
from __future__ import annotations

import argparse
import shutil

import httpx
import pytest

from triage.cli import build_parser, main

# (argv before the option, option, values, argv after): one row per repeatable option in triage/cli/*
CASES = [
    pytest.param(["lab", "prometheus", "up"], "--scrape", ["http://127.0.0.1:9", "http://127.0.0.1:10"], [],
                 id="lab-prometheus-scrape"),
    pytest.param(["lab", "prometheus", "up"], "--rules", ["a.yml", "b.yml"], [], id="lab-prometheus-rules"),
    pytest.param(["check"], "--answer", ["gpu_name=NVIDIA GeForce RTX 3080 Ti", "vllm_version=0.28.0"], [],
                 id="check-answer"),
    pytest.param(["check"], "--kube-file", ["describe.txt", "pod.yaml"], [], id="check-kube-file"),
    pytest.param(["probe", "--url", "http://x"], "--set", ["seed", "conformance"], [], id="probe-set"),
    pytest.param(["probe", "--url", "http://x"], "--only", ["seed-*", "conformance-v1-prefix"], [], id="probe-only"),
    pytest.param(["report", "latest"], "--redact", ["secret-a", "secret-b"], [], id="report-redact"),
    pytest.param(["knowledge", "refresh"], "--vllm", ["0.31.0", "0.32.0"], [], id="knowledge-refresh-vllm"),
    pytest.param(["lab", "matrix"], "--vllm", ["0.31.0", "0.32.0"], [], id="lab-matrix-vllm"),
]
DEST = {"--set": "sets"}


def _dest(opt: str) -> str:
    return DEST.get(opt, opt.lstrip("-").replace("-", "_"))


@pytest.mark.parametrize("before, opt, values, after", CASES)
def test_both_forms_give_every_value(before: list[str], opt: str, values: list[str], after: list[str]) -> None:
    p = build_parser()
    one_flag = p.parse_args([*before, opt, *values, *after])
    repeated = p.parse_args([*before, *[x for v in values for x in (opt, v)], *after])
    mixed = p.parse_args([*before, opt, *values, opt, values[0], *after])
    assert getattr(one_flag, _dest(opt)) == values
    assert getattr(repeated, _dest(opt)) == values
    assert getattr(mixed, _dest(opt)) == [*values, values[0]]


def _options(p: argparse.ArgumentParser, path: str = "") -> list[tuple[str, argparse.Action]]:
    out = []
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                out += _options(sp, f"{path} {name}".strip())
        elif a.option_strings:
            out.append((path, a))
    return out


def test_no_repeatable_option_keeps_only_its_last_use() -> None:
    """A guard for options added later: a list-valued option either extends or is not repeatable at all."""
    bad = [f"{path} {a.option_strings[-1]}" for path, a in _options(build_parser())
           if (a.nargs in ("+", "*") or isinstance(a, argparse._AppendAction))
           and not isinstance(a, argparse._ExtendAction)]
    assert not bad, bad
    covered = {p.values[1] for p in CASES}
    listed = {a.option_strings[-1] for _, a in _options(build_parser()) if isinstance(a, argparse._ExtendAction)}
    assert listed == covered, "a repeatable option without its row in CASES"


def test_real_prometheus_scrapes_every_repeated_target(capsys: pytest.CaptureFixture[str]) -> None:
    if not shutil.which("prometheus"):
        pytest.skip("Debian prometheus not installed")
    assert main(["lab", "prometheus", "up", "--scrape", "http://127.0.0.1:9", "--scrape", "http://127.0.0.1:10",
                 "http://127.0.0.1:11"]) == 0
    url = capsys.readouterr().out.strip().splitlines()[-1]
    try:
        cfg = httpx.get(f"{url}/api/v1/status/config", timeout=5).json()["data"]["yaml"]
        assert all(f"127.0.0.1:{port}" in cfg for port in (9, 10, 11)), cfg
    finally:
        assert main(["lab", "prometheus", "down", url]) == 0

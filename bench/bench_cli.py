"""Start-up cost of the CLI: ``--help`` and usage errors, as a ratio to ``python -c pass``.

The top level dispatches lazily (triage/cli/__init__.py): it imports a command's module only for that
command, so ``--help``, ``--version``, no command and a wrong command read no SQLAlchemy, httpx or engine.
A command's own usage error imports that command's module (and what it imports at its top).

    python bench/bench_cli.py [--repeat 15]

Each line: the case, its best wall time of ``--repeat`` runs in a child process from the repository root (the
machine is shared: a median carries other processes' load) and its ratio to ``python -c pass`` measured the same
way; then the best CPU time (user + system) and its ratio, which the other processes' load moves less.
Last line: ``cli --help: X s (ratio R to python -c pass); goal <= 0.3 s``.
"""
from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 0.3
CASES: dict[str, list[str]] = {
    "python -c pass": ["-c", "pass"],
    "--help": ["-m", "triage", "--help"],
    "--version": ["-m", "triage", "--version"],
    "no command": ["-m", "triage"],
    "wrong command": ["-m", "triage", "no-such-command"],
    "wrong option": ["-m", "triage", "--no-such-option"],
    "lab --help": ["-m", "triage", "lab", "--help"],
    "fleet --bad": ["-m", "triage", "fleet", "--bad"],
    "logs (no file)": ["-m", "triage", "logs"],
    "check --bad": ["-m", "triage", "check", "--bad"],
    "probe (no url)": ["-m", "triage", "probe"],
    "report --bad": ["-m", "triage", "report", "--bad"],
    "import --bad": ["-m", "triage", "import", "--bad"],
    "watch (no url)": ["-m", "triage", "watch"],
    "dashboard --bad": ["-m", "triage", "dashboard", "--port", "x"],
}


def best_s(args: list[str], repeat: int) -> tuple[float, float]:
    """Best wall time and best CPU time (user + system of the child: less moved by the other processes' load)."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        best_cpu = min(best_cpu, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return best, best_cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    a = ap.parse_args()
    base, base_cpu = best_s(CASES["python -c pass"], a.repeat)
    help_s = base
    for name, args in CASES.items():
        s, cpu = best_s(args, a.repeat)
        if name == "--help":
            help_s = s
        print(f"{name:<16} {s:6.3f} s  ratio {s / base:4.1f}   cpu {cpu:6.3f} s  ratio {cpu / base_cpu:4.1f}")
    print(f"cli --help: {help_s:.3f} s (ratio {help_s / base:.1f} to python -c pass); goal <= {GOAL_S} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

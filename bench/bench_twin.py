"""Reproduce plus the fixes of the seed deployment on a lab twin, timed (issue 30: <= 3 minutes with a warm lab).

The seed's deployment (the 0.28.0 docker line, --max-model-len 2048, truncation 2048, a 12 GiB card's budget 2048)
is planned on the installed releases (0.31.0 stands in for 0.28.0 when 0.28.0 is not installed, said), reproduced,
and each of its record's fixes verified on its own twin. Prints each progress line with its time since the start,
then the whole time, the outcome and the ratio to the 180 s goal. Every twin server is stopped afterwards.

    python3 bench/bench_twin.py            # needs `python -m triage lab install --vllm 0.31.0` and 0.32.0
"""
from __future__ import annotations

import sys
import time

from triage.lab.install import installed_releases
from triage.twin.plan import plan_twin
from triage.twin.reproduce import reproduce

GOAL_S = 180.0
SEED = {"vllm_version": "0.28.0", "model": "Qwen/Qwen3-Embedding-4B", "runner": "pooling", "convert": "embed",
        "max_model_len": 2048, "max_num_batched_tokens": 2048}


def main() -> int:
    installed = installed_releases()
    if not installed:
        print("no lab release installed: python -m triage lab install --vllm 0.31.0", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    plan = plan_twin(SEED, 2048, installed)
    print(f"plan: {plan.release.why}")
    res = reproduce(plan, installed, progress=lambda m: print(f"{time.monotonic() - t0:7.1f} s  {m}", flush=True))
    took = time.monotonic() - t0
    print(f"reproduced: {res.reproduced}; fixes verified: {sum(f['verified'] for f in res.fixes)} of "
          f"{len(res.fixes)}")
    print(f"reproduce + fixes: {took:.1f} s = {took / GOAL_S:.2f} x the {GOAL_S:.0f} s goal")
    return 0 if res.reproduced and all(f["verified"] for f in res.fixes) else 1


if __name__ == "__main__":
    sys.exit(main())

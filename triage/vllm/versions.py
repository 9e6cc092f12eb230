"""vLLM version parsing and the known pooling bugs with the version ranges they affect.

Ranges were read from vLLM release wheels (vllm/v1/core/sched/scheduler.py at each tag) and the
issue threads; see /work/shared/reference/vllm-embedding-facts.md §1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Version = tuple[int, int, int]

_VERSION_RE = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(text: str | None) -> Version | None:
    """'0.31.0', 'v0.32.0', '0.31.0+cpu', '0.11.2.dev3' -> (0, 31, 0); None when not a version."""
    if not text:
        return None
    m = _VERSION_RE.search(str(text).strip())
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def fmt(v: Version) -> str:
    return ".".join(str(x) for x in v)


@dataclass(frozen=True)
class KnownBug:
    """A vLLM bug that matters to embedding serving, with the releases it affects."""

    id: str
    title: str
    affected: tuple[tuple[Version, Version], ...]  # [low, high) ranges
    fixed_in: Version | None
    refs: tuple[str, ...] = field(default_factory=tuple)
    note: str = ""

    def affects(self, v: Version) -> bool:
        return any(lo <= v < hi for lo, hi in self.affected)


# The reference failure. Buggy form `1 if not is_diffusion else 0` read in 0.25.1 … 0.31.0; a hard
# `-1` with the same effect in 0.10.2 … 0.23.0; 0.24.x–0.25.0 were not read and are assumed
# affected (the fix landed only in 0.32.0). Fix PR #48039.
POOLING_LIVELOCK = KnownBug(
    id="55427",
    title="pooling request of exactly max_model_len tokens livelocks when chunked",
    affected=(((0, 10, 2), (0, 32, 0)),),
    fixed_in=(0, 32, 0),
    refs=("vllm#55427", "vllm#48039", "vllm#47971", "vllm#24704", "vllm#29496", "vllm#31206"),
    note="fixed by vllm#48039 in 0.32.0 (pooling reserves 0 sampled-token slots)",
)

LIVELOCK_FIRST_AFFECTED: Version = (0, 10, 2)
LIVELOCK_FIXED_IN: Version = (0, 32, 0)

# Reported on one release each; we do not know their full range, so the version check only
# mentions them as related when the server is older than the fix release.
REPORTED: tuple[tuple[str, str, str], ...] = (
    ("vllm#42381", "0.20.1", "deadlock after a validation error at max_model_len+1"),
    ("vllm#39734", "", "request larger than the KV cache but within max_model_len waits forever"),
    ("vllm#16334", "", "hangs with data parallel > 1"),
    ("vllm#25568", "", "crash with ~6000 inputs in one request"),
)

KNOWN_BUGS: tuple[KnownBug, ...] = (POOLING_LIVELOCK,)


def bugs_affecting(v: Version) -> list[KnownBug]:
    return [b for b in KNOWN_BUGS if b.affects(v)]

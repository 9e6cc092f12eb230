"""What the log pass keeps of one kind of error line (a count, the first lines, the regex groups), and the rule
tables' reading: the first rule whose marker is in a message and whose regex matches it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Optional

MarkedRules = tuple[tuple[str, tuple[tuple[Optional[str], re.Pattern[str]], ...]], ...]


def marked(rules: Iterable[tuple[str, Sequence[re.Pattern[str]]]],
           markers: Mapping[str, Sequence[Optional[str]]]) -> MarkedRules:
    """Each rule's regexes paired with a substring every match contains (None: always run the regex)."""
    return tuple((check, tuple(zip(markers[check], rxs, strict=True))) for check, rxs in rules)


def first_match(rules: MarkedRules, msg: str) -> Optional[tuple[str, dict[str, str]]]:
    """(check, named groups + "matched") of the first rule that matches the message: one kind per line."""
    for check, rxs in rules:
        for marker, rx in rxs:
            if marker is not None and marker not in msg:
                continue
            m = rx.search(msg)
            if m:
                groups = {k: v for k, v in m.groupdict().items() if v is not None}
                groups["matched"] = m.group(0)
                return check, groups
    return None


@dataclass
class ErrorHits:
    check: str
    count: int = 0
    lines: list[tuple[int, str]] = field(default_factory=list)
    groups: dict[str, str] = field(default_factory=dict)  # named regex groups of the first hit
    first_ts: Optional[float] = None


# substrings of the client-text rules added for apps and gateways in front of vLLM (triage/logs/client_causes.py):
# a pasted line without any of them (or the readers' older hints) is never read by the error rules
CLIENT_TEXT_HINTS: tuple[str, ...] = (
    "imension mismatch", "page not found", "request body", "upstream", "nginx", "<center>", "no Route matched",
    "does not support parameters", "Invalid model name", "Model with name", "ubeAI", "ubeai", "IBrix", "ibrix",
    'ode":', "ode':", "status_code: ", "total_tokens", "prompt_token", "completion_token", "oken usage",
    "oken statistic", "oken count", "token总量", "token统计", "osine", "缓存", "同一", "第二次",
    "same text", "same string", "same input", "identical", "second call", "second request", "prefix cach",
    "prefix-cach", "prefix_cach", "cache hit", "scend", "asend", "vllm-gaudi", "vllm-metal", "vllm-spyre",
    "vllm-neuron", "HPU",
)

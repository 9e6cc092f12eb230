"""Clue builders for refusals: a start-up refusal told apart by the log's error lines, a rejected request by
its status and message, and a config value that makes a record possible or rules it out.

The facts they read (``Case.facts``, put there by the readers into their findings' ``evidence["facts"]``):
- ``startup.error``: the error lines a start-up log ends with (one string, lines joined by newlines), written
  by ``triage.logs.startup_findings`` on every refusal finding;
- ``reject.status`` (int) and ``reject.message`` (str): an over-long or otherwise refused request, written by
  the conformance probe and the log's request errors; ``reject.context_length`` (int): the N of "This
  model's maximum context length is N tokens"; ``server.max_model_len`` (int): what /v1/models says;
- config keys (``encoder_only``, ``enable_prefix_caching``, ``pooler_config``…) through ``Case.get``.
Pure: imports nothing of the project but the symptom vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Optional

from triage.catalogue.symptoms import Case, Clue, Weight

STARTUP_ERROR = "startup.error"
REJECT_STATUS = "reject.status"
REJECT_MESSAGE = "reject.message"
REJECT_CONTEXT_LENGTH = "reject.context_length"
SERVER_MAX_MODEL_LEN = "server.max_model_len"


def _patterns(names: tuple[str, ...]) -> list[re.Pattern[str]]:
    """The compiled patterns of ``triage.vllm.logformats`` by name (a name may hold a tuple of patterns)."""
    from triage.vllm import logformats  # noqa: PLC0415 - lazy: vLLM's words live there, above the catalogue

    out: list[re.Pattern[str]] = []
    for n in names:
        v = getattr(logformats, n)
        out.extend(v if isinstance(v, tuple) else (v,))
    return out


def _search(names: tuple[str, ...], text: str) -> Optional[re.Match[str]]:
    for rx in _patterns(names):
        m = rx.search(text)
        if m:
            return m
    return None


# the log findings of a start-up refusal (triage/logs/startup_findings.py): a root cause an EngineCore failure follows
REFUSAL_CHECKS = ("log-removed-flag", "log-bad-arguments", "log-max-model-len", "log-gpu-memory-shared", "log-dtype",
                  "log-kv-cache-dtype", "log-mrv2-pooling", "log-encoder-prefix-caching")

# every start-up refusal the log readers know (names in triage.vllm.logformats): a start-up error that matches one
# of them is that refusal, which rules the other refusal records out
REFUSAL_PATTERNS = ("UNRECOGNIZED_ARGS_RE", "REMOVED_PARAMETER_RE", "MAX_LEN_ABOVE_DERIVED_RE", "FREE_MEMORY_RE",
                    "BF16_REFUSED_RE", "OOM_RES", "KV_DTYPE_REFUSED_RE", "MRV2_POOLING_RE", "ENCODER_PREFIX_CACHING_RE",
                    "KV_TOO_SMALL_RE", "HEAD_DIM_RES")


def startup_error_says(name: str, patterns: tuple[str, ...], what: str) -> Clue:
    """For (decisive) when the log's start-up error lines match one of ``patterns`` (names in
    ``triage.vllm.logformats``); against, decisive when they match another known refusal (``REFUSAL_PATTERNS``),
    else not (an error line we cannot read may still be this one's)."""

    def read(case: Case) -> Optional[Weight]:
        text = case.fact(STARTUP_ERROR)
        if not isinstance(text, str) or not text:
            return None
        m = _search(patterns, text)
        if m:
            return Weight("for", f"the start-up log says {m.group(0)[:160]!r} ({what})", "log", decisive=True)
        other = _search(tuple(p for p in REFUSAL_PATTERNS if p not in patterns), text)
        if other:
            return Weight("against", f"the start-up log names another refusal: {other.group(0)[:120]!r}", "log",
                          decisive=True)
        return Weight("against", f"the start-up log's error lines do not say {what}", "log")

    return Clue(name, read)


def rejected_with(name: str, statuses: tuple[int, ...], patterns: tuple[str, ...], what: str,
                  refine: Optional[Callable[[Case, re.Match[str]], Optional[Weight]]] = None) -> Clue:
    """For when a request was refused with one of ``statuses`` and a message matching one of ``patterns``
    (names in ``triage.vllm.logformats``; ``refine`` may turn the match into another weight, e.g. by the
    numbers it names); against (decisive) when the refusal's status or message is another's."""

    def read(case: Case) -> Optional[Weight]:
        got, msg = case.fact(REJECT_STATUS), case.fact(REJECT_MESSAGE)
        if got is None and msg is None:
            return None
        m = _search(patterns, str(msg or ""))
        if got in statuses and m:
            if refine is not None:
                w = refine(case, m)
                if w is not None:
                    return w
            return Weight("for", f"requests are refused with {got} {m.group(0)[:120]!r} ({what})", "api")
        return Weight("against", f"the refusal is {got} {str(msg or '')[:100]!r}, not {what}", "api", decisive=True)

    return Clue(name, read)


def config_is(name: str, key: str, want: Any, seen_for: str, seen_against: str = "",
              decisive_against: bool = False) -> Clue:
    """For when config/fact ``key`` equals ``want``; against (when ``seen_against`` is given) when it is known
    and differs. Missing is no evidence."""

    def read(case: Case) -> Optional[Weight]:
        v = case.get(key)
        if v is None:
            return None
        if v == want:
            return Weight("for", seen_for.format(v=v), "config")
        if seen_against:
            return Weight("against", seen_against.format(v=v), "config", decisive=decisive_against)
        return None

    return Clue(name, read)


def context_length_of(message: object) -> Optional[int]:
    """The N of "This model's maximum context length is N tokens" in a refusal's message, else None."""
    m = _search(("MAX_CONTEXT_RE",), str(message or ""))
    return int(m["n"]) if m else None

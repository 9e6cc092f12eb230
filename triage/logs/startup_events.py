"""Start-up refusals, overrides and the 'server is up' mark, as a log shows them (``StartupEvents``, streaming)."""
from __future__ import annotations

from collections import deque
from typing import Any, Optional

from triage.logs.hits import ErrorHits
from triage.logs.lines import LogLine
from triage.logs import startup_plan
from triage.logs.startup_plan import MessagePlan, message_plan

EVIDENCE_LINES = 5  # lines kept per start-up event kind
EVENT_TAIL = 8


def _text(raw: Any) -> str:
    """A tail entry's text: the line, or the bytes of a line the chunked scan has not decoded (with a CRLF's `\r`)."""
    if isinstance(raw, str):
        return raw
    return raw.rstrip(b"\r").decode("utf-8", "replace")



class StartupEvents:
    """Start-up refusals, overrides and the 'server is up' mark, as a log shows them (streaming).

    ``hits`` maps a check id (log-removed-flag, log-max-model-len, …) to the lines that showed it;
    ``supported_tasks`` is the API server's `Supported tasks: [...]`; ``started`` is the line number
    where the API server said it listens (None: the log never got there).
    """

    def __init__(self) -> None:
        self.hits: dict[str, ErrorHits] = {}
        self.supported_tasks: Optional[list[str]] = None
        self.tasks_line: Optional[tuple[int, str]] = None
        self.started: Optional[int] = None
        # the log's last few records: (line, text), or (line, bytes) from the chunked scan
        self._tail: deque[tuple[int, Any]] = deque(maxlen=EVENT_TAIL)

    @property
    def last_lines(self) -> list[tuple[int, str]]:
        """The log's last few records, for a start that just stops."""
        return [(n, _text(raw)[:500]) for n, raw in self._tail]

    def tail(self, lineno: int, raw: str) -> None:
        """Keep a record in the tail only (what feed does with a record no pattern reads)."""
        self._tail.append((lineno, raw))  # cut to 500 chars when read (last_lines)

    def reads(self, msg: str) -> bool:
        """Whether feed would do more with this message than keep it in the tail (a cheap substring test)."""
        return (
            "Supported tasks" in msg
            or "Defaulting to '" in msg
            or startup_plan.has_event_hint(msg)
            or (self.started is None and ("Starting vLLM" in msg or "startup complete" in msg))
        )

    def feed(self, line: LogLine) -> None:
        """Every record: keeps the tail; the patterns run only on lines that carry one of their markers."""
        self.feed_plan(message_plan(line.msg), line.lineno, line.raw, line.ts)

    def feed_plan(self, plan: MessagePlan, lineno: int, raw: str, ts: Optional[float]) -> None:
        """feed() for a record given as fields and its message's plan (what the patterns read in it)."""
        self._tail.append((lineno, raw))  # cut to 500 chars when read (last_lines)
        if self.started is None and plan.started:
            self.started = lineno
        if plan.tasks is not None:
            self.supported_tasks = list(plan.tasks)
            self.tasks_line = (lineno, raw[:500])
            return
        if plan.event is None:
            return
        check, groups = plan.event
        hit = self.hits.get(check)
        if hit is None:
            hit = self.hits[check] = ErrorHits(check, first_ts=ts, groups=dict(groups))
        hit.count += 1
        if len(hit.lines) < EVIDENCE_LINES:
            hit.lines.append((lineno, raw[:500]))

"""Python tracebacks in a log or a paste: exception type and message, frames, the innermost vLLM frame, the chain.

Fed one record message at a time (the prefixes ``(EngineCore_DP0 pid=…)`` and ``ERROR 05-12 10:11:12 [core.py:123]``
already stripped by triage.logs.lines.frame), in order; each process's lines are read apart, so an API server's
traceback interleaved with the engine's stays two tracebacks. What a line is comes from the patterns of
triage/vllm/logformats.toml (``TRACEBACK_*``, ``EXCEPTION_LINE_RE`` and the crash signatures' code lines). Bounded:
at most ``MAX_TRACES`` tracebacks kept (the first and the last ones), ``MAX_FRAMES`` frames each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from triage.vllm import logformats as lf

MAX_TRACES = 12
MAX_FRAMES = 60
MAX_PROCESSES = 32
# a message a traceback line can be: the cheap substrings every one of them holds (is_trace_line's gate)
_GATES = ("Traceback (", 'File "', "rror", "xception", "exception", "Exit", "Interrupt", "Fault", "Warning",
          "num_scheduled_tokens", "sampling_params.seed", "LLM(")
# code lines a crash signature reads (a code line has no marker of its own: only these are kept)
CODE_RES: tuple[re.Pattern[str], ...] = (lf.NUM_SCHEDULED_NONE_CODE_RE, lf.SAMPLING_SEED_CODE_RE, lf.LLM_CALL_CODE_RE)


def is_trace_line(msg: str) -> bool:
    """Whether a record's message is a traceback line the reader keeps (pure in the message: memoised by callers)."""
    if not any(g in msg for g in _GATES):
        return False
    return bool(lf.TRACEBACK_START_RE.match(msg) or lf.TRACEBACK_FRAME_RE.match(msg) or lf.TRACEBACK_CHAIN_RE.match(msg)
                or lf.EXCEPTION_LINE_RE.match(msg) or any(rx.search(msg) for rx in CODE_RES))


@dataclass
class Frame:
    """One ``File "…", line N, in func`` of a traceback (``code``: its code line, when a signature kept it)."""

    file: str
    line: int
    func: str
    code: str = ""

    @property
    def vllm_module(self) -> Optional[str]:
        """The file's path inside the vllm package (``v1/worker/gpu_model_runner.py``), None outside vLLM."""
        m = lf.VLLM_FRAME_FILE_RE.search(self.file.replace("\\", "/"))
        return m["mod"] if m else None

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "func": self.func, **({"code": self.code} if self.code else {})}


@dataclass
class Trace:
    """One traceback (or a fragment of one: frames without the header, an exception line alone)."""

    first_line: int
    process: Optional[str] = None
    frames: list[Frame] = field(default_factory=list)
    code: list[str] = field(default_factory=list)  # signature code lines seen with no frame before them
    exc_type: str = ""
    exc_msg: str = ""
    exc_line: Optional[int] = None
    header: bool = False  # began with `Traceback (most recent call last):`
    cause: Optional[Trace] = None  # the exception printed before it, "the above exception was the direct cause"
    text: list[tuple[int, str]] = field(default_factory=list)  # the lines read, for the evidence (bounded)

    @property
    def exc_name(self) -> str:
        """The exception's class name without its module (``EngineDeadError``)."""
        return self.exc_type.rsplit(".", 1)[-1]

    @property
    def innermost_vllm(self) -> Optional[Frame]:
        """The last frame in vLLM's own code: where vLLM was when it raised."""
        return next((f for f in reversed(self.frames) if f.vllm_module), None)

    def codes(self) -> list[str]:
        """Every code line kept: the frames' and the loose ones."""
        return [f.code for f in self.frames if f.code] + self.code

    def exception_text(self) -> str:
        return f"{self.exc_type}: {self.exc_msg}" if self.exc_msg else self.exc_type

    def chain(self) -> list[Trace]:
        """This traceback and its causes, the innermost cause last."""
        out: list[Trace] = []
        t: Optional[Trace] = self
        while t is not None and len(out) < 8:
            out.append(t)
            t = t.cause
        return out

    def to_dict(self) -> dict[str, Any]:
        inner = self.innermost_vllm
        return {
            "exception": self.exc_type,
            "message": self.exc_msg[:500],
            "line": self.exc_line or self.first_line,
            "process": self.process,
            "innermost_vllm_frame": (
                {"module": inner.vllm_module, "function": inner.func, "line": inner.line} if inner else None),
            "frames": [f.to_dict() for f in self.frames[-12:]],
            **({"code": self.code[:4]} if self.code else {}),
            **({"cause": self.cause.exception_text()[:300]} if self.cause and self.cause.exc_type else {}),
        }


class Tracebacks:
    """The streaming reader: ``feed`` every traceback line (``is_trace_line``) in order, then ``done``."""

    def __init__(self) -> None:
        self._open: dict[Optional[str], Trace] = {}
        self._chained: dict[Optional[str], Trace] = {}  # a closed trace a chain line said is the next one's cause
        self._last: dict[Optional[str], Trace] = {}
        self.first: list[Trace] = []
        self.last: list[Trace] = []
        self.count = 0

    def feed(self, lineno: int, msg: str, process: Optional[str] = None) -> None:
        """One traceback line (its message, the prefixes stripped) from ``process`` (None: no prefix)."""
        text = msg.strip()
        if lf.TRACEBACK_START_RE.match(text):
            self._close(process)
            self._start(lineno, process, header=True)
            return
        if lf.TRACEBACK_CHAIN_RE.match(text):
            self._close(process)
            last = self._last.get(process)
            if last is not None:
                self._chained[process] = last
            return
        t = self._open.get(process)
        if (m := lf.TRACEBACK_FRAME_RE.match(text)) is not None:
            t = t if t is not None else self._start(lineno, process)
            if len(t.frames) < MAX_FRAMES:
                t.frames.append(Frame(m["file"], int(m["line"]), m["func"]))
            self._keep(t, lineno, text)
            return
        if (m := lf.EXCEPTION_LINE_RE.match(text)) is not None:
            t = t if t is not None else self._start(lineno, process)
            t.exc_type, t.exc_msg, t.exc_line = m["type"], (m["msg"] or "").strip(), lineno
            self._keep(t, lineno, text)
            self._close(process)
            return
        if any(rx.search(text) for rx in CODE_RES):
            t = t if t is not None else self._start(lineno, process)
            if t.frames and not t.frames[-1].code:
                t.frames[-1].code = text[:300]
            elif len(t.code) < 8:
                t.code.append(text[:300])
            self._keep(t, lineno, text)

    def _start(self, lineno: int, process: Optional[str], header: bool = False) -> Trace:
        if process not in self._open and len(self._open) >= MAX_PROCESSES:
            self._close(next(iter(self._open)))
        t = self._open[process] = Trace(lineno, process, header=header)
        cause = self._chained.pop(process, None)
        if cause is not None:
            t.cause = cause
        return t

    @staticmethod
    def _keep(t: Trace, lineno: int, text: str) -> None:
        if len(t.text) < 40:
            t.text.append((lineno, text[:500]))

    def _close(self, process: Optional[str]) -> None:
        t = self._open.pop(process, None)
        if t is None:
            return
        self.count += 1
        self._last[process] = t
        if len(self._last) > MAX_PROCESSES:
            self._last.pop(next(iter(self._last)))
        half = MAX_TRACES // 2
        if len(self.first) < half:
            self.first.append(t)
            return
        self.last.append(t)
        if len(self.last) > half:
            self.last.pop(0)

    def done(self) -> list[Trace]:
        """Every traceback kept, in line order (the open ones closed: a paste may end mid-traceback)."""
        for process in list(self._open):
            self._close(process)
        return sorted(self.first + self.last, key=lambda t: t.first_line)


def read_text(text: str) -> list[Trace]:
    """The tracebacks of a pasted text (a log, a traceback, a client's error output), read line by line."""
    from triage.logs.lines import Clock, frame  # noqa: PLC0415 - lines imports nothing of this module

    reader = Tracebacks()
    clock = Clock(None)
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not any(g in raw for g in _GATES):
            continue
        for rec in frame(raw, lineno, clock):
            if is_trace_line(rec.msg):
                reader.feed(lineno, rec.msg, rec.process)
    return reader.done()

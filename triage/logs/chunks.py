r"""The chunked scan of a log file: bytes in big chunks, one regex cuts out the records, Python only where it matters.

A busy server's log is mostly uvicorn access lines and vLLM records (`(Proc pid=N) LEVEL MM-DD HH:MM:SS [src] msg`).
``scan_file`` reads the file in byte chunks cut at a line end; one ``_RECORD_RE.split`` per chunk cuts it into the
records (their level, time and message) and the blocks of lines between them. A record's message is read once per
distinct text (a dict from its bytes to what the stats, access, start-up and error rules say about it: analyze.
msg_class), so a record no rule reads costs a dict lookup and its counters, and its line is decoded only if it stays
in the start-up tail. A block between two records is read once per distinct block: runs of uvicorn access lines
are counted from it (a repeat of a run whose keys are all counted already is added at the end, _Scan.flush),
anything else (tracebacks, progress bars, uvicorn's own lines) goes through ``LogPass.line``, the per-line reading,
which itself remembers lines that carry no vLLM timestamp (the time memo outlives it when the clock did not move).

The regex only takes lines whose reading it cannot change: one space where the ``str`` pattern has `\s`, ASCII
classes that are the ASCII parts of its classes, the process prefix required; any other line is left to the
per-line reading, and so is a record whose message has ANSI colour, a lone carriage return or `pid=` (interleaved
records). Line ends are those of the per-line reading (universal newlines, untranslated); a line longer than
``MAX_LINE`` hands the rest of the file to it. The clock is asked only when the month changes or a time is new.
tests/logs/test_fast_paths.py compares the scan and the per-line reading with the goldens (tests/logs/golden.py)
of every recorded log, the bench's file and adversarial lines.

One room: the regex, the record cutter and the block memo are one fast path whose equivalence to the per-line
reading is tested as a whole (tests/logs/test_fast_paths.py).
"""
from __future__ import annotations

import io
import os
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any, Optional

from triage.logs.analyze import _MERGED_1, LogPass
from triage.logs.episodes import EVIDENCE_LINES
from triage.logs.classify import ACCESS, FULL, LONG_STEP, NONE, REQUEST, STATS, TAIL, msg_class
from triage.logs.lines import MAX_LINE
from triage.logs.memo import MEMO_ENTRIES, MEMO_KEY_MAX, Memo
from triage.logs.stats import stats_values

BLOCK = 1 << 19  # bytes read at a time (a line inside one block is shorter than MAX_LINE)

_METHODS = rb"GET|POST|PUT|DELETE|HEAD|OPTIONS|PATCH"
# one uvicorn access line as _ACCESS_INFO_RE reads it (`INFO: +` ACCESS_RE), to its line end; groups: method, path,
# status. A block of lines between two records that is all of these is counted from a memo of the block's bytes.
_ACCESS = rb"INFO: +[\w.:\[\]\-]+ - \"(" + _METHODS + rb") ([\x21-\x7e]+) HTTP/[\d.]+\" (\d{3})[^\n\r\x1b]*"
_ACCESS_BLOCK_RE = re.compile(_ACCESS.replace(b"(", b"(?:").replace(b"(?:?", b"(?") + rb"(?:\n" +
                              _ACCESS.replace(b"(", b"(?:").replace(b"(?:?", b"(?") + rb")*\r?")
_ACCESS_LINE_RE = re.compile(rb"(?:^|\n)" + _ACCESS)
# one record with its process prefix (vLLM 0.10+), FAST_RECORD_RE's groups, in its common spacing (one space where the
# pattern has `\s+`, `\s*`, `\s?`): every match starts with `\n(`, a literal prefix sre searches fast (a record
# without the prefix is read by the per-line reading)
# (written for sre's speed, same language: `.` is `[^\n]` in a bytes pattern without DOTALL and runs a tighter loop;
# INFO, the common level, is tried first; the process name is possessive, a space ends it anyway: ~8 % of the split;
# an optional group is an alternation with an empty branch, `(?:X|)`, which is what `(?:X)?` matches, in the same order,
# without sre's general REPEAT, which allocates a context per try: ~13 % of the split)
_RECORD_RE = re.compile(
    rb"\n(?P<line>\([A-Za-z][\w\-.]*+ pid=\d+\) (?P<level>INFO|DEBUG|WARNING|WARN|ERROR|CRITICAL) "
    rb"(?P<t>\d\d-\d\d \d\d:\d\d:\d\d)(?:[.,]\d+|) \[?[\w./\-]+(?::\d+|)\] (?P<msg>.*))"
)
_GROUPS = 4  # re.split gives, per record, the text before it then these groups

# what a record's message asks for beyond classify.msg_class: the per-line reading (interleaved records, colour,
# a lone carriage return)
_EXACT = -1
_LEVELS = {b"DEBUG": "DEBUG", b"INFO": "INFO", b"WARNING": "WARNING", b"WARN": "WARN", b"ERROR": "ERROR",
           b"CRITICAL": "CRITICAL"}


def _level_counts(levels: list[bytes]) -> Counter[bytes]:
    """``Counter(levels)`` for the level words the record regex takes, by counting each word in their joined bytes
    (C scans instead of hashing a fresh bytes object per record; WARN is a prefix of WARNING, taken off)."""
    joined = b"\n".join(levels)
    out: Counter[bytes] = Counter()
    for word in (b"INFO", b"DEBUG", b"WARNING", b"WARN", b"ERROR", b"CRITICAL"):
        n = joined.count(word)
        if n:
            out[word] = n
    if out[b"WARNING"]:
        out[b"WARN"] -= out[b"WARNING"]
        if not out[b"WARN"]:
            del out[b"WARN"]
    return out


def _classify(run: LogPass, msg_b: bytes) -> tuple[Any, ...]:
    """(kind, msg_class, msg, stats plan) for a record's message bytes (with a CRLF line's `\r`); kind _EXACT: the
    per-line reading."""
    if msg_b.endswith(b"\r"):
        msg_b = msg_b[:-1]
    if b"pid=" in msg_b or b"\x1b" in msg_b or b"\r" in msg_b:
        return (_EXACT, (_EXACT,), "")
    msg = msg_b.decode("utf-8", "replace")
    cls = msg_class(msg, run._stats_memo)
    if cls[0] != STATS:
        return (cls[0], cls, msg, None)
    # per stats record, what LogPass.feed_stats reads of it, in the order the chunk loop takes it: (engine, running,
    # waiting, prompt, gen, KV usage, the point's fields after its time and line, the KV device label)
    plan = tuple((v[0], v[3], v[4], v[1], v[2], v[5], v + _MERGED_1, v[7].get("kv_device")) for v in stats_values(msg))
    return (STATS, cls, msg, plan)


def _physical(text: str, final_newline: bool) -> tuple[str, ...]:
    """The physical lines of complete lines (the last one without its line end unless final_newline), as the
    per-line reading cuts them: universal newlines, untranslated (`\r` alone ends a line too)."""
    pieces = text.split("\n")
    last = len(pieces) - 1
    out: list[str] = []
    for i, piece in enumerate(pieces):
        raw = piece + "\n" if i < last or final_newline else piece
        if not raw:
            continue
        if "\r" in raw:
            out.extend(io.StringIO(raw, newline=""))
        else:
            out.append(raw)
    return tuple(out)


def _access_block(blk: bytes) -> Optional[list[Any]]:
    """[lines, [(key, count)] in order of first appearance, None] of a block of access lines (the last slot:
    _Scan.block's count of repeats not yet added); None: not all access lines."""
    if _ACCESS_BLOCK_RE.fullmatch(blk) is None:
        return None
    counts: dict[tuple[str, str, str], int] = {}
    n = 0
    for method, path, status in _ACCESS_LINE_RE.findall(blk):
        key = (method.decode(), path.decode().partition("?")[0][:120], status.decode())
        counts[key] = counts.get(key, 0) + 1
        n += 1
    return [n, list(counts.items()), None]


def _segments(blk: bytes) -> list[Any]:
    """A block of complete lines as segments in order: [lines, [(key, count)]] for a run of access lines, a tuple of
    physical lines for the rest."""
    whole = _access_block(blk)
    if whole is not None:
        return [whole]
    out: list[Any] = []
    acc: list[bytes] = []
    other: list[bytes] = []
    for line in blk.split(b"\n"):
        if _ACCESS_BLOCK_RE.fullmatch(line) is not None:
            if other:
                out.append(_physical(b"\n".join(other).decode("utf-8", "replace"), True))
                other = []
            acc.append(line)
        else:
            if acc:
                out.append(_access_run(acc))
                acc = []
            other.append(line)
    if other:
        out.append(_physical(b"\n".join(other).decode("utf-8", "replace"), True))
    if acc:
        out.append(_access_run(acc))
    return out


def _access_run(acc: list[bytes]) -> Any:
    """A run of lines that each read as an access line; joined CRLF lines (``\r`` before each ``\n``) are not one
    access block to the block regex, so they go to the per-line reading (a None segment crashed the scan)."""
    blk = b"\n".join(acc)
    got = _access_block(blk)
    return got if got is not None else _physical(blk.decode("utf-8", "replace"), True)


class _Plan:
    """A run of other lines between two records, planned (_Scan.plan): its line count and, per record, (line offset,
    line, message, ts, level, msg_class); an access line is (offset, None, its key, None, None, None)."""

    __slots__ = ("n", "items")

    def __init__(self, n: int, items: tuple[tuple[Any, ...], ...]) -> None:
        self.n = n
        self.items = items


class _Seen(tuple):  # type: ignore[type-arg]
    """A run of other lines read once by the per-line reading: planned when it comes again."""

    __slots__ = ()


class _Unplanned(tuple):  # type: ignore[type-arg]
    """A run of other lines that cannot be planned (a line's reading used the clock): the per-line reading each time."""

    __slots__ = ()


class _Scan:
    def __init__(self, run: LogPass) -> None:
        self.run = run
        self.lineno = 0  # physical lines read so far
        self.msgs = Memo()  # a record's message bytes -> (kind, msg_class, message, stats plan) (_classify)
        self.blocks: dict[bytes, Any] = {}
        # a block of access lines only, whose keys are all counted -> its segment (chunk() adds a repeat inline)
        self.repeats: dict[bytes, list[Any]] = {}
        self.ts: dict[bytes, Optional[float]] = {}  # `MM-DD HH:MM:SS` -> ts while the clock's year holds
        self.month: Optional[bytes] = None
        self.tail = run.reader.events._tail  # records only the tail keeps go in undecoded (bytes)
        self.deferred: list[list[Any]] = []  # access segments with repeats to add (flush)

    def exact(self, text: str, final_newline: bool) -> None:
        """Lines for the per-line reading (complete lines; the last one without its line end unless final_newline)."""
        self.lines(_physical(text, final_newline))

    def lines(self, raws: tuple[str, ...]) -> None:
        line = self.run.line
        clock = self.run.clock
        state = (clock.year, clock._last_month)
        n = self.lineno
        for raw in raws:
            n += 1
            line(raw, n)
        self.lineno = n
        # the per-line reading may have moved the clock: a time reads the same as long as its year and month hold
        # (Clock.vllm's result depends on them alone), so the memo is kept when they did
        if (clock.year, clock._last_month) != state:
            self.month = None
            self.ts.clear()

    def plan(self, raws: tuple[str, ...]) -> Optional[_Plan]:
        """The plan of a run of other lines read before: each line's reading as LogPass.line kept it (a reading that
        used the clock is not kept: None) and each record's msg_class, in order."""
        run = self.run
        memo, stats_memo = run._line_memo, run._stats_memo
        items: list[tuple[Any, ...]] = []
        for off, raw in enumerate(raws, 1):
            got = memo.get(raw)
            if got is None:
                return None
            if got[0] is None:  # an access line: its key
                items.append((off, None, got[1], None, None, None))
                continue
            for line, msg, ts, level, _proc, _pid in got:
                items.append((off, line, msg, ts, level, msg_class(msg, stats_memo)))
        return _Plan(len(raws), tuple(items))

    def replay(self, plan: _Plan) -> None:
        """What LogPass.line does with each line of a planned run (LogPass.record on each record), inline."""
        run = self.run
        base = self.lineno
        levels, tail = run.levels, self.tail
        first_ts = run.first_ts
        lineno = 0
        for off, line, msg, ts, level, cls in plan.items:
            lineno = base + off
            if line is None:  # an access line
                run.n_records += 1
                levels["INFO"] += 1
                run.count_access(msg)
                continue
            run.n_records += 1
            if ts is not None:
                if first_ts is None:
                    run.first_ts = first_ts = ts
                run.last_ts = ts
            if level:
                levels[level] += 1
            kind = cls[0]
            if kind == TAIL:
                tail.append((lineno, line))
            elif kind == STATS:
                run.stats(msg, lineno, ts)
            elif kind == ACCESS:
                run.count_access(cls[1])
            elif kind == REQUEST or kind == LONG_STEP:
                run.note(cls, lineno, ts)
            elif kind == FULL:
                run.rest(lineno, line, msg, ts, cls)
        if lineno:
            run.n_lines = lineno
        self.lineno = base + plan.n

    def block(self, blk: bytes) -> None:
        """The lines between two records (``blk``: a line end, then complete lines without the last line end), as
        segments read once per distinct block: runs of access lines (counted) and other lines (the per-line reading)."""
        got = self.blocks.get(blk)
        if got is None:
            got = _segments(blk[1:])
            if len(blk) < 4 * MEMO_KEY_MAX:
                if len(self.blocks) > MEMO_ENTRIES // 4:
                    self.blocks.clear()
                    self.repeats.clear()
                self.blocks[blk] = got
        run = self.run
        access = run.access
        for k, seg in enumerate(got):
            kind = type(seg)
            if kind is _Plan:
                self.replay(seg)
                continue
            if kind is _Unplanned:
                self.lines(seg)
                continue
            if kind is tuple or kind is _Seen:
                # other lines: read line by line the first time, planned the second from the readings the per-line
                # reading kept
                plan = self.plan(seg) if kind is _Seen else None
                if plan is not None:
                    got[k] = plan
                    self.replay(plan)
                else:
                    self.lines(seg)
                    got[k] = _Seen(seg) if kind is tuple else _Unplanned(seg)
                continue
            n, keys, repeats = seg
            self.lineno += n
            if repeats is not None:
                # its keys (and INFO) are all counted already: the counts of a repeat only add up, and nothing reads
                # them before the end (count_access reads which keys there are), so repeats are added at once (flush)
                seg[2] = repeats + 1
                if not repeats:
                    self.deferred.append(seg)
                    if len(self.deferred) > MEMO_ENTRIES:
                        self.flush()
                continue
            run.n_records += n
            run.levels["INFO"] += n
            if len(access) + len(keys) <= 500:  # every new key comes in (count_access's rule)
                for key, c in keys:
                    access[key] += c
            else:
                for key, c in keys:  # run.count_access(key, c)
                    if key in access or len(access) < 500:
                        access[key] += c
                    else:
                        run.access_overflow += c
            if all(key in access for key, _c in keys):
                seg[2] = 0
                if len(got) == 1 and blk in self.blocks:
                    self.repeats[blk] = seg

    def flush(self) -> None:
        """Add the counts of the access segments' repeats that block() left for the end."""
        run = self.run
        access = run.access
        for seg in self.deferred:
            n, keys, repeats = seg
            run.n_records += n * repeats
            run.levels["INFO"] += n * repeats
            for key, c in keys:
                access[key] += c * repeats
            seg[2] = 0
        self.deferred.clear()

    def chunk(self, T: bytes | memoryview) -> None:
        """Complete lines: ``T`` is a line end followed by lines, each with its line end (bytes, or a view of a
        buffer: the regex cuts bytes out of either)."""
        run = self.run
        msgs, tsmemo, tail = self.msgs, self.ts, self.tail
        msgs_get, ts_get = msgs.get, tsmemo.get  # bound once: the memos are emptied in place, never replaced
        engines_get = run._engines.get
        reps_get, deferred = self.repeats.get, self.deferred
        clock, levels, lvname = run.clock, run.levels, _LEVELS
        n_exact = 0  # records handed to the per-line reading (which counts them)
        lineno = self.lineno
        first_ts, last_ts = run.first_ts, run.last_ts
        # one C call cuts the chunk: [text before record 1, its groups…, text before record 2, …, text after the last]
        parts = _RECORD_RE.split(T)
        # the records' levels counted in one C pass when every one of them is counted already (the levels' order is
        # that of first appearance); the per-line reading's records are taken off again
        by_level = _level_counts(parts[2::_GROUPS + 1])
        batch = all(lvname[lv] in levels for lv in by_level)
        exact_levels: list[bytes] = []
        it = iter(parts)
        for blk, line, level, t, msg_b in zip(*[it] * (_GROUPS + 1), strict=False):
            if blk:  # the lines between two records: `\n` + lines
                seg = reps_get(blk)
                if seg is not None:  # a repeat of a block of access lines whose keys are all counted: block()'s
                    lineno += seg[0]  # short path, inline
                    repeats = seg[2]
                    seg[2] = repeats + 1
                    if not repeats:
                        deferred.append(seg)
                        if len(deferred) > MEMO_ENTRIES:
                            self.flush()
                    blk = None
            if blk:
                self.lineno = lineno
                run.first_ts, run.last_ts = first_ts, last_ts
                self.block(blk)
                lineno = self.lineno
                first_ts, last_ts = run.first_ts, run.last_ts
            got = msgs_get(msg_b)
            if got is None:
                got = _classify(run, msg_b)
                msgs.put(msg_b, got)
            kind = got[0]
            if kind == _EXACT:
                n_exact += 1
                exact_levels.append(level)
                self.lineno = lineno
                run.first_ts, run.last_ts = first_ts, last_ts
                self.exact(line.decode("utf-8", "replace"), True)
                lineno = self.lineno
                first_ts, last_ts = run.first_ts, run.last_ts
                continue
            lineno += 1
            # the clock changes state only when the month changes: the memo holds times of the clock's current month
            # only (emptied when the month changes or the per-line reading ran), where a time reads the same
            ts = ts_get(t, False)
            if ts is False:
                ts = clock.vllm(t[:5].decode(), t[6:].decode())
                if t[:2] != self.month:
                    self.month = t[:2]
                    tsmemo.clear()
                elif len(tsmemo) > MEMO_ENTRIES:
                    tsmemo.clear()
                tsmemo[t] = ts
            if ts is not None:
                if first_ts is None:
                    first_ts = ts
                last_ts = ts
            if not batch:
                levels[lvname[level]] += 1
            if kind == TAIL:
                tail.append((lineno, line))  # decoded only if it stays among the last few (StartupEvents.last_lines)
            elif kind == STATS:
                # LogPass.feed_stats inlined on the record's stats plan (_classify): its values unpacked once per
                # distinct message, one tuple built per point
                for engine, running, waiting, prompt, gen, kv, rest, dev in got[3]:
                    pair = engines_get(engine)
                    if pair is None:
                        pair = run.engine(engine)
                    tr = pair[0]
                    tr.add_values(ts, lineno, running, waiting, prompt, gen, kv)
                    ep = tr.open
                    if ep is not None and len(ep.lines) < EVIDENCE_LINES:  # tr.add_line(lineno, msg[:400])
                        ep.lines.append((lineno, got[2][:400]))
                    pair[1].add((ts, lineno) + rest)
                    if dev and not run.kv_device:
                        run.kv_device = dev
            elif kind == NONE:
                pass
            elif kind == ACCESS:
                run.count_access(got[1][1])
            elif kind == REQUEST or kind == LONG_STEP:
                run.note(got[1], lineno, ts)
            else:  # FULL
                run.rest(lineno, line.rstrip(b"\r").decode("utf-8", "replace"), got[2], ts, got[1])
        if batch:
            by_level.subtract(exact_levels)
            for lv, c in by_level.items():
                if c:
                    levels[lvname[lv]] += c
        run.n_records += len(parts) // (_GROUPS + 1) - n_exact
        self.lineno = lineno
        run.first_ts, run.last_ts = first_ts, last_ts
        last = parts[-1]  # after the last record: `\n` + lines + the chunk's final `\n`
        if len(last) > 1:
            self.block(last[:-1])
        if self.lineno:
            run.n_lines = self.lineno


def scan_file(run: LogPass, path: str | os.PathLike[str]) -> None:
    """Feed a file to ``run`` as the per-line reading would (`open(newline="")`, lines cut at MAX_LINE chars)."""
    scan = _Scan(run)
    try:
        _scan_file(scan, path)
    finally:
        scan.flush()


def _scan_file(scan: _Scan, path: str | os.PathLike[str]) -> None:
    """Read the file into one reused buffer: a line end, the piece of a line carried from the block before, the next
    block. The records are cut from a view of it up to its last line end (the regex hands out bytes either way), so
    no block is copied or allocated again (three copies and a fresh half-megabyte object per block were ~15 % of
    the scan); the carried piece moves to the front."""
    run = scan.run
    offset = 0  # the file offset of the carried piece
    buf = bytearray(1 + MAX_LINE + BLOCK)
    buf[0] = 0x0A  # `\n`: every record the regex takes starts after a line end
    view = memoryview(buf)
    carry = 0  # bytes carried, at buf[1:1 + carry]
    try:
        with open(path, "rb") as f:
            while True:
                start = 1 + carry
                got = f.readinto(view[start:start + BLOCK])
                if not got:
                    break
                end = start + got
                nl = buf.find(b"\n", start, end)
                # a line of more than MAX_LINE characters is read in pieces: the per-line reading takes over there
                if carry + (nl - start + 1 if nl >= 0 else got) >= MAX_LINE:
                    _rest_by_line(scan, path, offset)
                    return
                if nl < 0:
                    carry += got
                    continue
                cut = buf.rfind(b"\n", start, end) + 1
                chunk = view[:cut]
                try:
                    scan.chunk(chunk)
                finally:
                    chunk.release()
                offset += cut - 1
                carry = end - cut
                buf[1:1 + carry] = bytes(view[cut:end])  # a piece of one line; the ranges may overlap
            if carry:
                scan.exact(bytes(view[1:1 + carry]).decode("utf-8", "replace"), False)
                run.n_lines = scan.lineno
    finally:
        view.release()


BATCH = 1 << 18  # characters of lines joined into one chunk


def scan_lines(run: LogPass, lines: Iterable[str]) -> None:
    """Feed physical lines (a file object's, an iterable's) to ``run`` as LogPass.line would, one by one: lines
    that end with their only line end (`\n`, `\r\n`) are joined into chunks for the scan; any other (a piece of a
    cut line, a lone `\r`, text that UTF-8 cannot carry) goes to LogPass.line where it stands."""
    scan = _Scan(run)
    batch: list[str] = []
    size = 0
    for raw in lines:
        if raw[-1:] == "\n" and raw.count("\n") == 1 and ("\r" not in raw or raw.find("\r") == len(raw) - 2):
            batch.append(raw)
            size += len(raw)
            if size < BATCH:
                continue
            _flush(scan, batch)
            batch, size = [], 0
            continue
        if batch:
            _flush(scan, batch)
            batch, size = [], 0
        scan.lines((raw,))
    if batch:
        _flush(scan, batch)
    scan.flush()
    if scan.lineno:
        run.n_lines = scan.lineno


def _flush(scan: _Scan, batch: list[str]) -> None:
    text = "".join(batch)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the bytes would not decode back to it
        scan.lines(tuple(batch))
        return
    scan.chunk(b"\n" + data)


def _rest_by_line(scan: _Scan, path: str | os.PathLike[str], offset: int) -> None:
    run = scan.run
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        f.seek(offset)  # a line start: the decoder starts afresh there
        n = scan.lineno
        while True:
            raw = f.readline(MAX_LINE)
            if not raw:
                break
            n += 1
            run.line(raw, n)

"""``python -m triage logs FILE|-``: post-mortem of a vLLM server log (findings, config, series summary).

JSON (schema CLI_SCHEMA): {"schema", "run_id", "source", "status", "findings": [...],
"config": {key: value}, "config_provenance": {key: {"value", "source", "detail"}},
"summary": {lines, records, first_ts, last_ts, span_s, levels, stats: {...}, access: {...},
episodes: [...]}}. The file is streamed (bounded memory); only its head and tail are stored.
A regular file is read by the chunked scan (its path) and its head and tail apart (file_head_tail); stdin or a
pipe line by line through the HeadTail tee. Same analysis and stored text either way.
Exit: 0 nothing reached --fail-on, 1 something did, 2 could not read the log.
"""

from __future__ import annotations

import argparse
import codecs
import io
import os
import stat
import sys
from functools import partial
from pathlib import Path
from typing import Any

from triage.cli.inputs import LOGS_STREAM_BYTES, HeadTail, capped_lines
from triage.cli.render import print_finding
from triage.cli import CLI_SCHEMA, SECONDS, add_db_arg, add_format_args, number, open_store, print_json
from triage.display import kv_percent_text, left_out, utc_text
from triage.findings import reaches, worst
from triage.logs import analyze_log, log_events
from triage.logs.lines import MAX_LINE
from triage.logs.persist import CAPTURE_MAX_CHARS
from triage.recorder import Recorder, save
from triage.redact import redact_text
from triage.textsafe import one_line


def register(p: argparse.ArgumentParser) -> None:
    """Parse a vLLM server log (a file, or '-' for stdin): the periodic engine stats lines, silences after a stalled
    line, known error texts, access lines and the start-up configuration. Works when the server is gone."""
    p.add_argument("file", metavar="FILE|-", help="the log file, or '-' to read stdin")
    p.add_argument(
        "--stall-seconds",
        type=SECONDS,
        default=20.0,
        help="no-progress seconds on stats lines that confirm a stall (default 20 = two intervals)",
    )
    p.add_argument("--year", type=number(1970, 9999, integer=True), default=None,
        help="year of the log's MM-DD timestamps (default: this year)")
    p.add_argument("--max-bytes", type=number(1, 1 << 62, integer=True), default=LOGS_STREAM_BYTES, metavar="N",
                   help=f"read a stream (stdin, a device, a FIFO) at most this far "
                        f"(default {LOGS_STREAM_BYTES >> 20} MiB);"
                        " a regular file is read whole, streaming")
    p.add_argument("--no-save", action="store_true", help="do not store the analysis as a run in the database")
    add_db_arg(p)
    add_format_args(p)
    p.set_defaults(func=run)




def _regular_file(name: str) -> bool:
    try:
        return name != "-" and stat.S_ISREG(os.stat(name).st_mode)
    except (OSError, ValueError):
        return False


def file_head_tail(path: str | os.PathLike[str], limit: int = CAPTURE_MAX_CHARS, max_line: int = MAX_LINE) -> str:
    """``HeadTail(read_bounded(file)).text()`` of a regular file, without sending every line through the tee.

    The head is read line by line from the start; the tail from a window at the end that begins at a line start
    (after its first line end), wide enough that its lines hold more than the tail keeps; the characters left out
    are counted by decoding the whole file (a C-level pass). A file too small for that, or whose window holds no
    such line start (a line longer than the window), goes through the tee itself. Same text either way
    (tests/cli/test_logs.py).
    """
    half = limit // 2
    window = 4 * (half + max_line) + 4  # bytes: more than the tail's characters plus one whole (bounded) line
    with open(path, "rb") as fb:
        size = os.fstat(fb.fileno()).st_size

        def lines(f: io.BufferedIOBase) -> Any:
            text = io.TextIOWrapper(f, encoding="utf-8", errors="replace", newline="")  # type: ignore[type-var]
            return iter(partial(text.readline, max_line), "")

        if size > 2 * window + 8:
            head: list[str] = []
            head_n = 0
            text = io.TextIOWrapper(fb, encoding="utf-8", errors="replace", newline="")
            for line in iter(partial(text.readline, max_line), ""):
                head.append(line)
                head_n += len(line)
                if head_n >= half:
                    break
            text.detach()
            fb.seek(size - window)
            buf = fb.read(window)
            nl = buf.find(b"\n")
            pieces = list(lines(io.BytesIO(buf[nl + 1:]))) if nl >= 0 else []
            if sum(map(len, pieces)) > half:  # else the tail may begin before the window
                tail: list[str] = []
                tail_n = 0
                for line in reversed(pieces):
                    if tail_n + len(line) > half:
                        break
                    tail.append(line)
                    tail_n += len(line)
                fb.seek(0)
                dec = codecs.getincrementaldecoder("utf-8")("replace")
                total = 0
                for b in iter(partial(fb.read, 1 << 20), b""):
                    total += len(b) if b.isascii() and not dec.getstate()[0] else len(dec.decode(b))
                total += len(dec.decode(b"", final=True))
                skipped = total - head_n - tail_n
                mid = left_out(skipped) if skipped else ""
                return "".join(head) + mid + "".join(reversed(tail))
            fb.seek(0)
        tee = HeadTail(lines(fb), limit)
        for _ in tee:
            pass
        return tee.text()


def run(args: argparse.Namespace) -> int:
    store = None if args.no_save else open_store(args.db)  # an unusable database says so before any parsing
    if _regular_file(args.file):  # the chunked scan of the path; the stored head/tail read from the file apart
        try:
            analysis = analyze_log(Path(args.file), stall_s=args.stall_seconds, year=args.year)
            log_text = file_head_tail(args.file) if store is not None else None
        except OSError as e:
            print(f"logs: cannot read {args.file}: {e}", file=sys.stderr)
            return 2
    else:
        try:
            stream = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8", errors="replace", newline="")
        except OSError as e:
            print(f"logs: cannot read {args.file}: {e}", file=sys.stderr)
            return 2
        # the parser's line cap (a 200 MB line is read in 1 MiB pieces) and a byte cap: /dev/zero or a FIFO that never
        # ends is refused with one line past --max-bytes
        tee = HeadTail(capped_lines(stream, args.file, args.max_bytes))
        try:
            analysis = analyze_log(iter(tee), stall_s=args.stall_seconds, year=args.year)
        except OSError as e:
            print(f"logs: cannot read {args.file}: {e}", file=sys.stderr)
            return 2
        finally:
            if stream is not sys.stdin:
                stream.close()
        log_text = tee.text()
    run_id = None
    if store is not None:
        # core → observer: the analysis as the run's events, written by the Recorder (the only writer)
        run_id = save(log_events(analysis, log_text=log_text, name="stdin" if args.file == "-" else args.file),
                      Recorder(store))
    status = worst(f.status for f in analysis.findings).value
    if args.format == "json":
        out = {"schema": CLI_SCHEMA, "run_id": run_id, "source": args.file, "status": status, **analysis.to_dict()}
        print_json(out)
    else:
        _print_text(analysis, args.file, run_id, status)
    return 1 if any(reaches(f.status, args.fail_on) for f in analysis.findings) else 0


def _print_text(analysis: Any, source: str, run_id: int | None, status: str) -> None:
    s = analysis.summary
    print(
        f"log {source}: {s['lines']} lines, {utc_text(s['first_ts']) or '-'} … {utc_text(s['last_ts']) or '-'}"
        + (f"  (run {run_id})" if run_id else "")
    )
    print(f"verdict: {status.upper()}")
    print()
    for f in analysis.findings:
        details: list[str] = []
        w = f.evidence.get("window")
        if isinstance(w, dict) and w.get("timestamps"):
            dur = f", {w['duration_s']:.0f} s" if w.get("duration_s") is not None else ""
            details.append(f"window: {w['start']} → {w['end'] or 'end of log'} ({w['ended_by']}{dur})")
        quoted = f.evidence.get("lines")
        for ln in (quoted if isinstance(quoted, list) else [])[:3]:  # some findings count lines instead
            if isinstance(ln, dict):
                details.append(f"line {ln.get('line')}: {redact_text(str(ln.get('text', ''))[:160])}")
        print_finding(f, details)
    print()
    if analysis.config:
        print("start-up config (from the log):")
        for k, v in analysis.config.items():
            if k == "non_default_args":
                continue
            print(f"  {k:24} {one_line(v, 300)}")
        print()
    st = s["stats"]
    print(
        f"engine stats: {st['lines']} lines, engines {', '.join(st['engines']) or '-'}; "
        f"max running {st['max_running']}, max waiting {st['max_waiting']}, "
        f"max KV cache {kv_percent_text(st['max_kv_cache_usage_perc'])}, "
        f"max prompt {st['max_prompt_throughput']} tokens/s"
    )
    acc = s["access"]
    if acc["total"]:
        by = ", ".join(f"{k}: {v}" for k, v in sorted(acc["by_status"].items()))
        print(f"access log: {acc['total']} requests ({by})")

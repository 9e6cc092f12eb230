"""Start-up configuration from a vLLM log, under the canonical config keys of docs/CONTRACTS.md.

Precedence, weakest first: the `non-default args` dict (what the user asked for), then the
engine's `Initializing a V1 LLM engine … with config:` line (what the engine resolved), then
the specific lines that state an outcome (`Using max model len`, `Chunked prefill is enabled
with max_num_batched_tokens=N.`, `Resolved pooling config`, `… KV cache size: N tokens`), and
last `Disabling chunked prefill for model without KVCache`, which overrides chunked prefill to
False whatever was asked (encoder-only models, seen on 0.32.0 BERT).
"""

from __future__ import annotations

import ast
import re
from collections import deque
from typing import Any, Optional
from collections.abc import Iterable

from triage.logs.hits import ErrorHits, first_match, marked
from triage.logs.lines import LogLine, LogSource, iter_records
from triage.logs.memo import Memo
from triage.vllm import logformats as lf

EVIDENCE_LINES = 5  # lines kept per start-up event kind

# check id -> patterns; the first that matches a line owns it (catalogue: triage/catalogue/startup.py)
_EVENT_RULES: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...] = (
    ("log-removed-flag", (lf.UNRECOGNIZED_ARGS_RE, lf.REMOVED_PARAMETER_RE)),
    ("log-bad-arguments", (lf.ARGPARSE_ERROR_RE,)),
    ("log-max-model-len", (lf.MAX_LEN_ABOVE_DERIVED_RE, lf.CHANGING_MAX_LEN_RE)),
    ("log-max-context", (lf.MAX_CONTEXT_RE,)),
    ("log-matryoshka", (lf.MATRYOSHKA_RE,)),
    ("log-gpu-memory-shared", (lf.FREE_MEMORY_RE,)),
    ("log-pooling-overrides", lf.POOLING_OVERRIDE_RES),
    ("log-dtype", lf.DTYPE_RES),
    ("log-kv-cache-dtype", (lf.KV_DTYPE_REFUSED_RE,)),
    ("log-mrv2-pooling", (lf.MRV2_POOLING_RE,)),
    ("log-encoder-prefix-caching", (lf.ENCODER_PREFIX_CACHING_RE,)),
    ("hint", (re.compile(r"^Hint: (?P<hint>.+)$"),)),
)
# a substring every match of each _EVENT_RULES pattern contains, in the same order (tests/logs/test_fast_paths.py
# reads every pattern's text with and without them)
_EVENT_MARKERS: dict[str, tuple[str, ...]] = {
    "log-removed-flag": ("unrecognized arguments", "was removed"),
    "log-bad-arguments": ("error: ",),
    "log-max-model-len": ("greater than the derived", "Changing max_model_len"),
    "log-max-context": ("maximum context length",),
    "log-matryoshka": ("atryoshka",),
    "log-gpu-memory-shared": ("Free memory on device",),
    "log-pooling-overrides": (
        "Only 'last' pooling",
        "full cudagraphs",
        "non-causal attention",
        "does not officially support",
        "Disabling chunked prefill for model without KVCache",
    ),
    "log-dtype": ("Falling back to torch.float16", "Bfloat16 is only supported"),
    "log-kv-cache-dtype": ("is incompatible with dtype",),
    "log-mrv2-pooling": ("Model Runner V2 supports pooling",),
    "log-encoder-prefix-caching": ("HybridKVCacheCoordinator requires",),
    "hint": ("Hint: ",),
}
_EVENT_RULES_MARKED = marked(_EVENT_RULES, _EVENT_MARKERS)
_EVENT_HINTS = (
    "error",
    "Parameter",
    "max_model_len",
    "maximum context",
    "atryoshka",
    "Free memory",
    "pooling",
    "chunked prefill",
    "prefix caching",
    "cudagraph",
    "float16",
    "Downcasting",
    "Bfloat16",
    "Hint:",
    "HybridKVCacheCoordinator",
)

# one `or` chain of substring tests (the cheapest gate in CPython): a line with none of them matches no event rule
_has_event_hint = eval("lambda msg: " + " or ".join(f"{h!r} in msg" for h in _EVENT_HINTS))  # noqa: S307

# a cheap marker of each start-up config pattern read by StartupConfigReader.feed (a line without any of them
# matches none: Downcasting, non-default args, engine config, API server version, banner, max model len,
# chunked prefill on/off, resolved pooling, KV cache size)
_CONFIG_MARKERS = (
    "Downcasting",
    "non-default args",
    "LLM engine",
    "API server version",
    "\u2588",  # █: the banner
    "Using max model len",
    "hunked prefill",
    "Resolved pooling config",
    "KV cache size",
)
_has_config_marker = eval("lambda msg: " + " or ".join(f"{h!r} in msg" for h in _CONFIG_MARKERS))  # noqa: S307
# any marker feed reads a line for (the 'server is up' mark aside): one chain for StartupConfigReader.reads
_has_any_marker = eval(  # noqa: S307
    "lambda msg: " + " or ".join(f"{h!r} in msg" for h in ("Supported tasks",) + _EVENT_HINTS + _CONFIG_MARKERS)
)


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
            or _has_event_hint(msg)
            or (self.started is None and ("Starting vLLM" in msg or "startup complete" in msg))
        )

    def feed(self, line: LogLine) -> None:
        """Every record: keeps the tail; the patterns run only on lines that carry one of their markers."""
        self.feed_plan(_plan(line.msg), line.lineno, line.raw, line.ts)

    def feed_plan(self, plan: _Plan, lineno: int, raw: str, ts: Optional[float]) -> None:
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


class _Plan:
    """What the start-up patterns read in one message (pure in the message: a repeated line is read once).

    started: a 'server is up' pattern matches; tasks: the `Supported tasks` list; event: (check, groups) of the
    first event rule that matches; config: the config step feed() takes (see StartupConfigReader.feed_plan).
    """

    __slots__ = ("started", "startish", "tasks_in", "tasks", "event", "config")

    def __init__(self, msg: str) -> None:
        self.startish = "Starting vLLM" in msg or "startup complete" in msg
        self.started = self.startish and any(rx.search(msg) for rx in lf.SERVER_STARTED_RES)
        self.tasks_in = "Supported tasks" in msg
        self.tasks: Optional[list[str]] = None
        self.event: Optional[tuple[str, dict[str, str]]] = None
        self.config: Optional[tuple[Any, ...]] = None
        if self.tasks_in:
            m = lf.SUPPORTED_TASKS_RE.search(msg)
            if m:
                self.tasks = [t.strip().strip("'\"") for t in m["tasks"].split(",") if t.strip()]
                return  # feed stops at the tasks line
        if _has_event_hint(msg):
            self.event = _event(msg)


def _event(msg: str) -> Optional[tuple[str, dict[str, str]]]:
    return first_match(_EVENT_RULES_MARKED, msg)


_PLANS = Memo()


def _plan(msg: str) -> _Plan:
    """The message's plan, from a bounded memo (a plan is pure in the message, so the memo is shared)."""
    plan = _PLANS.get(msg)
    if plan is None:
        plan = _Plan(msg)
        plan.config = _config_plan(msg)
        _PLANS.put(msg, plan)
    return plan


_ARGS_CACHE: dict[str, dict[str, Any]] = {}


def _config_plan(msg: str) -> Optional[tuple[Any, ...]]:
    """The config step of StartupConfigReader.feed, as pure data: which pattern matched and what it read.

    ("downcast", src, dst) | ("args", args) | ("engine", version, cfg) | ("versions", api version or None,
    banner version or None, then the first of the unconditional steps or None). The two version steps
    depend on what was read before (feed_plan decides); the rest does not.
    """
    if len(msg) < 12 or not _has_config_marker(msg):
        return None
    if "Downcasting" in msg:
        m = lf.DOWNCAST_RE.search(msg)
        if m:
            return ("downcast", m["src"].replace("torch.", ""), m["dst"].replace("torch.", ""))
    m = lf.NON_DEFAULT_ARGS_RE.search(msg)
    if m:
        text = m["args"]
        args = _ARGS_CACHE.get(text)
        if args is None:
            args = {k: v for k, v in _parse_args_dict(text).items() if not _SECRET_ARG.search(k)}
            if len(text) < 65536:
                if len(_ARGS_CACHE) > 16:
                    _ARGS_CACHE.clear()
                _ARGS_CACHE[text] = args
        return ("args", args)
    m = lf.ENGINE_INIT_RE.search(msg)
    if m:
        return ("engine", m["v"], m["cfg"])
    mm = lf.API_SERVER_VERSION_RE.search(msg)
    api = mm["v"] if mm else None
    mb = lf.BANNER_VERSION_RE.search(msg)
    banner = mb["v"] if mb and "█" in msg else None
    step: Optional[tuple[Any, ...]] = None
    m = lf.MAX_MODEL_LEN_RE.search(msg)
    if m:
        step = ("max_model_len", int(m["n"]))
    elif m := lf.CHUNKED_PREFILL_RE.search(msg):
        step = ("chunked", int(m["n"]))
    elif lf.DISABLE_CHUNKED_RE.search(msg):
        step = ("no-chunked",)
    elif m := lf.RESOLVED_POOLING_RE.search(msg):
        step = ("pooling_type", m["t"])
    elif m := lf.KV_CACHE_SIZE_RE.search(msg):
        step = ("kv", _int(m["n"]), m["device"])
    if api is None and banner is None and step is None:
        return None
    return ("versions", api, banner, step)


EVENT_TAIL = 8

# non-default-args keys that are canonical config keys as they are
_ARG_KEYS = (
    "model",
    "served_model_name",
    "runner",
    "convert",
    "max_model_len",
    "max_num_batched_tokens",
    "max_num_seqs",
    "enable_chunked_prefill",
    "enable_prefix_caching",
    "dtype",
    "gpu_memory_utilization",
    "kv_cache_memory_bytes",
    "tensor_parallel_size",
    "data_parallel_size",
    "hf_overrides",
    "disable_log_stats",
    "dtype",
    "pooler_config",
    "api_server_count",
)
_SECRET_ARG = re.compile(r"(?i)api[_-]?key|(?:^|_)token$|secret|password")


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _parse_args_dict(text: str) -> dict[str, Any]:
    """The `non-default args: {…}` dict; repr objects (<Enum…>) fall back to key: scalar pairs."""
    d = _literal(text)
    if isinstance(d, dict):
        return d
    out: dict[str, Any] = {}
    for m in re.finditer(r"'(\w+)': ('(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|True|False|None)", text):
        out[m.group(1)] = _literal(m.group(2))
    return out


def _config_value(cfg: str, key: str) -> Optional[str]:
    m = re.search(r"(?:^|, )" + re.escape(key) + r"=('(?:[^'\\]|\\.)*'|[^,()]+)", cfg)
    if not m:
        return None
    v = m.group(1).strip()
    return v[1:-1] if v.startswith("'") and v.endswith("'") else v


def _bool(v: Any) -> Optional[bool]:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v in ("True", "False"):
        return v == "True"
    return None


def _int(v: Any) -> Optional[int]:
    try:
        return int(str(v).replace(",", ""))
    except (TypeError, ValueError):
        return None


class StartupConfigReader:
    """Feed records one by one (streaming); ``config`` / ``provenance`` hold what was read."""

    def __init__(self) -> None:
        # key -> (value, line, what): the provenance entry is built when read (a log of many starts sets keys
        # thousands of times)
        self._prov: dict[str, Any] = {}
        self._built: Optional[dict[str, dict[str, Any]]] = None
        self._chunked_disabled = False
        self.events = StartupEvents()
        self._parsed: dict[Any, Any] = {}  # a repeated start-up line (a log of many starts) is parsed once

    @property
    def provenance(self) -> dict[str, dict[str, Any]]:
        """key -> {"value", "source": "log", "detail": "line N: what"}; one dict, kept (with what a caller writes into
        it) until the next line sets a key."""
        if self._built is None:
            self._built = {
                k: v if isinstance(v, dict) else {"value": v[0], "source": "log", "detail": f"line {v[1]}: {v[2]}"}
                for k, v in self._prov.items()
            }
        return self._built

    @property
    def config(self) -> dict[str, Any]:
        return {k: v["value"] for k, v in self.provenance.items()}

    def _set(self, key: str, value: Any, lineno: int, what: str) -> None:
        if value is None:
            return
        if self._built is not None:  # read (and maybe written) since the last set: it is the state now
            self._prov = dict(self._built)
            self._built = None
        self._prov[key] = (value, lineno, what)

    def reads(self, msg: str) -> bool:
        """Whether feed(line) with this message does more than keep it in the events' tail (substring tests)."""
        return _has_any_marker(msg) or (
            self.events.started is None and ("Starting vLLM" in msg or "startup complete" in msg)
        )  # = _has_config_marker(msg) or self.events.reads(msg), in one chain

    def feed(self, line: LogLine) -> None:
        if len(line.msg) < 12:
            return
        self.feed_plan(_plan(line.msg), line.lineno, line.raw, line.ts)

    def feed_plan(self, plan: _Plan, lineno: int, raw: str, ts: Optional[float]) -> None:
        """feed() for a record (message of 12 characters or more) given as fields and its message's plan."""
        self.events.feed_plan(plan, lineno, raw, ts)
        if plan.tasks_in and self.events.supported_tasks is not None:
            self._set("supported_tasks", self.events.supported_tasks, lineno, "Supported tasks")
            return
        step = plan.config
        if step is None:
            return
        kind = step[0]
        if kind == "downcast":  # the effective config shows it; a finding only for fallbacks/refusals
            self._set("checkpoint_dtype", step[1], lineno, "Downcasting")
            self._set("dtype", step[2], lineno, "Downcasting")
            return
        if kind == "args":
            args = dict(step[1])
            self._set("non_default_args", args, lineno, "non-default args")
            for k in _ARG_KEYS:
                if k in args and args[k] is not None and (k not in self._prov or k in ("runner", "convert")):
                    val = args[k]
                    if k == "served_model_name" and isinstance(val, list) and val:
                        val = val[0]
                    self._set(k, val, lineno, f"non-default args {k}")
            if "model_tag" in args and "model" not in self._prov:
                self._set("model", args["model_tag"], lineno, "non-default args model_tag")
            return
        if kind == "engine":
            self._set("vllm_version", step[1], lineno, "Initializing a V1 LLM engine")
            self._engine_config(step[2], lineno)
            return
        _kind, api, banner, rest = step
        if api is not None and "vllm_version" not in self._prov:
            self._set("vllm_version", api, lineno, "vLLM API server version")
            return
        if banner is not None and "vllm_version" not in self._prov:
            self._set("vllm_version", banner, lineno, "start-up banner")
            return
        if rest is None:
            return
        what = rest[0]
        if what == "max_model_len":
            self._set("max_model_len", rest[1], lineno, "Using max model len")
        elif what == "chunked":
            self._set("max_num_batched_tokens", rest[1], lineno, "Chunked prefill is enabled")
            if not self._chunked_disabled:
                self._set("enable_chunked_prefill", True, lineno, "Chunked prefill is enabled")
        elif what == "no-chunked":
            self._chunked_disabled = True
            self._set("enable_chunked_prefill", False, lineno, "Disabling chunked prefill for model without KVCache")
        elif what == "pooling_type":
            self._set("pooling_type", rest[1], lineno, "Resolved pooling config")
        else:
            self._set("kv_cache_size_tokens", rest[1], lineno, f"{rest[2]} KV cache size")

    def _engine_config(self, cfg: str, lineno: int) -> None:
        """Set what the engine config line says; a repeated line (a log of many starts) is parsed once."""
        key = (cfg, self._chunked_disabled)
        sets = self._parsed.get(key)
        if sets is None:
            sets = _engine_config_sets(cfg, self._chunked_disabled)
            if len(cfg) < 65536 and len(self._parsed) < 16:
                self._parsed[key] = sets
        for k, value, what in sets:
            self._set(k, value, lineno, what)


def _engine_config_sets(cfg: str, chunked_disabled: bool) -> list[tuple[str, Any, str]]:
    """(key, value, what) for each config key the engine config line states, in the order they are set."""
    what = "engine config"
    dtype = _config_value(cfg, "dtype")
    out: list[tuple[str, Any, str]] = [
        ("model", _config_value(cfg, "model"), what + " model"),
        ("served_model_name", _config_value(cfg, "served_model_name"), what + " served_model_name"),
        ("dtype", dtype.replace("torch.", "") if dtype else None, what + " dtype"),
        ("max_model_len", _int(_config_value(cfg, "max_seq_len")), what + " max_seq_len"),
        ("tensor_parallel_size", _int(_config_value(cfg, "tensor_parallel_size")), what + " tensor_parallel_size"),
        ("data_parallel_size", _int(_config_value(cfg, "data_parallel_size")), what + " data_parallel_size"),
    ]
    dev = _config_value(cfg, "device_config")
    if dev:
        dev = dev.strip().lower()
        out.append(("device", dev if dev in ("cpu", "cuda", "rocm", "xpu", "tpu") else dev, what + " device_config"))
    out.append(
        ("enable_prefix_caching", _bool(_config_value(cfg, "enable_prefix_caching")), what + " enable_prefix_caching")
    )
    if not chunked_disabled:
        out.append(
            (
                "enable_chunked_prefill",
                _bool(_config_value(cfg, "enable_chunked_prefill")),
                what + " enable_chunked_prefill",
            )
        )
    pm = lf.POOLER_TYPE_RE.search(cfg)
    if pm:
        out.append(("pooling_type", pm["t"], what + " pooler_config"))
    cp = lf.CHUNKED_PROCESSING_RE.search(cfg)
    if cp:  # what an over-long input gets (issue 29): the pooler config's chunked processing and its limit
        limit = None if cp["n"] == "None" else int(cp["n"])
        out.append(("pooler_config", {"enable_chunked_processing": True, "max_embed_len": limit},
                    what + " pooler_config"))
    return out


def extract_startup_config(
    text_or_lines: LogSource | Iterable[LogLine], *, with_provenance: bool = False
) -> dict[str, Any]:
    """Canonical config keys read from a start-up log (text, path, file or lines).

    Plain ``{key: value}`` by default; ``with_provenance=True`` gives
    ``{key: {"value", "source": "log", "detail": "line N: …"}}`` as the engine's effective config wants.
    """
    reader = StartupConfigReader()
    items: Iterable[Any] = text_or_lines
    if isinstance(text_or_lines, list) and text_or_lines and isinstance(text_or_lines[0], LogLine):
        items = text_or_lines
    else:
        items = iter_records(text_or_lines)  # type: ignore[arg-type]
    for rec in items:
        reader.feed(rec)
    return reader.provenance if with_provenance else reader.config

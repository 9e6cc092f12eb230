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


# Flags people copy from guides that vLLM never had, with what to use instead. Options vLLM HAD and
# removed or renamed are data: serve_flags.json "removed" (see `removed()`).
MYTH_FLAGS: dict[str, str] = {
    "--embedding-batch-size": "vLLM has no such flag: batching is --max-num-batched-tokens (tokens per step) "
    "and --max-num-seqs (requests per step).",
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


@dataclass(frozen=True)
class Removed:
    """An option (or a JSON field of one, or a request field) vLLM had and no longer has."""

    option: str  # --task, or the option/endpoint holding the field (--pooler-config, /v1/embeddings)
    use: str  # what replaces it
    field: str | None = None
    deprecated_in: str | None = None
    absent_in: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.option} {self.field}" if self.field else self.option

    def why(self) -> str:
        was = f"deprecated in {self.deprecated_in}, " if self.deprecated_in else ""
        return (
            f"{self.name} was removed ({was}absent in vLLM {', '.join(self.absent_in)}): use {self.use}. "
            "vllm serve exits at start with 'unrecognized arguments' on a removed option."
        )


@lru_cache(maxsize=1)
def _removed() -> tuple[dict[str, Removed], dict[tuple[str, str], Removed]]:
    data = json.loads(_DATA.read_text())
    opts = {
        r["option"]: Removed(r["option"], r["use"], None, r.get("deprecated_in"), tuple(r.get("absent_in", ())),
                             tuple(r.get("refs", ())))
        for r in data.get("removed", ())
    }
    fields = {
        (r["option"], r["field"]): Removed(r["option"], r["use"], r["field"], r.get("deprecated_in"),
                                           tuple(r.get("absent_in", ())), tuple(r.get("refs", ())))
        for r in data.get("removed_fields", ())
    }
    return opts, fields


def removed(option: str) -> Removed | None:
    """The record of a removed/renamed option (`--task`, `--override-pooler-config`), else None."""
    return _removed()[0].get(normalize_option(option))


def removed_field(option: str, field: str) -> Removed | None:
    """A removed JSON field of an option or request (`--pooler-config` `normalize`), else None."""
    return _removed()[1].get((normalize_option(option), field))

"""Read one vLLM release's own code and print what the triage needs of it as JSON (a snapshot).

Run with a "reader" Python that has torch and vLLM's pure-Python dependencies (a lab venv), with the
release's unpacked wheel first on ``sys.path`` (``PYTHONPATH=<unpacked>:<extra deps>``); no GPU, no
CUDA import, no model. Stdlib only on our side: this file must not import ``triage``. One room on purpose (over
350 lines): it is copied alone into a release's venv and run there, so it cannot import helpers of its own.

What is read, and how:
- the ``vllm serve`` parser: built by the release's own ``make_arg_parser``; every option string it
  accepts (``_option_string_actions``: hidden negations included) is parsed by that parser, so the
  value each form sets is the release's answer, not our guess;
- pooling defaults: the release's ``ModelConfig.is_chunked_prefill_supported`` /
  ``is_prefix_caching_supported`` (or, before they existed, ``EngineArgs._set_default_args_v1``)
  run on small stand-in configs of each pooling case;
- the default batch budget: the statements of the function that sets
  ``default_max_num_batched_tokens`` (source, read with ``ast``), evaluated later by
  ``triage.vllm.knowledge.budget``;
- ``PoolerConfig`` fields and the values it refuses (constructed with each candidate);
- metric names, log format strings and start-up refusal messages: string constants of the source.

One file on purpose: it runs alone inside a lab venv with a release's wheel on sys.path (stdlib only, no triage
import), so it cannot import sibling modules.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import importlib.metadata
import json
import os
import re
import types
from pathlib import Path

PARSER_MODULES = (
    "vllm.entrypoints.launchers.cli_args",
    "vllm.entrypoints.common.cli_args",
    "vllm.entrypoints.openai.cli_args",
)
POOLING_CASES = {  # case -> (attn_type, pooling type)
    "encoder-only MEAN": ("encoder_only", "MEAN"),
    "encoder-only CLS": ("encoder_only", "CLS"),
    "causal LAST": ("decoder", "LAST"),
    "causal MEAN": ("decoder", "MEAN"),
    "causal CLS": ("decoder", "CLS"),
    "causal ALL": ("decoder", "ALL"),
}
POOLER_PROBES = (  # (field, value) tried on PoolerConfig
    ("task", "embed"), ("task", "classify"), ("task", "score"), ("task", "encode"),
    ("task", "token_embed"), ("normalize", True), ("pooling_type", "LAST"), ("pooling_type", "MEAN"),
    ("seq_pooling_type", "LAST"),
)
REFUSAL_FILES = ("vllm/config/", "vllm/engine/arg_utils.py", "vllm/v1/worker/gpu/pool/", "vllm/entrypoints/openai/",
                 "vllm/entrypoints/pooling/", "vllm/v1/engine/")
REFUSAL_WORDS = re.compile(r"pool|embed|runner|convert|chunked|prefix|max_model_len|max-model-len|kv.cache.dtype|"
                           r"kv_cache_dtype|Model Runner V2|max_num_batched|truncate", re.I)
METRIC_RE = re.compile(r"^vllm:[a-z0-9_]+$")
# where metric names, the log lines the readers use and start-up refusals live (the rest of the tree is
# model code and kernels: reading it would only slow the scan)
SCAN_DIRS = ("vllm/v1", "vllm/engine", "vllm/config", "vllm/entrypoints", "vllm/distributed/device_communicators",
             "vllm/executor", "vllm/worker", "vllm/platforms", "vllm/core", "vllm/logger.py", "vllm/envs.py")


def _rel(path: str | None, root: Path) -> str | None:
    if not path:
        return None
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return path


def _jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)) and all(isinstance(x, (bool, int, float, str)) for x in v):
        return list(v)
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(v))[:120]


def _parser(root: Path) -> dict:
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser  # <= 0.11
    mod = None
    errors = []
    for name in PARSER_MODULES:
        try:
            mod = importlib.import_module(name)
            if hasattr(mod, "make_arg_parser"):
                break
        except ImportError as e:
            errors.append(f"{name}: {e}")
        mod = None
    if mod is None:
        raise RuntimeError("no make_arg_parser: " + "; ".join(errors))
    p = mod.make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
    deprecated = getattr(p, "_deprecated", set()) or set()
    by_action: dict[int, dict] = {}
    for opt, action in p._option_string_actions.items():
        if isinstance(action, argparse._HelpAction):
            continue
        entry = by_action.get(id(action))
        if entry is None:
            kind = "value"
            if isinstance(action, argparse.BooleanOptionalAction):
                kind = "bool-optional"
            elif action.nargs == 0:
                kind = "flag"
            entry = {
                "dest": action.dest,
                "kind": kind,
                "strings": [],
                "nargs": action.nargs if isinstance(action.nargs, (int, type(None))) else str(action.nargs),
                "choices": [str(c) for c in action.choices] if action.choices else None,
                "default": _jsonable(action.default),
                "deprecated": bool(action in deprecated or getattr(action, "deprecated", False)),
            }
            by_action[id(action)] = entry
        entry["strings"].append(opt)
        if entry["kind"] != "value":
            # the release's own answer: what this spelling sets
            try:
                ns, _ = p.parse_known_args([opt])
                entry.setdefault("sets", {})[opt] = _jsonable(getattr(ns, action.dest, None))
            except SystemExit:
                entry.setdefault("sets", {})[opt] = "error"
    options = {}
    for entry in by_action.values():
        longs = [s for s in entry["strings"] if s.startswith("--")]
        positives = [s for s in longs if entry.get("sets", {}).get(s) is not False] or longs or entry["strings"]
        canonical = sorted(positives, key=lambda s: (s.startswith("--no-"), s.startswith("--disable-"), len(s)))[0]
        entry["strings"] = sorted(entry["strings"])
        if not entry.get("choices"):
            entry.pop("choices", None)
        if entry.get("nargs") is None:
            entry.pop("nargs", None)
        if not entry.get("deprecated"):
            entry.pop("deprecated", None)
        options[canonical] = entry
    positional = [a.dest for a in p._actions if not a.option_strings]
    files = sorted({_rel(getattr(mod, "__file__", None), root), "vllm/engine/arg_utils.py"} - {None})
    return {"options": dict(sorted(options.items())), "positional": positional, "files": files}


def _pooling_defaults(root: Path) -> dict:
    out: dict = {}
    try:
        from vllm.config.model import ModelConfig  # >= 0.11
        where = "vllm/config/model.py"
    except ImportError:
        from vllm.config import ModelConfig
        where = "vllm/config/__init__.py"
    chunked = getattr(ModelConfig, "is_chunked_prefill_supported", None)
    prefix = getattr(ModelConfig, "is_prefix_caching_supported", None)
    for case, (attn, pt) in POOLING_CASES.items():
        pooler = types.SimpleNamespace(pooling_type=pt, seq_pooling_type=pt, tok_pooling_type=None, task="embed")
        if isinstance(chunked, property) and isinstance(prefix, property):
            fake = types.SimpleNamespace(attn_type=attn, pooler_config=pooler, runner_type="pooling",
                                         is_encoder_decoder=False, is_hybrid=False, is_attention_free=False)
            fake.is_causal = attn == "decoder"
            out[case] = {"chunked_prefill": bool(chunked.fget(fake)), "prefix_caching": bool(prefix.fget(fake))}
            out["_file"] = where
            continue
        from vllm.engine.arg_utils import EngineArgs
        hf = types.SimpleNamespace(is_causal=attn == "decoder")
        mc = types.SimpleNamespace(runner_type="pooling", pooler_config=pooler, hf_config=hf, attn_type=attn,
                                   is_hybrid=False)
        getter = getattr(EngineArgs, "get_chunked_prefill_prefix_caching_defaults", None)  # 0.11.1, 0.11.2
        if getter is not None:
            chunked_on, prefix_on = getter(mc)
            out[case] = {"chunked_prefill": bool(chunked_on), "prefix_caching": bool(prefix_on)}
            out["_file"] = "vllm/engine/arg_utils.py"
            continue
        fn = getattr(EngineArgs, "_set_default_args_v1", None) or getattr(EngineArgs, "_set_default_args", None)
        me = types.SimpleNamespace(enable_chunked_prefill=None, enable_prefix_caching=None)
        try:
            fn(me, None, mc)
        except Exception:  # the rest of the function needs a real config; the two values are set first
            pass
        out[case] = {"chunked_prefill": me.enable_chunked_prefill, "prefix_caching": me.enable_prefix_caching}
        out["_file"] = "vllm/engine/arg_utils.py"
    return out


def _function_with(tree: ast.AST, name: str) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in sub.targets):
                    return node
                if isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name) and sub.target.id == name \
                        and sub.value is not None:
                    return node
    return None


def _budget_rule(root: Path) -> dict:
    """The statements that choose default_max_num_batched_tokens, as source (evaluated by budget.py)."""
    src = (root / "vllm/engine/arg_utils.py").read_text()
    tree = ast.parse(src)
    fn = _function_with(tree, "default_max_num_batched_tokens")
    if fn is None:
        return {"error": "no default_max_num_batched_tokens in vllm/engine/arg_utils.py"}
    keep: list[str] = []
    wanted = {"device_memory", "device_name", "is_gb10", "default_max_num_batched_tokens"}

    def assigns(node: ast.AST) -> set[str]:
        names = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign):
                names |= {t.id for t in sub.targets if isinstance(t, ast.Name)}
        return names

    def visit(stmts: list[ast.stmt]) -> None:
        for st in stmts:
            if isinstance(st, ast.Try):
                visit(st.body)  # the except branch is "no device": our caller handles unknown devices
            elif isinstance(st, ast.If) and "default_max_num_batched_tokens" in assigns(st):
                keep.append(ast.unparse(st))
            elif isinstance(st, ast.Assign) and assigns(st) & wanted and st is not None:
                if any(isinstance(t, ast.Name) and t.id in wanted for t in st.targets):
                    keep.append(ast.unparse(st))

    visit(fn.body)
    return {"function": fn.name, "file": "vllm/engine/arg_utils.py", "source": "\n".join(keep)}


def _max_model_len(root: Path) -> dict:
    """How the default max_model_len is derived: which config keys, capped by what (features of the source)."""
    for rel in ("vllm/config/model.py", "vllm/config/__init__.py", "vllm/config.py"):
        path = root / rel
        if not path.exists():
            continue
        tree = ast.parse(path.read_text())
        fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_get_and_verify_max_len"),
                  None)
        if fn is None:
            continue
        src = ast.unparse(fn)
        keys: list[str] = []
        for cfg_file in sorted((root / "vllm").rglob("*.py")):
            text = cfg_file.read_text(errors="replace")
            if "possible_keys" not in text:
                continue
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "possible_keys"
                                                        for t in node.targets) and isinstance(node.value, ast.List):
                    keys = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
            if keys:
                break
        return {
            "file": rel,
            "function": fn.name,
            "keys": keys,
            "tokenizer_model_max_length_caps": "model_max_length" in src,
            "sentence_transformers_max_seq_length": "max_seq_length" in src or "encoder_config" in src,
            "refuses_above_derived": "greater than the derived" in src,
        }
    return {"error": "no _get_and_verify_max_len"}


def _scheduler(root: Path) -> dict:
    """Does the V1 scheduler keep a context slot for a sampled token on pooling requests (the livelock's mechanism)?

    The RUNNING branch clamps a request's new tokens to max_model_len minus what is computed minus that slot; a
    pooling prompt of exactly max_model_len tokens then stops one short and never finishes. Read as source:
    a hard ``- 1`` (0.10.2 …), ``num_sampled_tokens_per_step`` without a pooling exemption, or with one (the fix).
    """
    out = _scheduler_slot(root)
    out["pooling_capped_at_max_model_len"] = _capped_before_pooling(root)
    return out


def _scheduler_slot(root: Path) -> dict:
    rel = "vllm/v1/core/sched/scheduler.py"
    path = root / rel
    if not path.exists():
        return {"error": f"no {rel}"}
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "num_sampled_tokens_per_step"
                                                for t in node.targets):
            expr = ast.unparse(node.value)
            return {"file": rel, "slot": expr, "pooling_reserves_a_slot": "pooling" not in expr}
    text = ast.unparse(tree)
    for clamp in ("self.max_model_len - 1 - request.num_computed_tokens",  # 0.10.2 … 0.23.0
                  "max_total_tokens - 1 - request.num_computed_tokens"):  # 0.11.1, 0.11.2: min(prompt+max_tokens, mml)
        if clamp in text:
            return {"file": rel, "slot": clamp.removeprefix("self."), "pooling_reserves_a_slot": True}
    return {"file": rel, "slot": None, "pooling_reserves_a_slot": None}


def _capped_before_pooling(root: Path) -> bool | None:
    """check_stop tests num_tokens >= max_model_len before it looks at a pooling request (0.10.2, 0.11.0): a
    pooling prompt that reaches max_model_len is finished as length-capped with no output, the client never
    hears back and the engine goes idle (a dropped request, not a livelock; seen on a real 0.10.2 server)."""
    path = root / "vllm/v1/core/sched/utils.py"
    if not path.exists():
        return None
    fn = next((n for n in ast.walk(ast.parse(path.read_text()))
               if isinstance(n, ast.FunctionDef) and n.name == "check_stop"), None)
    if fn is None:
        return None
    for st in fn.body:  # whichever the function looks at first: a pooling request, or the length cap
        text = ast.unparse(st.test if isinstance(st, ast.If) else st)
        if "pooling_params" in text:
            return False
        if isinstance(st, ast.If) and "max_model_len" in text:
            return True
    return False


def _pooler_config(root: Path) -> dict:
    try:
        mod = importlib.import_module("vllm.config.pooler")
    except ImportError:
        mod = importlib.import_module("vllm.config")
    cls = mod.PoolerConfig
    fields = sorted(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else []
    refused = {}
    for field, value in POOLER_PROBES:
        if fields and field not in fields and field != "normalize":
            continue
        try:
            cls(**{field: value})
        except Exception as e:  # the release refuses it: keep its words
            msg = " ".join(m.strip() for m in str(e).strip().splitlines())
            # pydantic's wrapping (its version, the input echoed) is the reader's, not the release's
            msg = re.sub(r"\s*\[type=[^\]]*\]|\s*For further information visit \S+|^\d+ validation errors? for \w+ "
                         r"(Value error, )?", "", msg)
            refused[f"{field}={value}"] = msg.strip()[:300]
    return {"fields": fields, "refused": refused, "file": _rel(getattr(mod, "__file__", None), root)}


def _strings(root: Path):
    """(file, text) for each string constant (implicit concatenations joined; f-strings unparsed)."""
    paths = []
    for d in SCAN_DIRS:
        p = root / d
        paths += [p] if p.is_file() else sorted(p.rglob("*.py")) if p.is_dir() else []
    for path in paths:
        rel = str(path.relative_to(root))
        try:
            tree = ast.parse(path.read_text(errors="replace"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield rel, node.value, node
            elif isinstance(node, ast.JoinedStr):
                yield rel, ast.unparse(node), node
            elif isinstance(node, ast.Raise) and node.exc is not None:
                yield rel, None, node


def _scan(root: Path, markers: list[str]) -> dict:
    metrics: dict[str, str] = {}
    logs: dict[str, list[dict]] = {m: [] for m in markers}
    refusals: dict[str, str] = {}
    for rel, text, node in _strings(root):
        if text is None:  # a raise: its message, where the file matters to start-up
            if not rel.startswith(REFUSAL_FILES) or not isinstance(node.exc, ast.Call) or not node.exc.args:
                continue
            msg = node.exc.args[0]
            words = ast.unparse(msg)
            if REFUSAL_WORDS.search(words) and len(words) > 25:
                refusals.setdefault(words[:400], rel)
            continue
        if METRIC_RE.match(text):
            metrics.setdefault(text, rel)
        for m in markers:
            if m in text and len(logs[m]) < 4 and all(x["text"] != text for x in logs[m]):
                logs[m].append({"text": text[:600], "file": rel})
    return {"metrics": dict(sorted(metrics.items())), "log_formats": logs,
            "refusals": dict(sorted(refusals.items()))}


def _envs(root: Path) -> dict:
    path = root / "vllm/envs.py"
    names = set(re.findall(r'^\s+"(VLLM_[A-Z0-9_]+)":', path.read_text(), re.M)) if path.exists() else set()
    return {"names": sorted(names), "file": "vllm/envs.py"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--release", required=True)
    ap.add_argument("--markers", default="[]", help="JSON list of log markers to find")
    ap.add_argument("--out", required=True, help="where to write the snapshot (vLLM logs to stdout)")
    a = ap.parse_args()
    import vllm
    root = Path(vllm.__file__).resolve().parent.parent
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    snap: dict = {"release": a.release}
    try:
        snap["installed_as"] = importlib.metadata.version("vllm")
    except importlib.metadata.PackageNotFoundError:
        snap["installed_as"] = None
    for key, fn in (("parser", _parser), ("pooling_defaults", _pooling_defaults), ("batch_rule", _budget_rule),
                    ("pooler_config", _pooler_config), ("envs", _envs), ("max_model_len", _max_model_len),
                    ("scheduler", _scheduler)):
        try:
            snap[key] = fn(root)
        except Exception as e:  # one section's failure is data, not the end of the reading
            snap[key] = {"error": f"{type(e).__name__}: {e}"[:400]}
    snap.update(_scan(root, json.loads(a.markers)))
    Path(a.out).write_text(json.dumps(snap, sort_keys=True))


if __name__ == "__main__":
    main()

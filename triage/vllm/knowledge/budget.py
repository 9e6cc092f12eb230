"""The default ``max_num_batched_tokens`` of a release, computed by that release's own statements.

extract.py kept, as source, the statements of the function that sets
``default_max_num_batched_tokens`` (``EngineArgs.get_batch_defaults`` from 0.11, inline in
``_set_default_args_v1`` before). This module runs them on a described device with a small
interpreter that knows only what those statements use: comparisons, ``and``/``or``/``not``,
arithmetic on ints, dict literals keyed by ``UsageContext``, ``device_name.lower()``, and the
``current_platform`` questions (total memory, name, device capability, is_cpu/is_tpu). Anything
else raises ``Unsupported`` and the caller says the default is unknown rather than guess.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

GiB = 1 << 30


class Unsupported(Exception):
    """The release's statements use something this interpreter does not model."""


@dataclass(frozen=True)
class Device:
    kind: str  # cuda | rocm | cpu | tpu
    name: str = ""
    memory_bytes: int | None = None
    capability: tuple[int, int] | None = None
    world_size: int = 1


class _Platform:
    def __init__(self, d: Device) -> None:
        self.d = d

    def call(self, name: str, args: list[Any]) -> Any:
        d = self.d
        if d.kind == "cpu" and name in ("get_device_total_memory", "get_device_name", "is_device_capability",
                                        "has_device_capability"):
            # the CPU branch at the end of the rule replaces whatever the GPU tiers chose
            return {"get_device_total_memory": 0, "get_device_name": "cpu"}.get(name, False)
        if name == "get_device_total_memory":
            if d.memory_bytes is None:
                raise Unsupported("GPU memory not known")
            return d.memory_bytes
        if name == "get_device_name":
            return d.name
        if name in ("is_device_capability", "has_device_capability"):
            want = args[0]
            if isinstance(want, int):
                want = (want // 10, want % 10)
            if d.capability is None:
                # GB10 (DGX Spark) is the one device these rules single out by capability, 12.1; NVML names
                # it "NVIDIA GB10", so a known name answers that one question
                if tuple(want) == (12, 1) and name == "is_device_capability" and d.name:
                    return "gb10" in d.name.lower()
                raise Unsupported("GPU compute capability not known")
            else:
                cap = d.capability
            return cap == tuple(want) if name == "is_device_capability" else cap >= tuple(want)
        if name == "is_cpu":
            return d.kind == "cpu"
        if name == "is_tpu":
            return d.kind == "tpu"
        if name in ("is_cuda", "is_cuda_alike"):
            return d.kind in ("cuda", "rocm") if name == "is_cuda_alike" else d.kind == "cuda"
        if name == "is_rocm":
            return d.kind == "rocm"
        raise Unsupported(f"current_platform.{name}()")


def _sets_budget(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == TARGET for t in st.targets)
               for st in stmts)


TARGET = "default_max_num_batched_tokens"


class _Interp:
    def __init__(self, device: Device) -> None:
        self.platform = _Platform(device)
        self.env: dict[str, Any] = {"world_size": device.world_size, "GiB_bytes": GiB}
        self.decision: list[str] = []  # why the tier that set the budget last was chosen, in words

    def run(self, stmts: list[ast.stmt], chain: list[str] | None = None) -> None:
        for st in stmts:
            if isinstance(st, ast.Assign):
                for t in st.targets:
                    if not isinstance(t, ast.Name):
                        raise Unsupported(ast.unparse(t))
                    if t.id == "world_size":
                        continue  # ours is given (the release computes it from pp x tp)
                    self.env[t.id] = self.eval(st.value)
            elif isinstance(st, ast.If):
                ok = bool(self.eval(st.test))
                words = [*(chain or []), self.words(st.test, ok)]
                branch = st.body if ok else st.orelse
                if _sets_budget(branch):
                    self.decision = words[-1:]
                if len(branch) == 1 and isinstance(branch[0], ast.If):
                    self.run(branch, words)
                else:
                    self.run(branch)
            elif isinstance(st, ast.Pass):
                continue
            else:
                raise Unsupported(type(st).__name__)

    def words(self, node: ast.AST, ok: bool) -> str:
        """A condition of the rule as a person says it: '>= 70 GiB, not A100' (taken) or '< 70 GiB' (not)."""
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            if ok:
                return ", ".join(self.words(v, True) for v in node.values)
            first_false = next((v for v in node.values if not self.eval(v)), node.values[-1])
            return self.words(first_false, False)
        text = ast.unparse(node)
        if isinstance(node, ast.Compare) and "device_memory" in text and isinstance(node.comparators[0], ast.BinOp):
            n = node.comparators[0].left
            gib = n.value if isinstance(n, ast.Constant) else "?"
            return f">= {gib} GiB" if ok else f"< {gib} GiB"
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and "device_name" in text:
            who = str(node.left.value).upper()
            return f"not {who}" if ok else who
        if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Name) and node.operand.id == "is_gb10":
            return "not GB10 (cc 12.1)" if ok else "GB10 (cc 12.1)"
        if text == "current_platform.is_cpu()":
            return "CPU backend" if ok else "not CPU"
        return text if ok else f"not ({text})"

    def eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                raise Unsupported(f"name {node.id}")
            return self.env[node.id]
        if isinstance(node, ast.Tuple):
            return tuple(self.eval(e) for e in node.elts)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "UsageContext":
                return node.attr
            raise Unsupported(ast.unparse(node))
        if isinstance(node, ast.Dict):
            return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
        if isinstance(node, ast.BoolOp):
            vals = (self.eval(v) for v in node.values)
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.eval(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add, ast.Sub)):
            a, b = self.eval(node.left), self.eval(node.right)
            return a * b if isinstance(node.op, ast.Mult) else a + b if isinstance(node.op, ast.Add) else a - b
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            a, b = self.eval(node.left), self.eval(node.comparators[0])
            op = node.ops[0]
            table = {ast.GtE: lambda: a >= b, ast.Gt: lambda: a > b, ast.Lt: lambda: a < b, ast.LtE: lambda: a <= b,
                     ast.Eq: lambda: a == b, ast.NotEq: lambda: a != b, ast.In: lambda: a in b,
                     ast.NotIn: lambda: a not in b}
            fn = table.get(type(op))
            if fn is None:
                raise Unsupported(ast.unparse(node))
            return fn()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "current_platform":
                return self.platform.call(node.func.attr, [self.eval(a) for a in node.args])
            if node.func.attr == "lower" and not node.args:
                return str(self.eval(owner)).lower()
        raise Unsupported(ast.unparse(node))


@lru_cache(maxsize=64)
def _parsed(src: str) -> list[ast.stmt]:
    """A release's statements parsed once (the default rule runs on every merge of a config)."""
    return ast.parse(src).body


def default_budget(rule: dict[str, Any], device: Device, usage: str = "serve") -> int:
    """The release's default max_num_batched_tokens for `vllm serve` (usage 'serve') or offline LLM."""
    return explain_budget(rule, device, usage)[0]


def explain_budget(rule: dict[str, Any], device: Device, usage: str = "serve") -> tuple[int, str]:
    """(the default budget, why: the tier's conditions in words, e.g. '>= 70 GiB, not A100')."""
    src = rule.get("source")
    if not src:
        raise Unsupported(rule.get("error") or "no batch rule read for this release")
    interp = _Interp(device)
    interp.run(_parsed(src))
    table = interp.env.get("default_max_num_batched_tokens")
    if not isinstance(table, dict):
        raise Unsupported("the statements set no default_max_num_batched_tokens")
    key = "OPENAI_API_SERVER" if usage == "serve" else "LLM_CLASS"
    if key not in table:
        raise Unsupported(f"no {key} entry")
    return int(table[key]), ", ".join(interp.decision)

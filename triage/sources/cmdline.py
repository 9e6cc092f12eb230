"""The `vllm serve` command line as pasted text (also `docker run … vllm/vllm-openai … args` and
`python -m vllm.entrypoints.openai.api_server …`), parsed the way vLLM's FlexibleArgumentParser does.

Unknown options and guide myths become facts (`cmdline_unknown_flags`, `cmdline_myths`) that the
`flags` check turns into findings; options and pooler-config fields vLLM removed or renamed also become
`cmdline_removed_flags`
[{"option", "use", "refs", "release", "certain"}] (catalogue mode `removed-flag`). Every option is
judged against the deployment's own release's parser (triage/vllm/knowledge); which release that
was is the fact `cmdline_checked_against`. The API key's value is never kept.

One room: the reading of one pasted line (the args located in its docker/python forms, parsed as vLLM's parser does,
the facts); a deployment file's reading lives in deploy*.py.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from triage import redact
from triage.sources import RawCapture, SourceResult, deploy, deploy_read
from triage.vllm import argv as vargv
from triage.vllm import flags as vflags
from triage.vllm import knowledge
from triage.vllm import logformats as vformats
from triage.vllm.knowledge import Resolution
from triage.catalogue.versions import parse_version

SOURCE = "cmdline"
# an image tag that names the vLLM release beside other parts: `cuda12.8-vllm0.13.0`, `vllm-v0.11.2-cu128`
_TAG_VLLM_RE = re.compile(r"(?:^|[-_.])vllm[-_]?v?(?P<v>\d+\.\d+(?:\.\d+){0,2})(?![\d.])", re.I)

# dest -> canonical config key (CONTRACTS.md) where they differ
_KEY = {"model_tag": "model", "runner": "runner"}
_INT_KEYS = {
    "max_model_len",
    "max_num_batched_tokens",
    "max_num_seqs",
    "tensor_parallel_size",
    "data_parallel_size",
    "pipeline_parallel_size",
    "kv_cache_memory_bytes",
    "port",
    "block_size",
}
_FLOAT_KEYS = {"gpu_memory_utilization"}
_JSON_KEYS = {
    "hf_overrides",
    "pooler_config",
    "compilation_config",
    "speculative_config",
    "kv_transfer_config",
    "override_generation_config",
    "attention_config",
    "limit_mm_per_prompt",
}

# docker run options that take a value (the image is the first bare token after them)
_DOCKER_VALUE_OPTS = {
    "-p",
    "--publish",
    "-e",
    "--env",
    "-v",
    "--volume",
    "--name",
    "--gpus",
    "--ipc",
    "--shm-size",
    "--runtime",
    "--network",
    "--net",
    "--entrypoint",
    "-w",
    "--workdir",
    "--mount",
    "--env-file",
    "--device",
    "--ulimit",
    "-u",
    "--user",
    "--platform",
    "--cpus",
    "-m",
    "--memory",
    "--restart",
    "-l",
    "--label",
    "--log-driver",
    "--log-opt",
    "-h",
    "--hostname",
    "--security-opt",
    "--cap-add",
    "--cap-drop",
    "--add-host",
    "--pull",
    "--cpuset-cpus",
    "--group-add",
}


def human_int(text: str) -> int:
    """vLLM's human-readable ints: '32768', '32k' (x1000), '32K' (x1024), '1m'/'1M', '1e4'."""
    t = text.strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG]?)", t)
    if not m:
        n = float(t)
    else:
        num, suf = float(m.group(1)), m.group(2)
        n = num * {"": 1, "k": 1000, "K": 1024, "m": 1000**2, "M": 1024**2, "g": 1000**3, "G": 1024**3}[suf]
    if not math.isfinite(n) or abs(n) > 2**63 - 1:  # '1e400', 400 digits: kept as the raw text, never a crash
        raise ValueError(f"{t[:24]!r} is not a finite int64")
    return int(n)


MAX_JSON_DEPTH = 64  # a vLLM config argument is a few levels deep; 100,000 '[' was a RecursionError (issue 33)
MAX_JSON_CHARS = 256 * 1024  # and a few hundred bytes long; 8 MB of JSON is read as the text it is, unparsed


def _depth(text: str) -> int:
    """How deeply ``text`` nests brackets and braces outside quoted strings (one linear pass, no recursion)."""
    depth = deepest = 0
    quote = ""
    escaped = False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]})":
            depth -= 1
    return deepest


def unread(what: str, why: str) -> str:
    """The value kept for a config argument too deep or too long to read: says so, bounded."""
    return f"(not read: {what[:60]} {why})"


def _loads(text: str) -> Any:
    if len(text) > MAX_JSON_CHARS:
        return unread("the value", f"is {len(text):,} characters, more than the {MAX_JSON_CHARS:,} read")
    if any(c in text for c in "[{(") and (d := _depth(text)) > MAX_JSON_DEPTH:
        return unread("the value", f"nests {d:,} levels, more than the {MAX_JSON_DEPTH} read")
    try:
        return json.loads(text)
    except ValueError:
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text


def _tokens(text: str) -> list[str]:
    return vargv.split(text)  # the one splitter (comments, continuations, quotes); linear


def _locate_args(tokens: list[str], res: SourceResult) -> list[str]:
    """Find where vLLM's own arguments begin, noting the launcher and any myth command."""
    myths: list[dict[str, str]] = []
    for i, tok in enumerate(tokens):
        base = tok.rsplit("/", 1)[-1]
        wrapper = _launcher_at(tokens, i, base)
        if wrapper is not None:
            res.add("launcher", f"{wrapper.name}: {wrapper.maps}", tok)
            return _mapped_args(wrapper, tokens[i + 1 :])
        if base in vflags.MYTH_COMMANDS:
            myths.append({"token": tok, "why": vflags.MYTH_COMMANDS[base]})
            rest = tokens[i + 1 :]
            if rest and rest[0] in vflags.MYTH_COMMANDS:
                myths.append({"token": rest[0], "why": vflags.MYTH_COMMANDS[rest[0]]})
                rest = rest[1:]
            res.add("cmdline_myths", myths, "command")
            res.add("launcher", "unknown-command", tok)
            return rest
        if base == "vllm" and i + 1 < len(tokens) and tokens[i + 1] == "serve":
            res.add("launcher", "vllm serve", "command")
            return tokens[i + 2 :]
        if "vllm.entrypoints.openai.api_server" in tok or "vllm.entrypoints.api_server" in tok:
            res.add("launcher", tok, "python -m entry point (deprecated)")
            return tokens[i + 1 :]
        if base == "docker" and i + 1 < len(tokens) and tokens[i + 1] == "run":
            rest = _after_docker_image(tokens[i + 2 :], res)
            if (
                rest
                and not rest[0].startswith("-")
                and (rest[0].rsplit("/", 1)[-1] in vflags.MYTH_COMMANDS or rest[0].startswith("python"))
            ):
                launcher = res.facts.get("launcher")
                rest = _locate_args(rest, res)
                if launcher is not None:
                    res.facts["launcher"] = launcher
            return rest
    return tokens


def _launcher_at(tokens: list[str], i: int, base: str) -> vflags.Launcher | None:
    """The wrapper that starts vLLM at ``tokens[i]`` (``python -m huggingfaceserver``, ``serve run CONFIG``,
    ``gpustack start``), None when the token is not one."""
    if base == "huggingfaceserver":
        return vflags.LAUNCHERS["huggingfaceserver"]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
    if base == "serve" and nxt in ("run", "deploy", "build") and (i == 0 or tokens[i - 1].rsplit("/", 1)[-1] != "vllm"):
        return vflags.LAUNCHERS["serve"]
    if base == "gpustack" and nxt == "start":
        return vflags.LAUNCHERS["gpustack"]
    if base == "xinference" and nxt in ("launch", "register"):
        return vflags.LAUNCHERS["xinference"]
    if base == "trl" and nxt == "vllm-serve":
        return vflags.LAUNCHERS["trl"]
    if base == "swift" and nxt in _SWIFT_COMMANDS:
        return vflags.LAUNCHERS["swift"]
    if base == "llamafactory-cli" and nxt in ("api", "chat", "webchat", "eval", "train"):
        return vflags.LAUNCHERS["llamafactory-cli"]
    if base in ("fastchat.serve.vllm_worker", "sglang.launch_server", "text-embeddings-router", "infinity_emb",
                "text-generation-launcher") or (base == "lmdeploy" and nxt == "serve"):
        return vflags.LAUNCHERS[base]
    return None


_SWIFT_COMMANDS = ("infer", "deploy", "rollout", "sft", "pt", "rlhf", "eval", "app", "export", "sample")


def _mapped_args(wrapper: vflags.Launcher, rest: list[str]) -> list[str]:
    """The wrapper's line as the vLLM arguments it passes on: its own options dropped (the one naming the model
    becomes vLLM's model), the other options spelled as vLLM's parser reads them ('_' is '-')."""
    if not wrapper.passes_rest:
        return []
    if wrapper.vllm_prefix:
        return _prefixed_args(wrapper, rest)
    model: list[str] = []
    out: list[str] = []
    i = 0
    while i < len(rest):
        tok = rest[i]
        i += 1
        if not tok.startswith("--"):
            out.append(tok)
            continue
        name, eq, inline = tok.partition("=")
        name = "--" + name[2:].replace("_", "-")
        if name in wrapper.own_value or name in wrapper.model_from:
            value = inline if eq else (rest[i] if i < len(rest) else "")
            if not eq:
                i += 1
            if name in wrapper.model_from and value and not model:
                model = [value]
            continue
        if name in wrapper.own_flag:
            continue
        out.append(name + (eq + inline if eq else ""))
    return model + out


def _prefixed_args(wrapper: vflags.Launcher, rest: list[str]) -> list[str]:
    """A wrapper whose vLLM options carry its prefix (ms-swift's --vllm_*): those mapped onto vLLM's spelling (a
    true/false value of a vLLM flag as the flag or its --no- form), every other option dropped as the wrapper's own."""
    model: list[str] = []
    out: list[str] = []
    mapped = dict(wrapper.prefixed)
    i = 0
    while i < len(rest):
        tok = rest[i]
        i += 1
        if not tok.startswith("--"):
            continue  # a value of the wrapper's own option, or a stray positional: never vLLM's
        name, eq, inline = tok.partition("=")
        name = "--" + name[2:].replace("_", "-")
        value = inline if eq else (rest[i] if i < len(rest) and not rest[i].startswith("--") else "")
        if not eq and value:
            i += 1
        if name in wrapper.model_from and value and not model:
            model = [value]
            continue
        if not name.startswith(wrapper.vllm_prefix):
            continue
        opt = "--" + name[len(wrapper.vllm_prefix):]
        if opt in mapped and value:
            out += [mapped[opt], value]
        elif opt in wrapper.prefixed_flags:
            on = value.lower() in ("", "true", "1", "yes")
            if on or opt.startswith("--enable-"):  # off is the default of a --disable-/--enforce- flag
                out.append(opt if on else "--no-" + opt[2:])
    return model + out


def _image_facts(res: SourceResult, image: str, where: str, what: str, at: str = "") -> None:
    """The image's facts: itself, the device its name says, the release its tag says."""
    res.add("docker_image", image, where + at)
    low = image.lower()
    if "vllm" in low:
        dev = "rocm" if "rocm" in low else "cpu" if "cpu" in low else "cuda" if "vllm-openai" in low else None
        res.add("device", dev, f"{what} {image}{at}")
    tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else ""
    if parse_version(tag):
        res.add("vllm_version", tag.lstrip("v"), f"{what} tag {image}{at}")
    elif (m := _TAG_VLLM_RE.search(tag)) and parse_version(m["v"]):  # gpustack/runner:cuda12.8-vllm0.13.0
        res.add("vllm_version", m["v"], f"{what} tag {image}{at}")


def _after_docker_image(tokens: list[str], res: SourceResult) -> list[str]:
    i = 0
    env: dict[str, str] = {}
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith("-"):
            name = tok.split("=", 1)[0]
            if name in ("-e", "--env"):
                val = tok.split("=", 1)[1] if "=" in tok else (tokens[i + 1] if i + 1 < len(tokens) else "")
                k, _, v = val.partition("=")
                env[k] = "[REDACTED]" if re.search(r"(?i)key|token|secret|password", k) else v
            if "=" not in tok and name in _DOCKER_VALUE_OPTS:
                i += 2
            else:
                i += 1
            continue
        image = tok
        res.add("launcher", "docker", f"image {image}")
        _image_facts(res, image, "docker run", "docker image")
        if env:
            res.add("docker_env", env, "docker run -e")
            if "VLLM_API_KEY" in env:
                res.add("api_key_required", True, "docker -e VLLM_API_KEY")
        rest = tokens[i + 1 :]
        if len(rest) >= 2 and rest[0] == "vllm" and rest[1] == "serve":
            rest = rest[2:]  # the image's entrypoint is already `vllm serve`; repeating it is harmless
        return rest
    return []


def _convert(dest: str, raw: Any) -> Any:
    if isinstance(raw, list):
        return raw
    if raw is True or raw is False:
        return raw
    try:
        if dest in _INT_KEYS:
            return human_int(raw)
        if dest in _FLOAT_KEYS:
            f = float(raw)
            return f if math.isfinite(f) else raw
    except ValueError:
        return raw
    if dest in _JSON_KEYS:
        return _loads(raw)
    return raw


_is_option = vargv.is_option


def parse_args(
    args: list[str], resolution: Resolution | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """(dest -> value, options the release's parser refuses with why, positionals) from vLLM's own tokens.

    Each option is looked up in the resolved release's parser (triage/vllm/knowledge) as argparse does
    (triage/vllm/argv.py: exact, else an unambiguous prefix); a flag's value is what that parser stores for
    the spelling used (``--disable-prefix-caching`` sets enable_prefix_caching False on 0.33, and is no option
    at all on 0.32)."""
    p = _parse(args, resolution)
    return p.values, p.unknown, p.positionals


def _parse(args: list[str], resolution: Resolution | None) -> vargv.Parsed:
    return vargv.parse(args, resolution, convert=_convert, loads=_loads)


def _removed_seen(unknown: list[dict[str, Any]], values: dict[str, Any],
                  resolution: Resolution) -> list[dict[str, Any]]:
    """Dropped/renamed options and refused JSON fields (`--pooler-config '{"normalize": …}'`) on this line."""
    out = [
        {"option": u["option"], "use": u["removed"]["use"], "refs": u["removed"]["refs"],
         "release": u["release"], "certain": u["certain"], "removed_in": u["removed"].get("removed_in")}
        for u in unknown
        if u.get("removed")
    ]
    for dest in ("pooler_config",):
        val = values.get(dest)
        if isinstance(val, dict):
            for name, v in val.items():
                r = vflags.pooler_field_verdict(str(name), v, resolution)
                if r is not None:
                    out.append({"option": r["option"], "use": r["use"], "refs": r["refs"], "why": r["why"],
                                "release": resolution.release, "certain": r["certain"]})
    return out


def _deploy_facts(res: SourceResult, dep: deploy.Deployment, t: deploy.DeployTarget) -> None:
    """What a deployment file says besides the argv: which target, its image, environment and GPUs, each
    with the file, document and line it came from."""
    others = [n for n in dep.names() if n != t.name]
    res.add("deploy_target", {"file": dep.file, "shape": dep.shape, "target": t.name, "picked": t.picked,
                              "others": others, "skipped": list(dep.skipped), "where": str(t.origin)},
            f"{t.picked} ({t.origin})")
    res.add("launcher", f"{dep.shape} ({t.name})", str(t.origin))
    if t.image and deploy.image_is_vllm(t.image):  # a third-party image's tag (2026.03) is no vLLM release
        _image_facts(res, t.image, f"{dep.shape} image", "image", f" ({t.at(t.image_line)})")
    elif t.image:
        res.add("docker_image", t.image, f"{dep.shape} image ({t.at(t.image_line)})")
    if t.env:
        res.add("docker_env", dict(t.env), f"env of {t.name} ({t.origin})")
        for k, typed, conv in (("VLLM_LOG_STATS_INTERVAL", "log_stats_interval_s", float),
                               ("VLLM_USE_V2_MODEL_RUNNER", "use_v2_model_runner", lambda v: v.strip() == "1")):
            if k in t.env:
                try:
                    res.add(typed, conv(t.env[k]), f"env {k}={t.env[k]} ({t.at(t.env_lines.get(k))})")
                except ValueError:
                    pass
        if "VLLM_API_KEY" in t.env:
            res.add("api_key_required", True, f"env VLLM_API_KEY ({t.at(t.env_lines.get('VLLM_API_KEY'))})")
    if t.gpu_count is not None:
        res.add("gpu_count", t.gpu_count, f"{deploy.GPU_RESOURCE}: {t.gpu_count} ({t.at(t.gpu_line)})")
        if t.gpu_count > 0 and "device" not in res.facts:
            res.add("device", "cuda", f"{deploy.GPU_RESOURCE} resources ({t.at(t.gpu_line)})")
    if t.gpu_product:
        # GPU Feature Discovery writes the product name with dashes for spaces: NVIDIA-GeForce-RTX-3080-Ti
        name = t.gpu_product.replace("-", " ") if " " not in t.gpu_product else t.gpu_product
        res.add("gpu_name", name, f"node label {deploy.GPU_PRODUCT_LABEL}={t.gpu_product} "
                                  f"({t.at(t.gpu_product_line)})")
        if t.gpu_memory_mib:
            res.add("gpu_memory_total_bytes", t.gpu_memory_mib << 20,
                    f"node label {deploy.GPU_MEMORY_LABEL}={t.gpu_memory_mib} ({t.at(t.gpu_product_line)})")
    if t.liveness:
        res.add("liveness_probe", t.liveness, f"livenessProbe of {t.name} ({t.at(t.liveness_line)})")


def _where_options(res: SourceResult, t: deploy.DeployTarget, args_from: int, resolution: Resolution) -> None:
    """Each option's fact says the file, document and line of the argv item it came from."""
    lines: dict[str, int | None] = {}
    first_pos: int | None = None
    argv = list(t.argv)
    for i in range(args_from, len(argv)):
        tok = argv[i]
        if _is_option(tok):
            spec = vargv.resolve(tok.split("=", 1)[0].split(".", 1)[0] if tok.startswith("--") else tok,
                                 knowledge.release(resolution.release)).spec
            if spec is not None:
                lines.setdefault(f"--{spec.dest.replace('_', '-')}", t.lines[i])
        elif first_pos is None and (i == args_from or not _is_option(argv[i - 1])):
            first_pos = i
    if first_pos is not None:
        lines.setdefault("--model", t.lines[first_pos])
        lines.setdefault("--model-tag", t.lines[first_pos])
    for key, f in list(res.facts.items()):
        if f.detail in lines and f.source == SOURCE:
            res.add(key, f.value, f"{f.detail} ({t.at(lines[f.detail])})")


_ORCHESTRATORS = {"gpustack": "GPUStack"}
MAX_LOG_LINES = 200_000  # the wrapped line is near the start of an instance log; a bound, not a limit people meet
MAX_LINE = 64 * 1024


@dataclass(frozen=True)
class Wrapped:
    """The `vllm serve` line an orchestrator printed in its own log (``in_log``): the line as a command line, who
    printed it, where, and the runner image it names."""

    text: str
    who: str
    line: int
    image: str | None = None


def in_log(text: str | None) -> Wrapped | None:
    """The first `vllm serve` line an orchestrator's log line carries (GPUStack: 'arguments: [vllm serve …]'), None
    when the log holds none (logformats.toml ORCHESTRATOR_ARGV_RES); bounded in lines and line length."""
    if not text or "arguments" not in text:
        return None
    for n, line in enumerate(text.splitlines(), start=1):
        if n > MAX_LOG_LINES:
            break
        if "arguments" not in line or len(line) > MAX_LINE:
            continue
        for rx in vformats.ORCHESTRATOR_ARGV_RES:
            m = rx.search(line)
            if m is None:
                continue
            argv = m["argv"]
            argv = argv if argv.startswith("vllm ") else "vllm " + argv
            got = m.groupdict()
            return Wrapped(argv, _ORCHESTRATORS.get(got["who"], got["who"]), n, got.get("image"))
    return None


def collect_wrapped(w: Wrapped, release: object = None) -> SourceResult:
    """The facts of an orchestrator's `vllm serve` line as ``collect`` reads a pasted one, the orchestrator named as
    the launcher and its runner image read (the release its tag names, when no other evidence gave one)."""
    scratch = SourceResult(SOURCE)
    if w.image:
        _image_facts(scratch, w.image, f"{w.who} log line {w.line}", "runner image")
    tag = scratch.facts.get("vllm_version")
    res = collect(w.text, release=release if release is not None else (tag.value if tag else None))
    if res.unavailable:
        return res
    where = f"{w.who}'s log line {w.line}"
    res.add("launcher", f"{w.who}: the `vllm serve` line it started, from its log", where)
    for key, fact in scratch.facts.items():
        res.facts.setdefault(key, fact)
    res.add("cmdline_origin", where, where)
    return res


@dataclass(frozen=True)
class CommandLine:
    """One command line, split and located once (``read``) and carried to every consumer: the checks' facts
    (``collect``), the fix blocks and the deployment patch (triage/fixblocks.py) render this ``argv``, never
    the text again. ``args_from``: where vLLM's own arguments begin (after ``vllm serve``, ``docker run … IMAGE``,
    a launcher); ``origin``: where it came from; ``deployment``/``target``: the file's reading, when it was one."""

    argv: tuple[str, ...]
    args_from: int
    origin: str
    launcher: str | None = None
    error: str | None = None  # why there is no command line (a file over the bounds, no vLLM server in it)
    deployment: Any = field(default=None, compare=False, repr=False)
    target: Any = field(default=None, compare=False, repr=False)

    @property
    def args(self) -> tuple[str, ...]:
        return self.argv[self.args_from:]

    def to_dict(self) -> dict[str, Any]:
        return {"argv": vargv.masked(self.argv), "args_from": self.args_from, "origin": self.origin,
                "launcher": self.launcher}


@lru_cache(maxsize=16)
def read(text: str, file: str | None = None, pick: str | None = None) -> CommandLine:
    """The command line ``text`` holds, read once per text (a deployment file is parsed once per check, whoever asks):
    a deployment file's picked vLLM target's argv, else the pasted line split as a shell does (triage/vllm/argv.py)."""
    try:
        dep = deploy_read.read(text, file)
    except deploy.DeployError as e:
        return CommandLine((), 0, file or "the deployment file", error=str(e))
    if dep is not None:
        t = dep.pick(pick)
        if t is None:
            why = (f"{dep.file}: no vLLM server in it ({'; '.join(dep.skipped) or 'nothing to run'})"
                   if not dep.targets else f"{dep.file}: no target {pick!r}; it has {', '.join(dep.names())}")
            return CommandLine((), 0, dep.file, error=why, deployment=dep)
        tokens, origin = list(t.argv), f"{dep.file}: {t.name}"
    else:
        t, tokens, origin = None, _tokens(text), "the pasted command line"
    if not tokens:
        return CommandLine((), 0, origin, error="empty command line", deployment=dep, target=t)
    scratch = SourceResult(SOURCE)
    args = _locate_args(tokens, scratch)
    launcher = scratch.facts.get("launcher")
    return CommandLine(tuple(tokens), len(tokens) - len(args), origin,
                       str(launcher.value) if launcher is not None else None, deployment=dep, target=t)


def collect(text: str, release: object = None, *, pick: str | None = None, file: str | None = None) -> SourceResult:
    """Parse pasted command-line text into facts with source 'cmdline'.

    The text may also be a deployment file (triage/sources/deploy.py: a Kubernetes manifest, production-stack
    Helm values, a compose file): its vLLM container's argv is parsed the same way; ``pick`` names the
    container / model spec / service when it has several (default: the first), ``file`` is the name its
    facts cite.
    ``release``: the deployment's vLLM release as other evidence says it (server /version, start-up log,
    the user's answer); else the image tag on this line; else unknown (checked against the newest read).
    """
    res = SourceResult(SOURCE)
    res.captures.append(RawCapture("cmdline", "command line", text))
    cl = read(text, file, pick)
    if cl.error:
        res.unavailable = cl.error
        return res
    dep, target = cl.deployment, cl.target
    if dep is not None and target is not None:
        _deploy_facts(res, dep, target)
    tokens = list(cl.argv)
    res.add("cmdline_argv", cl.to_dict(), cl.origin)
    launcher = res.facts.get("launcher")
    args = _locate_args(tokens, res)
    if target is not None and launcher is not None:
        res.facts["launcher"] = launcher  # the deployment, not only its `vllm serve`
    tag = res.facts.get("vllm_version")
    resolution = knowledge.for_version(release if release is not None else (tag.value if tag else None))
    res.add("cmdline_checked_against", resolution.to_dict(), "triage/vllm/knowledge")
    parsed = _parse(args, resolution)
    values, unknown, positionals = parsed.values, parsed.unknown, parsed.positionals
    if parsed.abbreviations:
        res.add("cmdline_abbreviations", dict(parsed.abbreviations),
                f"argparse's prefix matching in vllm serve {resolution.release}'s parser")
    if unknown:
        res.add("cmdline_unknown_flags", unknown, f"not in vllm serve {resolution.release}'s parser")
    gone = _removed_seen(unknown, values, resolution)
    if gone:
        res.add("cmdline_removed_flags", gone, f"vllm serve {resolution.release}'s parser and PoolerConfig")
    if positionals and "model" not in values:
        values["model"] = positionals[0]
    if "model_tag" in values:
        values.setdefault("model", values.pop("model_tag"))
    if "api_key" in values:
        keys = values.pop("api_key")  # nargs='+': every key given is a secret for the rest of the run
        for k in keys if isinstance(keys, list) else [keys]:
            redact.add_secret(k if isinstance(k, str) else None)
        # "--api-key on …" read as the option and its value: an older redactor printed "--api-key [REDACTED] the
        # command line" (issue 33); the option last, nothing after it to mistake for a key
        res.add("api_key_required", True, "the command line sets --api-key")
    stated: set[str] = set()
    for dest, val in values.items():
        key = _KEY.get(dest, dest)
        if key == "served_model_name" and isinstance(val, list):
            val = val[0] if val else None
        res.add(key, val, f"--{dest.replace('_', '-')}")
        stated.add(key)
    hf = values.get("hf_overrides")
    if isinstance(hf, dict) and "is_matryoshka" in hf:
        res.add("is_matryoshka", bool(hf["is_matryoshka"]), "--hf-overrides is_matryoshka")
    pc = values.get("pooler_config")
    if isinstance(pc, dict):
        pt = pc.get("seq_pooling_type") or pc.get("pooling_type")
        if pt:
            res.add("pooling_type", str(pt).upper(), "--pooler-config")
            stated.add("pooling_type")
    res.add("cmdline_args", {k: v for k, v in values.items() if k != "api_key"}, "parsed arguments")
    res.stated_args = stated
    if target is not None:
        _where_options(res, target, len(tokens) - len(args), resolution)
    return res

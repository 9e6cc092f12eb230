"""Copyable fix blocks: a finding's fix as the command line, request and client setting to paste.

The catalogue record says *what* to change in prose (``FailureMode.fix``); this module turns the
same change into text a user can copy: the user's own ``vllm serve`` command line with the fix
applied (a ready line and a diff), the request body that carries the new value, the client call,
and the upgrade. The flag and request edits are each record's own (``FailureMode.edits``: its prose as
data); ``tests/test_fixblocks.py`` asserts every flag an edit writes appears in the
record's own fix text, so the two cannot drift apart. Numbers come from the effective config and
the record (``fixed_in``), never from here.

When no command line was given, one is rebuilt from the effective config (the values a server, a
log or a process stated) and the block says so. ``ref_url``/``link_refs`` make every vLLM issue
or PR reference a link (pages and exports share them). No Streamlit here.

One room: the command-line, request and client blocks are one fix rendered for copying, built from the same record's
edits and the same release's option table.
"""
from __future__ import annotations

import difflib
import json
import re
import shlex
from functools import lru_cache
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from triage import catalogue
from triage.catalogue import FailureMode
from triage.catalogue.check_ids import CHECKLIST, CHECKS
from triage.differential import is_diagnosis
from triage.findings import Finding, severity
from triage.vllm import argv as vargv
from triage.vllm import knowledge
from triage.vllm.knowledge import Option, normalize_option

VLLM_REPO = "https://github.com/vllm-project/vllm"
# "vllm#NNNNN", "vllm #NNNNN", and a bare "#NNNNN" (4+ digits, the numbers vLLM's tracker uses)
_REF = re.compile(r"(?<![\w/#\[])((?:vllm ?)?#)(\d{4,6})\b")


def ref_url(ref: str) -> Optional[str]:
    """The GitHub address of a vLLM issue or PR reference (GitHub redirects /issues/N to a PR)."""
    m = re.search(r"#(\d{3,6})\b", ref)
    return f"{VLLM_REPO}/issues/{m.group(1)}" if m else None


def link_refs(text: str, fmt_: str = "md") -> str:
    """Every vLLM issue/PR reference in already-escaped ``text`` as a link (``md`` or ``html``)."""

    def sub(m: re.Match[str]) -> str:
        shown, url = m.group(0), f"{VLLM_REPO}/issues/{m.group(2)}"
        if fmt_ == "html":
            return f'<a href="{url}">{shown}</a>'
        return f"[{shown}]({url})"

    return _REF.sub(sub, text)


@dataclass(frozen=True)
class FixBlock:
    """One copyable piece of a fix: ``code`` is pasted as is (``language`` for highlighting)."""

    kind: str  # cmdline | diff | patch | request | client | upgrade
    title: str
    code: str
    language: str = "bash"
    note: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "title": self.title, "code": self.code, "language": self.language,
                "note": self.note}


def _release(vals: Mapping[str, Any]) -> knowledge.Release:
    """The release whose own parser spells the options (the deployment's, else the nearest read)."""
    return knowledge.release(knowledge.for_version(vals.get("vllm_version")).release)


# -- the command line ----------------------------------------------------------------------------

# config keys a rebuilt command line states (when the source said so, not a default rule)
_REBUILD_KEYS = ("runner", "convert", "max_model_len", "max_num_batched_tokens", "max_num_seqs",
                 "enable_chunked_prefill", "enable_prefix_caching", "gpu_memory_utilization", "dtype",
                 "kv_cache_memory_bytes", "tensor_parallel_size", "served_model_name")


def _values(config: Any) -> dict[str, Any]:
    """{key: value} of an EffectiveConfig, a stored config ({"values": {k: {value, source}}}) or a plain dict."""
    if config is None:
        return {}
    if hasattr(config, "values") and hasattr(config, "fact"):
        return {k: f.value for k, f in config.values.items()}
    vals = config.get("values", config) if isinstance(config, Mapping) else {}
    if not isinstance(vals, Mapping):
        return {}
    return {k: (v.get("value") if isinstance(v, Mapping) and "value" in v else v) for k, v in vals.items()}


def _sources(config: Any) -> dict[str, str]:
    if hasattr(config, "values") and hasattr(config, "fact"):
        return {k: f.source for k, f in config.values.items()}
    vals = config.get("values", config) if isinstance(config, Mapping) else {}
    return {k: str(v.get("source")) for k, v in (vals or {}).items() if isinstance(v, Mapping)}


def _option(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def rebuild_cmdline(config: Any, rel: Optional[knowledge.Release] = None) -> Optional[list[str]]:
    """``vllm serve MODEL --flag value …`` from the effective config's stated values; None without a model."""
    vals, srcs = _values(config), _sources(config)
    rel = rel or _release(vals)
    model = vals.get("model") or vals.get("served_model_name")
    if not isinstance(model, str) or not model:
        return None
    # the keys the user set explicitly, when a command line or a log's non-default args told (else every stated one)
    stated = getattr(config, "stated_args", None) if not isinstance(config, Mapping) else config.get("stated_args")
    argv = ["vllm", "serve", model]
    for k in _REBUILD_KEYS:
        v = vals.get(k)
        if v is None or srcs.get(k) == "default-rule" or (k == "served_model_name" and v == model):
            continue
        if stated is not None and k not in stated:
            continue
        argv += _flag_tokens(k, v, rel)
    return argv


@lru_cache(maxsize=64)
def _by_dest(release: str) -> dict[str, Option]:
    rel = knowledge.release(release)
    out: dict[str, Option] = {}
    for opt in (rel.lookup(s) for s in rel.option_strings()):
        if opt is not None:
            out.setdefault(opt.dest, opt)
    return out


def _flag_tokens(dest: str, value: Any, rel: knowledge.Release) -> list[str]:
    """``dest`` set to ``value`` in the release's own spelling (``--no-X`` / ``--disable-X`` where it has them)."""
    spec = _by_dest(rel.release).get(dest)
    opt = spec.canonical if spec is not None else _option(dest)
    if isinstance(value, bool):
        if spec is not None and spec.kind != "value":
            spelled = sorted((x for x in spec.strings if x.startswith("--") and spec.sets.get(x) is value),
                             key=lambda x: (not x.startswith("--no-"), x != spec.canonical, x))
            return spelled[:1]  # a store_true flag has no spelling for False: leaving it out is the fix
        return [opt] if value else ["--no-" + opt[2:]]
    return [opt, json.dumps(value) if isinstance(value, (dict, list)) else str(value)]


def _patch_blocks(cl: Any, text: str, argv: list[str], fixed: list[str], serve: Mapping[str, Any],
                  rel: knowledge.Release) -> list[FixBlock]:
    """The fix as a patch of the user's deployment file (triage/deploy_patch.py), when the command line came from
    one (``cl``: the file's reading, done once by triage/sources/cmdline.py ``read``)."""
    from triage import deploy_patch
    from triage.sources import deploy

    t = cl.target if cl is not None else None
    if t is None:
        return []
    extra = None
    if t.shape == "helm-values":
        docs = deploy.load(text)
        extra = deploy.get(docs[t.origin.doc - 1][0], *t.pointer, "vllmConfig", "extraArgs")
        extra = [str(x) for x in extra] if isinstance(extra, list) else []
    ops = deploy_patch.operations(t, argv, fixed, serve, lambda a, s: apply_serve(a, s, rel), extra)
    if not ops:
        return []
    return [FixBlock("patch", f"Patch of {cl.deployment.file}: {t.name}", deploy_patch.block_text(t, ops), "yaml",
                     "JSON Patch (RFC 6902) operations on your file's document; the paths point into it.")]


def command_line(text: str) -> Any:
    """The one reading of a command line or deployment file (triage/sources/cmdline.py ``read``, cached): the same
    argv the checks judged, never the text split again here."""
    from triage.sources import cmdline as cmdline_source

    return cmdline_source.read(text)


def apply_serve(argv: list[str], serve: Mapping[str, Any], rel: Optional[knowledge.Release] = None) -> list[str]:
    """The command line with each option of ``serve`` set, in the spelling of ``rel`` (default: the newest
    release read): an option the line has is changed where it stands (a later repeat of it dropped), one it
    lacks is appended; None drops it; ``!--opt`` drops an option by its name. Every other token is kept as is,
    so the result is the given line plus the changed options."""
    rel = rel or knowledge.release(knowledge.releases()[-1])
    drop_names = {k[1:] for k in serve if k.startswith("!")}
    dests = {k for k in serve if not k.startswith("!")}
    done: set[str] = set()
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if vargv.is_option(tok) and tok != "--":
            name, inline = normalize_option(tok.split("=", 1)[0]), "=" in tok
            m = vargv.resolve(name.split(".", 1)[0] if name.startswith("--") else name, rel)  # as argparse reads it
            spec = m.spec
            dest = spec.dest if spec is not None else None
            attached = not name.startswith("--") and m.string is not None and len(name) > len(m.string)  # -O3
            takes = not inline and not attached and (spec.kind == "value" if spec else (
                i + 1 < len(argv) and not argv[i + 1].startswith("-")))
            if (dest is not None and dest in dests) or name in drop_names:
                if dest is not None and dest in dests and dest not in done:
                    done.add(dest)
                    if serve[dest] is not None:
                        out += _flag_tokens(dest, serve[dest], rel)  # in place of the old one
                i += 2 if takes else 1
                continue
            out.append(tok)
            if takes and i + 1 < len(argv):
                out.append(argv[i + 1])
                i += 1
        else:
            out.append(tok)
        i += 1
    for dest in serve:
        if dest in dests and dest not in done and serve[dest] is not None:
            out += _flag_tokens(dest, serve[dest], rel)
    return out


def _layout(argv: list[str]) -> list[str]:
    """The command and then one option (with its value) per line: what the diff compares."""
    lines: list[str] = []
    cur: list[str] = []
    for tok in argv:
        if tok.startswith("-") and cur and (lines or any(t in ("serve",) for t in cur)):
            lines.append(("  " if lines else "") + shlex.join(cur))
            cur = []
        cur.append(tok)
    if cur:
        lines.append(("  " if lines else "") + shlex.join(cur))
    return lines


# -- requests and clients --------------------------------------------------------------------------

def _request_blocks(fields: Mapping[str, Any], model: Optional[str], url: Optional[str],
                    needs_key: bool = False) -> list[FixBlock]:
    body = {"model": model or "MODEL", "input": ["your text"], **fields}
    base = (url or "http://127.0.0.1:8000").rstrip("/")
    auth = ' -H "Authorization: Bearer $VLLM_API_KEY"' if needs_key else ""
    curl = (f"curl -s {shlex.quote(base + '/v1/embeddings')} -H 'Content-Type: application/json'{auth} \\\n"
            f"  -d {shlex.quote(json.dumps(body))}")
    extra = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in fields.items())
    key = 'os.environ["VLLM_API_KEY"]' if needs_key else '"EMPTY"'
    py = "\n".join([
        "import os\n" if needs_key else "",
        "from openai import OpenAI",
        "",
        f"client = OpenAI(base_url={json.dumps(base + '/v1')}, api_key={key})",
        'texts = ["your text"]',
        f"client.embeddings.create(model={json.dumps(model or 'MODEL')}, input=texts,",
        f"                         extra_body={{{extra}}})"]).lstrip("\n")
    shown = ", ".join(f"{k} = {v}" for k, v in fields.items())
    return [FixBlock("request", f"Request: send {shown}", curl, "bash"),
            FixBlock("client", f"Client setting (OpenAI Python): {shown}", py, "python")]


# -- the blocks ----------------------------------------------------------------------------------

mode_of = catalogue.mode_of  # the record a finding (or its dict) reports


def applies(mode: FailureMode, config: Any = None) -> bool:
    """Whether ``mode``'s fix is one to offer this deployment: not for a release outside the record's range
    (no livelock fix on a release that carries its fix). An unknown release keeps it (the prose says why)."""
    return mode.affects(_values(config).get("vllm_version")) is not False


def _given_cmdline(cmdline: Optional[str], vals: Mapping[str, Any]) -> tuple[Optional[list[str]], str]:
    """The command line to edit and what it is: the user's pasted line, else the server process's own
    (``process_cmdline``, read by the checklist from the process listening on the port), else none."""
    for text, what in ((cmdline, "your command line"),
                       (vals.get("process_cmdline"), "the server process's own command line"
                        + (f" (pid {vals['server_pid']})" if vals.get("server_pid") else ""))):
        if isinstance(text, str) and text.strip():
            cl = command_line(text)  # the pasted text may be a deployment file (its vLLM container's argv)
            if cl.argv and not cl.error:
                return list(cl.argv), what
    return None, ""


def _port(value: Any) -> int:
    """A TCP port to write into a shell line: an integer 1..65535, else vLLM's default 8000 (never the text)."""
    text = str(value).strip() if value is not None and not isinstance(value, bool) else ""
    return int(text) if text.isascii() and text.isdigit() and 0 < int(text) < 65536 else 8000


def _now_block(mode: FailureMode, vals: Mapping[str, Any], url: Optional[str],
               request_ids: list[str]) -> Optional[FixBlock]:
    """What to do while it is happening (``mode.now``): vLLM aborts a request when its client connection closes,
    so the block lists and ends the connections to the server's port (the stuck request's id when known)."""
    if not mode.now:
        return None
    port = None
    try:
        from urllib.parse import urlsplit  # noqa: PLC0415

        port = urlsplit(url).port if url else None
    except ValueError:
        port = None
    port = _port(port or vals.get("port"))
    lines = []
    if request_ids:  # outside strings (a log's, the server's): JSON strings, so no line end starts a command
        ids = ", ".join(json.dumps(str(i), ensure_ascii=True) for i in request_ids[:5])
        lines.append(f"# the stuck request: {ids} (close the client that sent it)")
    lines += [f"ss -tnp state established '( sport = :{port} )'   # the clients holding requests on the server",
              f"sudo ss -K state established '( sport = :{port} )'  # end them: vLLM aborts their requests"]
    return FixBlock("now", "Now, while a request is stuck: " + mode.now, "\n".join(lines), "bash",
                    "Ends every in-flight request on that port; their clients see a closed connection.")


def blocks_for_mode(mode: FailureMode, config: Any = None, *, cmdline: Optional[str] = None,
                    model: Optional[str] = None, url: Optional[str] = None,
                    request_ids: Optional[list[str]] = None, now: bool = False) -> list[FixBlock]:
    """The copyable blocks of one failure mode's fix, for this config and the user's command line, ordered by
    risk: what to do now (``now``: a request is stuck), the request and client change, the restart with the
    command line edited, the upgrade (never one the server's release already has)."""
    vals = _values(config)
    edits = mode.edits(vals) if mode.edits else []
    serve: dict[str, Any] = {}
    request: dict[str, Any] = {}
    upgrade = None
    for e in edits:
        serve.update(e.serve)
        request.update(e.request)
        upgrade = upgrade or e.upgrade
    out: list[FixBlock] = []
    first = _now_block(mode, vals, url, list(request_ids or ())) if now else None
    if first is not None:
        out.append(first)
    if request:
        out += _request_blocks(request, model or vals.get("served_model_name") or vals.get("model"), url,
                               bool(vals.get("api_key_required")))
    if serve:
        rel = _release(vals)
        given, what = _given_cmdline(cmdline, vals)
        argv = given or rebuild_cmdline(config, rel)
        if argv:
            fixed = apply_serve(argv, serve, rel)
            note = (f"Edited {what}: only the changed options differ." if given else
                    "Rebuilt from the effective config (no command line was given or read): compare it with yours.")
            why = "; ".join(e.why for e in edits if e.serve and e.why)
            out.append(FixBlock("cmdline", f"Restart with the fix ({why})" if why else "Restart with the fix",
                                shlex.join(fixed), "bash", note))
            if given and cmdline and what == "your command line":
                out += _patch_blocks(command_line(cmdline), cmdline, argv, fixed, serve, rel)
            before, after = _layout(argv), _layout(fixed)
            diff = "\n".join(difflib.unified_diff(before, after, "before", "after", lineterm="", n=1))
            if diff:
                out.append(FixBlock("diff", "What changes in the command line", diff, "diff"))
        else:
            opts = " ".join(shlex.join(_flag_tokens(k, v, rel)) if v is not None else f"(drop {_option(k.lstrip('!'))})"
                            for k, v in serve.items())
            out.append(FixBlock("cmdline", "Serve options to set", opts, "bash",
                                "Give the command line on the Target page for a ready-to-run line."))
    if upgrade and _below(vals.get("vllm_version"), upgrade):
        out.append(FixBlock("upgrade", f"Upgrade to vLLM >= {upgrade}", f'pip install -U "vllm>={upgrade}"', "bash",
                            f"Docker: vllm/vllm-openai:v{upgrade}"))
    return out


def _below(version: Any, upgrade: str) -> bool:
    """True unless the server's release is known to be at or above ``upgrade`` (an unknown one: offer it)."""
    from triage.catalogue.versions import parse_version  # noqa: PLC0415

    v, u = parse_version(version), parse_version(upgrade)
    return v is None or u is None or v < u


def changed_keys(mode: FailureMode, config: Any = None) -> set[str]:
    """The config keys the mode's fix changes (serve options and request fields): the steps that judge
    them are where the root cause sits, even when their own finding passes."""
    keys: set[str] = set()
    for e in mode.edits(_values(config)) if mode.edits else []:
        keys |= {k for k in e.serve if not k.startswith("!")} | set(e.request)
    return keys


def settings_blocks(findings: Iterable[Finding | Mapping[str, Any]]) -> list[FixBlock]:
    """Client settings a probe measured and printed (evidence ``settings_to_copy``), once each."""
    seen: list[str] = []
    for f in findings:
        ev = (f.evidence if isinstance(f, Finding) else f.get("evidence")) or {}
        s = ev.get("settings_to_copy") if isinstance(ev, Mapping) else None
        if isinstance(s, str) and s and s not in seen:
            seen.append(s)
    return [FixBlock("client", "Client settings", s, "python") for s in seen]


def headline_mode(findings: Iterable[Finding | Mapping[str, Any]]) -> tuple[Optional[FailureMode], bool]:
    """(the record the headline names, whether a cause is named at all): a diagnosis (warn and worse, worst
    first) gives its named record, and a "one of" diagnosis names none (its experiments are the fix); without
    one, the worst finding (warn and worse) that reports a record. Never another record that merely also failed."""
    bad = sorted((f for f in findings if severity(_status(f)) >= severity("warn")), key=lambda f: -severity(_status(f)))
    diag = next((f for f in bad if is_diagnosis(f)), None)
    if diag is not None:
        named = diag.failure_mode if isinstance(diag, Finding) else diag.get("failure_mode")
        return (catalogue.MODES.get(named) if named else None), bool(named)
    for f in bad:
        mode = mode_of(f)
        if mode is not None:
            return mode, True
    return None, False


def _request_ids(findings: Iterable[Finding | Mapping[str, Any]]) -> list[str]:
    """Request ids the evidence names as stuck (a log's or the metrics' ``stuck_request_ids``)."""
    out: list[str] = []
    for f in findings:
        ev = (f.evidence if isinstance(f, Finding) else f.get("evidence")) or {}
        ids = ev.get("stuck_request_ids") if isinstance(ev, Mapping) else None
        out += [str(i) for i in ids or () if str(i) not in out]
    return out


def _stuck(findings: Iterable[Finding | Mapping[str, Any]], mode: FailureMode) -> bool:
    """Something was seen stuck, not only a risk read from the config: a finding of this record at warn or
    worse that a probe, the watcher, a log or the fleet made (its check is not the checklist's alone)."""
    for f in findings:
        if mode_of(f) is not mode or severity(_status(f)) < severity("warn"):
            continue
        d = CHECKS.get(str(f.check if isinstance(f, Finding) else f.get("check")))
        if d is not None and CHECKLIST not in d.sources:
            return True
    return False


def blocks_for_findings(findings: Iterable[Finding | Mapping[str, Any]], config: Any = None, *,
                        cmdline: Optional[str] = None, model: Optional[str] = None,
                        url: Optional[str] = None, mode: Optional[FailureMode] = None) -> list[FixBlock]:
    """The blocks of the headline's cause (``mode``, else ``headline_mode``) for this deployment: none when its
    fix does not apply to the server's release, none for a "one of" diagnosis; client settings a probe measured
    when no record names the cause."""
    items = list(findings)
    mode, named = (mode, True) if mode is not None else headline_mode(items)
    if mode is None:
        return [] if named or any(_diag(f) for f in items) else settings_blocks(
            f for f in items if severity(_status(f)) >= severity("warn"))
    if not applies(mode, config):
        return []
    return blocks_for_mode(mode, config, cmdline=cmdline, model=model, url=url, request_ids=_request_ids(items),
                           now=_stuck(items, mode)) or settings_blocks(f for f in items if mode_of(f) is mode)


def _diag(f: Finding | Mapping[str, Any]) -> bool:
    return is_diagnosis(f) and severity(_status(f)) >= severity("warn")


def _status(f: Finding | Mapping[str, Any]) -> str:
    s = f.status if isinstance(f, Finding) else f.get("status")
    return str(getattr(s, "value", s))


def run_config(run: Mapping[str, Any]) -> dict[str, Any]:
    """A stored run's effective config as ``{"values": …}``: the checklist's as stored; a log run's bare
    ``{key: {"value", "source", "detail"}}`` wrapped; else (a probe run) the facts in its meta. The page, the
    run view and every export read a run's config through this, so they compute the same fix from it."""
    config = run.get("config") or {}
    if isinstance(config, Mapping) and isinstance(config.get("values"), Mapping) and config.get("values"):
        return dict(config)
    if isinstance(config, Mapping) and config and all(isinstance(v, Mapping) and "value" in v for v in config.values()):
        return {"values": dict(config)}
    meta = run.get("meta")
    return {"values": {k: v for k, v in meta.items() if not isinstance(v, (dict, list))}} if isinstance(meta, Mapping) \
        else {}


def document_blocks(doc: Mapping[str, Any]) -> list[FixBlock]:
    """The blocks of a run document (triage.export.json_): its worst root cause, for its target's command line.

    The config is the run's effective config, else (a probe run) the facts in its meta. Never raises:
    a report without blocks still carries the fix in words."""
    from triage.recorder import OFFLINE_URL

    try:
        t = doc.get("target") or {}
        url = t.get("url") if t.get("url") != OFFLINE_URL else None  # a run with no server: no "offline/v1" snippets
        return blocks_for_findings(doc.get("findings") or [], run_config(doc.get("run") or {}),
                                   cmdline=t.get("cmdline"), model=t.get("model"), url=url)
    except Exception:  # noqa: BLE001 - an export never fails on its fix blocks
        return []

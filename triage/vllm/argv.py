"""A command line split once as a POSIX shell reads it and parsed as vLLM's argparse parser does, per release.

``split`` is the one tokenizer of pasted command-line text (``\\``-newline continuations joined, a trailing
``# comment`` dropped as the shell drops it, quotes as the shell reads them); ``resolve`` finds the option a
spelling means in one release's option table (triage/vllm/knowledge) the way argparse does: the exact
string, else an unambiguous prefix (argparse's ``allow_abbrev``, True in every vLLM release: no release's
``FlexibleArgumentParser`` or ``vllm serve`` subparser sets it; checked in the 0.7.3-0.20.0 sources and by
parsing ``--gpu-memory-util 0.5`` with 0.31.0's own parser), else an ambiguity (argparse's own error,
naming the candidates). ``parse`` walks vLLM's arguments with that: ``--opt=value``, repeats (the last wins;
append actions collect), ``--no-X`` / ``--disable-X`` negations as the release stores them, nargs.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from triage.secret_shapes import shell_split
from triage.vllm import flags as vflags
from triage.vllm import knowledge
from triage.vllm.knowledge import Option, Resolution, normalize_option

# Options whose argparse action is "append" (each use adds to the list), read from the release's own parser:
# 0.31.0's make_arg_parser has exactly one _AppendAction, --middleware (also in 0.7.3-0.9.2's cli_args.py as
# action="append"). The option table (releases.json) does not record the action yet; extract.py records it
# from now on as "action": "append", and that wins where present.
APPEND_DESTS = frozenset({"middleware"})


# -- splitting -------------------------------------------------------------------------------------

def split(text: str) -> list[str]:
    """The words of ``text`` as a POSIX shell reads them, in linear time.

    ``\\``-newline joins lines; an unquoted word that starts with ``#`` comments out the rest of its line (a
    ``\\`` left before such a comment still continues the line: what was meant); newlines between words
    are blanks (a pasted multi-line command is one command). Quotes, ``$'…'`` and escapes: ``shell_split``."""
    return shell_split(_strip(text))


def _strip(t: str) -> str:
    out: list[str] = []
    i, n = 0, len(t)
    quote = ""
    word_start = True
    while i < n:
        c = t[i]
        if quote:
            if c == "\\" and quote != "'" and i + 1 < n:
                if quote == '"' and t[i + 1] == "\n":  # a continuation inside double quotes vanishes too
                    i += 2
                    continue
                out.append(t[i:i + 2])
                i += 2
                continue
            out.append(" " if c == "\n" else c)  # shell_split ends a quote at a line: a pasted JSON spans lines
            if c == "'" and quote in ("'", "$'") or c == '"' and quote == '"':
                quote = ""
            i += 1
            continue
        if c == "\\" and t.startswith("\r\n", i + 1):
            i += 3
            continue
        if c == "\\" and i + 1 < n and t[i + 1] == "\n":
            i += 2
            continue
        if c == "\\" and i + 1 < n:
            out.append(t[i:i + 2])
            word_start = False
            i += 2
            continue
        if c == "#" and word_start:
            end = t.find("\n", i)
            cont = _drop_trailing_backslash(out)
            if end < 0:
                break
            i = end + 1 if cont else end
            continue
        if c == "\n":
            _drop_trailing_backslash(out)  # "--a 1 \  " + newline: a continuation with blanks after it
            out.append(" ")
            word_start = True
            i += 1
            continue
        if c in " \t\r":
            out.append(c)
            word_start = True
            i += 1
            continue
        word_start = False
        if c in "'\"":
            quote = c
        elif c == "$" and i + 1 < n and t[i + 1] == "'":
            quote = "$'"
            out.append("$'")
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _drop_trailing_backslash(out: list[str]) -> bool:
    """Drop the blanks at the end of ``out`` and a ``\\`` before them (an escaped blank that was meant as a line
    continuation); True when there was one."""
    k = len(out)
    while k and out[k - 1] in (" ", "\t", "\r"):
        k -= 1
    if k and out[k - 1] in ("\\ ", "\\\t"):
        del out[k - 1:]
        out.append(" ")
        return True
    if k and out[k - 1] == "\\":
        del out[k - 1:]
        out.append(" ")
        return True
    return False


# -- one option ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Match:
    """What a spelling means in one release's parser: its option string (exact or by an unambiguous prefix),
    or the candidates when the prefix is ambiguous, or nothing."""

    given: str
    string: str | None = None  # the option string argparse matched
    spec: Option | None = None
    candidates: tuple[str, ...] = ()  # an ambiguous prefix: every option string it could be

    @property
    def abbreviated(self) -> bool:
        return self.string is not None and self.string != normalize_option(self.given)

    @property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1


@lru_cache(maxsize=64)
def _strings(release: str) -> tuple[str, ...]:
    return tuple(sorted(knowledge.release(release).option_strings()))


def resolve(option: str, rel: knowledge.Release) -> Match:
    """The option ``option`` (no ``=value``) means in ``rel``'s parser, as argparse's ``_parse_optional`` finds it."""
    opt = normalize_option(option)
    spec = rel.lookup(opt)
    if spec is not None:
        return Match(option, opt, spec)
    if len(opt) < 2 or not opt.startswith("-"):
        return Match(option)
    strings = _strings(rel.release)
    lo = bisect.bisect_left(strings, opt)
    cands = []
    for s in strings[lo:]:
        if not s.startswith(opt):
            break
        cands.append(s)
    if not opt.startswith("--"):  # a single-dash option: ``-tp2`` is ``-t`` with 2 only when ``-t`` exists
        short = rel.lookup(opt[:2])
        if short is not None and short.kind == "value":
            cands.append(opt[:2])
    if len(cands) == 1:
        return Match(option, cands[0], rel.lookup(cands[0]))
    return Match(option, candidates=tuple(cands))


def ambiguity(m: Match) -> str:
    """argparse's own message for an ambiguous prefix."""
    return f"ambiguous option: {m.given} could match {', '.join(m.candidates)}"


def sets(m: Match, rel: knowledge.Release) -> Any:
    """What a flag's matched spelling stores (``--no-enable-pre`` matched ``--no-enable-prefix-caching``: False)."""
    return rel.sets(m.string) if m.string else None


def is_append(spec: Option) -> bool:
    return getattr(spec, "action", None) == "append" or spec.dest in APPEND_DESTS


# -- the arguments ---------------------------------------------------------------------------------

def is_option(tok: str) -> bool:
    """argparse's 'O' for a word: starts with '-', is not '-' nor a negative number nor a word with a blank."""
    return tok.startswith("-") and tok != "-" and not re.fullmatch(r"-\d+(\.\d+)?", tok) and " " not in tok


@dataclass
class Parsed:
    """vLLM's arguments read: dest -> value, the options its parser refuses (with why), the positionals, the
    abbreviations argparse expanded (given -> option string)."""

    values: dict[str, Any] = field(default_factory=dict)
    unknown: list[dict[str, Any]] = field(default_factory=list)
    positionals: list[str] = field(default_factory=list)
    abbreviations: dict[str, str] = field(default_factory=dict)


MAX_DOTTED_DEPTH = 64


def parse(args: Sequence[str], resolution: Resolution | None = None, *,
          convert: Callable[[str, Any], Any] = lambda _d, v: v,
          loads: Callable[[str], Any] = lambda s: s) -> Parsed:
    """vLLM's own arguments read as the resolved release's parser reads them.

    ``convert(dest, raw)`` types a value (human-readable ints, JSON); ``loads`` reads a dotted key's value."""
    res = resolution or knowledge.for_version(None)
    rel = knowledge.release(res.release)
    out = Parsed()
    values = out.values
    i = 0
    only_positionals = False
    while i < len(args):
        tok = args[i]
        i += 1
        if only_positionals or not is_option(tok):
            out.positionals.append(tok)
            continue
        if tok == "--":
            only_positionals = True
            continue
        opt, eq, inline = tok.partition("=")
        if re.fullmatch(r"-O\d?", opt) or opt.startswith("-O."):
            values["compilation_config_O"] = opt[2:] or inline
            continue
        dotted = None
        if opt.startswith("--") and "." in opt:
            opt, dotted = opt.split(".", 1)
        m = resolve(opt, rel)
        spec = m.spec
        if spec is None:
            out.unknown.append(_refused(opt, m, res))
            if not eq and i < len(args) and not is_option(args[i]):
                i += 1  # its value, most likely
            continue
        if m.abbreviated:
            out.abbreviations[opt] = str(m.string)
        if spec.kind in ("flag", "bool-optional"):
            if eq:  # argparse: "argument --enforce-eager: ignored explicit argument 'true'"
                out.unknown.append(_error(opt, f"argument {m.string}: ignored explicit argument {inline!r}", res))
                continue
            stored = sets(m, rel)
            values[spec.dest] = stored if stored is not None else True
            continue
        if eq:
            raw: Any = inline
        elif spec.nargs in ("+", "*"):
            raw = []
            while i < len(args) and not is_option(args[i]):
                raw.append(args[i])
                i += 1
            if not raw and spec.nargs == "+":
                out.unknown.append(_error(opt, f"argument {m.string}: expected at least one argument", res))
                continue
        elif spec.nargs == "?" and (i >= len(args) or is_option(args[i])):
            raw = None
        elif i >= len(args) or (is_option(args[i]) and dotted is None):
            out.unknown.append(_error(opt, f"argument {m.string}: expected one argument", res))
            continue
        else:
            raw = args[i]
            i += 1
        if dotted is not None and dotted.count(".") >= MAX_DOTTED_DEPTH:  # --pooler-config.a.a… 500,000 levels
            levels = dotted.count(".") + 1
            values[spec.dest] = (f"(not read: {opt}.{dotted[:20]}… has {levels:,} dotted levels, more than the "
                                 f"{MAX_DOTTED_DEPTH} read)")
        elif dotted is not None:
            cur = values.get(spec.dest) if isinstance(values.get(spec.dest), dict) else {}
            node = cur
            parts = dotted.split(".")
            for p in parts[:-1]:
                node = node.setdefault(p, {})
            node[parts[-1]] = loads(raw) if isinstance(raw, str) else raw
            values[spec.dest] = cur
        elif is_append(spec):
            prev = values.get(spec.dest)
            values[spec.dest] = [*(prev if isinstance(prev, list) else []), convert(spec.dest, raw)]
        else:
            values[spec.dest] = convert(spec.dest, raw)  # a repeat: argparse keeps the last
    return out


def _refused(opt: str, m: Match, res: Resolution) -> dict[str, Any]:
    """An option the release's parser has no match for, or an ambiguous prefix (argparse's error, its candidates)."""
    if m.ambiguous:
        return _error(opt, ambiguity(m), res, candidates=list(m.candidates))
    verdict = vflags.judge(opt, res)
    entry: dict[str, Any] = {
        "option": verdict.option,
        "why": verdict.why(),
        "release": res.release,
        "certain": verdict.certain,
        "added_in": verdict.added_in,
        "removed_in": verdict.removed_in,
    }
    if verdict.replacement:
        entry["removed"] = {"use": verdict.replacement.use, "refs": list(verdict.replacement.refs),
                            "removed_in": verdict.removed_in}
    return entry


def _error(opt: str, message: str, res: Resolution, **extra: Any) -> dict[str, Any]:
    """argparse's own error for an option the release knows but cannot take as written: vllm serve exits at start."""
    if res.exact:
        why = (f"vllm serve {res.release}'s parser (argparse): {message}. It would exit at start with this error.")
    else:
        why = (f"vllm serve {res.release}'s parser (argparse) says: {message} (checked against {res.release}, not "
               f"the deployment's own release: {res.reason}).")
    return {"option": normalize_option(opt), "why": why, "release": res.release, "certain": res.exact,
            "argparse_error": message, "added_in": None, "removed_in": None, **extra}


def finite_float(raw: Any) -> Any:
    try:
        f = float(raw)
    except (TypeError, ValueError):
        return raw
    return f if math.isfinite(f) else raw


_SECRET_NAME = re.compile(r"(?i)key|token|secret|password|passwd|credential")
REDACTED = "[REDACTED]"


def masked(argv: Sequence[str]) -> list[str]:
    """``argv`` with the values of secret-named options and environment entries (``--api-key``, ``--hf-token``,
    ``-e HF_TOKEN=…``, ``VLLM_API_KEY=… vllm serve``) replaced: what may be kept or shown. The names stay."""
    out: list[str] = []
    hide = False
    for tok in argv:
        if is_option(tok):
            name, eq, _v = tok.partition("=")
            secret = (bool(_SECRET_NAME.search(name)) and name.startswith("--")
                      and not re.search(r"(file|path|dir)$", name))  # --ssl-keyfile names a file, not a key
            hide = secret and not eq
            out.append(f"{name}={REDACTED}" if secret and eq else tok)
            continue
        k, eq, _v = tok.partition("=")
        if hide:
            out.append(REDACTED)
        elif eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) and _SECRET_NAME.search(k):
            out.append(f"{k}={REDACTED}")
        else:
            out.append(tok)
    return out

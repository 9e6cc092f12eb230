"""A FAIL or WARN finding takes its fix from a catalogue record, and a vLLM reference lives only in the catalogue
(issue 44: "FAIL/WARN only through catalogue records").

Read with ``ast`` over triage/ and checks/ (the catalogue itself, triage/catalogue/, is where the words live):

- an inline verdict: ``Finding(check, FAIL|WARN, title, evidence, "fix …")`` (or ``status=``/``fix=`` keywords,
  ``"fail"``/``"warn"`` strings), or ``Finding.of(record, check, FAIL|WARN, …, fix="…")``, whose fix is a string
  written at the call (a literal, an f-string, a sum of them) rather than the record's (``Finding.of`` with ``cfg=``,
  ``record.fix(cfg)``, ``word_stall``);
- a copied reference: a string (not a docstring) naming a vLLM issue or pull request (``vllm#55427``, a
  github.com/vllm-project/vllm/issues|pull/N address) outside the catalogue.

What is still written inline is listed below, per ``file:function`` with its count; the lists can only shrink: a
new site fails, and a site converted fails until its entry is removed (so the count in the report stays true).
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("triage", "checks")
CATALOGUE = ROOT / "triage" / "catalogue"
REF = re.compile(r"\bvllm ?#\d{3,}\b|github\.com/vllm-project/vllm/(?:issues|pull)/\d+", re.IGNORECASE)

# FAIL/WARN findings whose fix is still written at the call: file:function -> how many (issue 44: 17, now 0).
INLINE_VERDICTS: dict[str, int] = {}

# vLLM references written outside the catalogue: file:function ('<module>' at the top level) -> how many.
COPIED_REFS: dict[str, int] = {
    "triage/vllm/flags.py:<module>": 8,  # the removed/renamed flags table (Replacement.refs, .added_refs): vLLM's names
    "triage/lab/profiles.py:<module>": 1,  # a lab profile's description, not a verdict
}

_BAD = {"FAIL", "WARN", "fail", "warn"}


def _files() -> list[Path]:
    return sorted(p for d in SCANNED for p in (ROOT / d).rglob("*.py") if CATALOGUE not in p.parents)


def _where(path: Path, owner: dict[int, str], node: ast.AST) -> str:
    return f"{path.relative_to(ROOT).as_posix()}:{owner.get(id(node), '<module>')}"


def _owners(tree: ast.AST) -> dict[int, str]:
    """The innermost function each node sits in (its name)."""
    owner: dict[int, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else name
            owner[id(child)] = inner
            visit(child, inner)

    visit(tree, "<module>")
    return owner


def _is_bad(node: ast.AST | None) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in _BAD
    if isinstance(node, ast.Name):
        return node.id in _BAD
    return isinstance(node, ast.Constant) and node.value in _BAD


def _written(node: ast.AST | None) -> bool:
    """A string written at the call: a non-blank literal, an f-string, or a sum with one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and bool(node.value.strip())
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.BinOp) and (_written(node.left) or _written(node.right))


def _arg(call: ast.Call, pos: int, name: str) -> ast.AST | None:
    if len(call.args) > pos and not any(isinstance(a, ast.Starred) for a in call.args[:pos + 1]):
        return call.args[pos]
    return next((k.value for k in call.keywords if k.arg == name), None)


def _inline_verdict(call: ast.Call) -> bool:
    f = call.func
    if isinstance(f, ast.Name) and f.id == "Finding":
        return _is_bad(_arg(call, 1, "status")) and _written(_arg(call, 4, "fix"))
    if isinstance(f, ast.Attribute) and f.attr == "of" and isinstance(f.value, ast.Name) and f.value.id == "Finding":
        return _is_bad(_arg(call, 2, "status")) and _written(_arg(call, 99, "fix"))
    return False


def _docstrings(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _scan() -> tuple[Counter[str], Counter[str]]:
    verdicts: Counter[str] = Counter()
    refs: Counter[str] = Counter()
    for path in _files():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        owner, docs = _owners(tree), _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _inline_verdict(node):
                verdicts[_where(path, owner, node)] += 1
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                  and REF.search(node.value)):
                refs[_where(path, owner, node)] += 1
    return verdicts, refs


def _only_shrinks(found: Counter[str], allowed: dict[str, int], new_words: str, gone_words: str) -> None:
    """No site beyond its allowed count; a site below it must lower its entry (the list can only shrink)."""
    new = {k: n for k, n in found.items() if n > allowed.get(k, 0)}
    assert not new, f"{new_words}: {new}"
    gone = {k: n for k, n in allowed.items() if found.get(k, 0) < n}
    assert not gone, f"{gone_words}: {gone}"


def test_no_new_inline_fail_or_warn_and_the_list_only_shrinks() -> None:
    _only_shrinks(_scan()[0], INLINE_VERDICTS,
                  "a FAIL/WARN finding with its fix written inline (use its catalogue record)",
                  "converted: lower these counts in INLINE_VERDICTS (to 0: remove the entry)")


def test_no_reference_copied_outside_the_catalogue() -> None:
    _only_shrinks(_scan()[1], COPIED_REFS,
                  "a vLLM reference written outside triage/catalogue/ (read it from the record's refs)",
                  "moved: lower these counts in COPIED_REFS")


def test_the_scan_sees_what_it_forbids() -> None:
    """The rule itself, on written code: a literal fix at FAIL is caught, the record's fix is not."""
    caught = ast.parse('Finding("x", Status.FAIL, "t", {}, f"Send {n}.")\nFinding.of(M, "x", WARN, "t", fix="do it")')
    fine = ast.parse('Finding.of(M, "x", Status.FAIL, "t", ev, cfg=cfg)\nFinding("x", Status.PASS, "t", {}, "ok")\n'
                     'Finding("x", Status.WARN, "t", {}, M.fix(cfg))')
    assert [_inline_verdict(c) for c in ast.walk(caught) if isinstance(c, ast.Call)].count(True) == 2
    assert not any(_inline_verdict(c) for c in ast.walk(fine) if isinstance(c, ast.Call))
    assert REF.search("see vllm#55427") and REF.search("https://github.com/vllm-project/vllm/issues/55427")

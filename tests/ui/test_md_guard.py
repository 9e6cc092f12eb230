"""Every string a Markdown-rendering Streamlit call shows goes through ui.components.md (issue 33, deliver 3).

Read from the source (ast): a call that renders Markdown (``st.markdown``, ``st.write``, alerts, captions,
headers, expander and status labels, progress text, the page's verdict banner) may show a literal, our own
wording, a number, or a value passed through ``md.text``/``md.prose``/``md.code``/``md.refs`` (or a helper
that does: ``verdict.label``, ``session.describe``, ``session.answers_line``). A new call that interpolates
anything else fails here: name the value in ``OURS`` only if it is our own wording or a number.
"""
from __future__ import annotations

import ast
import pytest

from ui.components import md
from ui_apptest import ROOT

MARKDOWN_CALLS = {"markdown", "write", "info", "error", "warning", "success", "caption", "subheader", "header",
                  "title", "expander", "toast", "status", "popover", "metric", "shown"}
SAFE_CALLS = {"md.text", "md.prose", "md.title", "md.code", "md.refs", "verdict.label", "label",
              "session.describe", "session.answers_line", "len", "round", "_hms", "int", "strftime"}
# our own wording or numbers, by the last name of the expression
OURS = {"GET_ONE", "run_note", "cause", "counted", "ended", "part", "heading", "run_id", "id", "tally", "count",
        "index", "total", "n_alerts", "n_samples", "EVIDENCE_BEFORE_S", "EVIDENCE_AFTER_S", "MAX_BYTES", "mib",
        "page", "pages", "i", "opened", "msg", "step_status", "s", "status", "passing", "findings", "episodes",
        "evidence", "bad_probes", "probes", "bad_findings", "top", "data", "stalled", "reps", "confirmed",
        "title", "caption", "name", "given", "k", "mark"}  # page.header's literals, export file names, gauge names
FILES = sorted([ROOT / "app.py", *(ROOT / "ui").rglob("*.py")])


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _name(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return ""


def _safe(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(_safe(v) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return node.format_spec is not None or _safe(node.value)  # a format spec: a number
    if isinstance(node, ast.BinOp):
        return _safe(node.left) and _safe(node.right)
    if isinstance(node, ast.IfExp):
        return _safe(node.body) and _safe(node.orelse)
    if isinstance(node, ast.BoolOp):
        return all(_safe(v) for v in node.values)
    if isinstance(node, ast.Call):
        name = _name(node.func)
        if name in SAFE_CALLS:
            return True
        if name.rsplit(".", 1)[-1] == "join":  # ", ".join(md.text(a) for a in ...)
            arg = node.args[0] if node.args else None
            return (_safe(arg.elt) if isinstance(arg, (ast.GeneratorExp, ast.ListComp)) else
                    arg is not None and _safe(arg))
        return False
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = _name(node)
        return name.rsplit(".", 1)[-1] in OURS or name.split(".")[0].isupper()  # a module constant: ours
    if isinstance(node, ast.Subscript):
        return _safe(node.value) or isinstance(node.slice, ast.Constant) and node.slice.value in OURS
    return False


def _shown(call: ast.Call) -> list[ast.AST]:
    """The arguments of ``call`` that the browser renders as Markdown."""
    name = _name(call.func)
    last = name.rsplit(".", 1)[-1]
    if last == "banner":
        return call.args[1:2]
    if last == "progress":
        return [k.value for k in call.keywords if k.arg == "text"]
    if last in MARKDOWN_CALLS and (name.startswith(("st.", "left.", "col.", "c1.", "c2.", "summary_slot."))
                                   or name == "shown"):
        return [*call.args[:1], *[k.value for k in call.keywords if k.arg in ("label", "body")]]
    return []


def _unsafe(source: str, where: str = "") -> list[str]:
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            bad += [f"{where}:{node.lineno}: {ast.unparse(arg)[:100]}" for arg in _shown(node) if not _safe(arg)]
    return bad


def test_every_markdown_call_escapes_what_it_shows() -> None:
    assert [b for p in FILES for b in _unsafe(p.read_text(), str(p.relative_to(ROOT)))] == []


def test_the_guard_sees_an_unescaped_call() -> None:
    """The guard itself can fail: the lines main had (a fix, an error, a progress message unescaped)."""
    old = ('st.markdown(f"**Fix:** {link_refs(f.fix)}")\nst.error(str(e))\nst.write(ev.message)\n'
           'verdict.banner("fail", view.alert.get("message"))\nprogress.progress(0.1, text=ev.message)\n')
    assert len(_unsafe(old)) == 5


BEACON = "![t](http://127.0.0.1:9/live.png)"


@pytest.mark.parametrize("s", [
    pytest.param(BEACON, id="image"),
    pytest.param("[click](http://127.0.0.1:9/x)", id="link"),
    pytest.param("<img src=http://127.0.0.1:9/live.png>", id="html"),
    pytest.param("http://127.0.0.1:9/x www.example.com a@b.co", id="autolinks"),
    pytest.param("line\n# heading\n- item\n    code\n[r]: http://127.0.0.1:9/live.png", id="blocks"),
    pytest.param(":red[x] :material/error: $x^2$", id="streamlit-directives"),
])
def test_text_leaves_no_markdown_syntax(s: str) -> None:
    out = md.text(s)
    assert "\n" not in out
    # outside code spans (literal in Markdown), every punctuation character is escaped: none left for a parser
    for is_code, piece in md._spans(out):
        i = 0
        while not is_code and i < len(piece):
            if piece[i] == "\\":
                i += 2
                continue
            assert piece[i].isalnum() or piece[i].isspace() or ord(piece[i]) > 127, (piece[i], out)
            i += 1
    # GFM finds autolink literals in text after parsing (escapes do not stop it): each such word is code
    assert all(md.code(w) in out for w in s.split() if "://" in w or "www." in w or "@" in w)


def test_prose_keeps_our_code_spans_and_refs_and_escapes_the_rest() -> None:
    out = md.prose(f"Set `--max-model-len` below {BEACON} (#12345)\n# not a heading")
    assert "`--max-model-len`" in out
    assert "[#12345](https://github.com/vllm-project/vllm/issues/12345)" in out
    assert "\\!\\[t\\]\\(http\\:" not in out and "`![t](http://127.0.0.1:9/live.png)`" in out
    assert "  \n\\# not a heading" in out


def test_prose_code_span_never_spans_lines() -> None:
    """A span across lines could be cut by a block construct and leave its content read as Markdown."""
    out = md.prose(f"a `x\n# {BEACON}` b")
    assert "\n" not in out and out.startswith("a `x # ")


def test_prose_unbalanced_backticks_are_text() -> None:
    assert md.prose("``a` b") == "\\`\\`a\\` b"

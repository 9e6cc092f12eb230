"""Issue 34: the tests mirror the tree. Every module of triage/, checks/ and ui/ has a test file at the matching
path (``triage/a/b.py`` → ``tests/a/test_b*.py``, ``triage/b.py`` → ``tests/test_b*.py``, ``checks/b.py`` →
``tests/checks/test_b*.py``, ``ui/a/b.py`` → ``tests/ui/test_b*.py`` or ``tests/ui/a/test_b*.py``), or a one-line
reason in tests/README.md's list; the list names no module that is gone or that has its file now."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
PACKAGES = ("triage", "checks", "ui")
README = TESTS / "README.md"
_LISTED = re.compile(r"^- `([\w/]+\.py)`: \S")


def modules() -> list[str]:
    """Every module with code of its own (``__init__``/``__main__`` with nothing but imports are not)."""
    out = []
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            rel = f.relative_to(ROOT).as_posix()
            if f.name in ("__init__.py", "__main__.py") and not re.search(r"^(def|class) ", f.read_text(), re.M):
                continue
            out.append(rel)
    return out


def mirrored_dirs(module: str) -> list[Path]:
    parts = Path(module).parts
    pkg, inner = parts[0], parts[1:-1]
    if pkg == "triage":
        return [TESTS.joinpath(*inner)]
    return [TESTS / pkg, TESTS.joinpath(pkg, *inner)]


def has_mirror(module: str) -> bool:
    stem = Path(module).stem.strip("_")  # __init__ → init
    return any(d.is_dir() and (any(d.glob(f"test_{stem}.py")) or any(d.glob(f"test_{stem}_*.py")))
               for d in mirrored_dirs(module))


def listed() -> dict[str, str]:
    text = README.read_text() if README.exists() else ""
    return {m.group(1): line for line in text.splitlines() if (m := _LISTED.match(line))}


def test_every_module_has_a_test_file_at_its_path_or_a_reason() -> None:
    reasons = listed()
    missing = [m for m in modules() if not has_mirror(m) and m not in reasons]
    assert not missing, "no test file at the matching path and no reason in tests/README.md:\n" + "\n".join(missing)


def test_the_reasons_list_names_only_modules_that_need_one() -> None:
    mods = set(modules())
    stale = [m for m in listed() if m not in mods or has_mirror(m)]
    assert not stale, "tests/README.md lists modules that are gone or now have a test file:\n" + "\n".join(stale)


def _importers(module: str) -> list[str]:
    """Test files that import ``module`` (by dotted name): where its behaviour is tested when not at its path."""
    dotted = module[:-3].replace("/", ".").removesuffix(".__init__")
    pat = re.compile(rf"(from|import)\s+{re.escape(dotted)}\b|from\s+{re.escape(dotted.rpartition('.')[0])}\s+import"
                     rf"[^\n]*\b{re.escape(dotted.rpartition('.')[2])}\b")
    return sorted(f.relative_to(ROOT).as_posix() for f in TESTS.rglob("test_*.py") if pat.search(f.read_text()))


if __name__ == "__main__":  # prints a draft line for each module that needs one (a human checks each reason)
    for m in modules():
        if not has_mirror(m) and m not in listed():
            users = _importers(m)
            print(f"- `{m}`: " + (f"tested through {', '.join(users[:3])}" if users else "NO TEST IMPORTS IT"))

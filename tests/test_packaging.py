"""The installable product: ``pip install .`` in a fresh venv gives ``vllm-triage``, whose dashboard runs from /tmp.

A copy of what the distribution is built from (pyproject.toml, app.py, .streamlit, triage, checks, ui, README)
is installed into a fresh ``python -m venv``, then used from a directory outside the repository: ``--help``, a
log post-mortem, the clients set without the ``clients`` extra, and ``vllm-triage dashboard`` serving its app
(HTTP 200, the first page rendered by Streamlit's AppTest from the installed app.py) until stopped by its PID.

By default the venv sees this interpreter's site-packages and the package goes in with ``--no-deps`` (about 15 s:
what is tested is the package itself: its console script, app.py and the dashboard settings found from the
install). ``VLLM_TRIAGE_TEST_CLEAN_VENV=1`` makes it a clean venv that resolves the runtime dependencies from the
package index (1.5-3 min on the shared box, mostly index round trips), where the extras' libraries are truly
absent.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from triage.cli import main
from triage.probes import client_libraries as clients
from triage.probes.client_libraries import INSTALL_HINT
from triage.lab.server import free_port

ROOT = Path(__file__).resolve().parents[1]
CLEAN = os.environ.get("VLLM_TRIAGE_TEST_CLEAN_VENV") == "1"
SHIPPED = ("pyproject.toml", "README.md", "app.py", ".streamlit", "triage", "checks", "ui")


def _source_copy(base: Path) -> Path:
    """What the distribution is built from, copied out of this checkout (no caches, no tests)."""
    src = base / "src"
    for name in SHIPPED:
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(p, src / name)
    return src


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean venv with vllm-triage installed from a copy of this tree (runtime dependencies only)."""
    base = tmp_path_factory.mktemp("pkg")
    src = _source_copy(base)
    env_dir = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", *([] if CLEAN else ["--system-site-packages"]), str(env_dir)],
                   check=True, timeout=120)
    pip = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          "--no-compile", *([] if CLEAN else ["--no-deps"]), str(src)],
                         capture_output=True, text=True, timeout=540, env=_env(base))
    assert pip.returncode == 0, pip.stdout[-2000:] + pip.stderr[-3000:]
    return env_dir


def _env(home: Path) -> dict[str, str]:
    """The child's environment: nothing of this checkout on the path, a database of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "VLLM_TRIAGE_DB": str(home / "triage.db")}


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv / "bin" / "vllm-triage"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=_env(cwd))


def test_the_console_script_answers_from_outside_the_repository(venv: Path, tmp_path: Path) -> None:
    r = _run(venv, "--help", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: vllm-triage") and "dashboard" in r.stdout and "check" in r.stdout
    r = _run(venv, "logs", str(ROOT / "tests/fixtures/real/logs/0.31.0-tiny-qwen3-livelock-livelock-031.log"),
             "--format", "json", cwd=tmp_path)
    assert r.returncode == 1 and '"log-livelock-suspect"' in r.stdout  # the engine runs from the install


@pytest.mark.skipif(not CLEAN, reason="the clients libraries are installed here: VLLM_TRIAGE_TEST_CLEAN_VENV=1")
def test_a_missing_extra_is_named_in_a_clean_install(venv: Path, tmp_path: Path) -> None:
    r = _run(venv, "probe", "--set", "clients", "--url", "http://127.0.0.1:9", cwd=tmp_path)
    assert r.returncode == 2 and INSTALL_HINT in r.stderr and "openai" in r.stderr, r.stderr
    r = _run(venv, "report", "latest", "--db", "postgresql://nobody@127.0.0.1:1/none", cwd=tmp_path)
    assert r.returncode == 2 and "pip install 'vllm-triage[postgres]'" in r.stderr, r.stderr


def test_the_clients_set_names_its_extra_when_a_library_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A test double for an absent library (a distribution name nobody installs): here every client library is
    installed, and the clean-venv run above shows the real absence."""
    monkeypatch.setattr(clients, "LIBRARIES", (*clients.LIBRARIES, "vllm-triage-no-such-library"))
    assert main(["probe", "--set", "clients", "--url", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert INSTALL_HINT in err and "vllm-triage-no-such-library" in err


def test_the_dashboard_serves_the_installed_app_from_tmp(venv: Path, tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen([str(venv / "bin" / "vllm-triage"), "dashboard", "--port", str(port),
                             "--address", "127.0.0.1"], cwd=tmp_path, env=_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline, health = time.monotonic() + 90, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
                if health.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        assert health is not None and health.status_code == 200, proc.poll()
        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=10).status_code == 200
    finally:
        proc.terminate()  # the dashboard command exec'd Streamlit: this PID is the server
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    assert f"127.0.0.1:{port}" in out
    script = ("from streamlit.testing.v1 import AppTest\n"
              "from triage.cli.dashboard import app_path\n"
              "app = app_path()\n"
              "at = AppTest.from_file(str(app), default_timeout=60).run()\n"
              "assert not at.exception, at.exception\n"
              "print(app, at.title[0].value if at.title else '')\n")
    r = subprocess.run([str(venv / "bin" / "python"), "-c", script], cwd=tmp_path, capture_output=True, text=True,
                       timeout=180, env=_env(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    assert str(venv) in r.stdout  # the installed app.py, not this checkout's


@pytest.mark.skipif(not CLEAN, reason="pipx and the runtime dependencies come from the package index: "
                                      "VLLM_TRIAGE_TEST_CLEAN_VENV=1")
def test_pipx_installs_the_repository_and_its_command_runs(tmp_path: Path) -> None:
    """The way Python users install a tool: ``pip install pipx`` in a fresh venv, ``pipx install <the repo>`` with
    PIPX_HOME and PIPX_BIN_DIR in a temporary directory (nothing of the user's pipx touched), then
    ``vllm-triage --help`` from the bin directory pipx filled. Prints the time of each step."""
    src = _source_copy(tmp_path)
    tool = tmp_path / "pipx-venv"
    env = {**_env(tmp_path), "PIPX_HOME": str(tmp_path / "pipx-home"), "PIPX_BIN_DIR": str(tmp_path / "pipx-bin"),
           "PIPX_MAN_DIR": str(tmp_path / "pipx-man"), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    took: dict[str, float] = {}

    def step(name: str, args: list[str], timeout: int) -> subprocess.CompletedProcess[str]:
        t0 = time.monotonic()
        r = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=timeout, env=env)
        took[name] = round(time.monotonic() - t0, 2)
        assert r.returncode == 0, f"{name}: " + r.stdout[-2000:] + r.stderr[-3000:]
        return r

    step("venv", [sys.executable, "-m", "venv", str(tool)], 120)
    step("pip install pipx", [str(tool / "bin" / "python"), "-m", "pip", "install", "-q", "pipx"], 300)
    step("pipx install", [str(tool / "bin" / "python"), "-m", "pipx", "install", "--python", sys.executable,
                          str(src)], 540)
    exe = tmp_path / "pipx-bin" / "vllm-triage"
    r = step("vllm-triage --help", [str(exe), "--help"], 60)
    assert r.stdout.startswith("usage: vllm-triage") and "dashboard" in r.stdout and "probe" in r.stdout
    assert exe.resolve().is_relative_to(tmp_path / "pipx-home")  # pipx's own venv, not this interpreter's
    print(f"pipx: {took}")


def test_the_import_contracts_hold() -> None:
    """pyproject.toml's import-linter contracts: the layers (faces, cores, vocabulary), no import circle, no
    Streamlit in the engine, no core that writes to the store (they yield events; the Recorder writes), no httpx outside
    triage.http (the one HTTP package). import-linter
    comes with the test extra (requirements-dev.txt)."""
    pytest.importorskip("importlinter", reason="import-linter is not installed: pip install -r requirements-dev.txt")
    r = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
                        "sys.exit(lint_imports(no_cache=True, no_logo=True))"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "Contracts: 5 kept, 0 broken." in r.stdout


def test_every_top_level_module_is_in_a_layer() -> None:
    """Each module and package directly under triage/ is named in the layers contract (pyproject.toml), so a new
    one cannot sit outside the layering unnoticed (issue 44: 26 of 45 were in no layer)."""
    import tomllib

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in cfg if c["type"] == "layers")
    named = {m.strip() for layer in layers for m in layer.replace("|", ":").split(":")}
    tops = {f"triage.{p.stem}" for p in (ROOT / "triage").iterdir()
            if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    assert not tops - named, f"in no layer: {sorted(tops - named)}"
    assert not named - tops - {"ui", "checks"}, f"layers name what is gone: {sorted(named - tops - {'ui', 'checks'})}"


def test_no_import_circle_even_through_annotations() -> None:
    """No package's children import each other in a circle, counting the imports made for annotations only
    (``if TYPE_CHECKING:``), which the import-linter contracts leave out (issue 44: triage/sample.py <->
    triage/vllm/metrics.py was such a circle)."""
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter: pip install -r requirements-dev.txt")
    g = grimp.build_graph("triage", "checks", "ui", exclude_type_checking_imports=False)

    def child(m: str, pkg: str) -> str | None:  # the child of ``pkg`` that holds ``m``
        return f"{pkg}.{m[len(pkg) + 1:].split('.')[0]}" if m.startswith(pkg + ".") else None

    circles = []
    for pkg in sorted({m.rsplit(".", 1)[0] for m in g.modules if "." in m}):
        deps: dict[str, set[str]] = {}
        for m in g.modules:
            if (a := child(m, pkg)) is not None:
                deps.setdefault(a, set()).update(b for i in g.find_modules_directly_imported_by(m)
                                                 if (b := child(i, pkg)) not in (None, a))

        def reach(a: str, deps: dict[str, set[str]] = deps) -> set[str]:
            seen, todo = set(), [a]
            while todo:
                for b in deps.get(todo.pop(), ()):
                    if b not in seen:
                        seen.add(b)
                        todo.append(b)
            return seen

        circles += [f"{a} -> {b} -> … -> {a}" for a in sorted(deps) for b in sorted(deps[a]) if a in reach(b)]
    assert not circles, circles

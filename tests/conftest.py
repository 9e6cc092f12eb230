"""Shared pytest fixtures: real vLLM servers from the lab (marker ``real_server``).

Each fixture reuses a healthy server of the same configuration if one is already running
(``python -m triage lab up …``), otherwise starts one and stops it by PID at session end,
also when tests fail. Set VLLM_TRIAGE_NO_REAL_SERVER=1 to skip real-server tests.
"""
from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from typing import Any

import pytest

from declared_checks import pytest_sessionfinish, pytest_testnodedown  # noqa: F401 - hooks: every check id built is declared
from pgmode import mapping  # tests/pgmode: the PostgreSQL test mode's path -> database mapping
from lab_servers import POOL_CAP, evict, serve, stop_kept
from triage.lab import LabServer
from triage.lab.server import KEEP_ENV

collect_ignore_glob: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "real_server: needs a real vLLM server from the lab (slow)")
    config.addinivalue_line("markers", "quiet: never beside a test that hangs a server on the other lane (_quiet)")
    config.addinivalue_line("markers", "xdist_group(name): the lane a real-server module runs in (xdist)")
    # one lab server per configuration for the whole session, children included (tests/lab_servers.py); each
    # xdist worker is a session of its own: its own token, so one worker's end never stops another's servers
    os.environ[KEEP_ENV] = f"pytest-{os.getpid()}"


LAB_GROUP = "lab"  # the lane of the modules that use the shared fixtures' servers (SERVERS: two pinned in the pool)
TWIN_GROUP = "lab-twins"  # the lane of the modules that start their own configurations (twins, healthy, vectors, …)
# modules that use a SERVERS fixture yet start twins beside it: in the twins' lane (its memory cap is the lower one)
TWIN_LANE = frozenset({"tests/twin/test_reproduce_real.py", "tests/twin/test_verify_real.py"})
# kept servers per lane (tests/lab_servers.py evicts down to it before each test): ~2.25 GB each; a twin test adds
# its twins (up to 3) for its own duration; 3 + 2 + 3 stays under this 23 GB box with Chromium and the dashboards
LANE_CAP = {LAB_GROUP: 3, TWIN_GROUP: 2}


def _module(item: pytest.Item) -> str:
    """The test file, as its node id names it (``tests/twin/test_reproduce_real.py``)."""
    return item.nodeid.split("::", 1)[0]


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the group marks into the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Three lanes under xdist (pytest.ini: ``-n 2 --dist loadgroup``): the tests that need a real vLLM server run
    in two groups, one per worker (xdist hands the two largest groups out first, one to each worker) — the modules
    on the shared fixtures' servers (LAB_GROUP) and the modules that start configurations of their own
    (TWIN_GROUP); the rest is shared by whichever worker frees up first. Each worker keeps its own servers (its own
    token, tests/lab_servers.py), so no test's hung server is another lane's."""
    # a module with one such test goes whole (its module fixtures, a dashboard and its database, see its tests in
    # order: tests/ui/test_e2e_beacon.py counted runs across tests and failed when split over two workers)
    real: set[str] = set()
    shared: set[str] = set()
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if item.get_closest_marker("real_server") or names & set(SERVERS):
            real.add(_module(item))
        if names & set(SERVERS):
            shared.add(_module(item))
    for item in items:
        m = _module(item)
        if m in real:
            lane = LAB_GROUP if m in shared and m not in TWIN_LANE else TWIN_GROUP
            item.add_marker(pytest.mark.xdist_group(lane))
        if set(getattr(item, "fixturenames", ())) & HANGERS:
            item.add_marker(pytest.mark.quiet)


# the shared servers whose tests hang them (#55427 on 0.31.0): a livelocked CPU worker busy-polls a whole core for
# as long as the hang lasts, so these tests and a `quiet` one (a fix verified on a twin must not read a starved
# server as a livelock: CI 2026-12-06, test_reproduce_real's seed test beside the other lane) never overlap
HANGERS = frozenset({"server_031_livelock", "server_031_budget_equals_len"})


@pytest.fixture(autouse=True)
def _quiet(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked ``quiet`` (or one on a HANGERS server) holds one lock shared by this run's workers (xdist's
    run id names it), so a timing verdict on one lane never runs beside a server hung on purpose on the other. Only
    these tests wait on it; without xdist there is nobody to wait for."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None or request.node.get_closest_marker("quiet") is None:
        yield
        return
    with open(f"/tmp/vllm-triage-quiet-{run}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@pytest.fixture(scope="session", autouse=True)
def _kept_lab_servers() -> Iterator[None]:
    """The lab servers this session kept for reuse are stopped by PID at its end, also when tests fail."""
    try:
        yield
    finally:
        stop_kept()


@pytest.fixture(autouse=True)
def _lab_pool_cap(request: pytest.FixtureRequest) -> None:
    """Each test starts with at most its lane's cap of kept servers (POOL_CAP outside the lanes; a lab twin's kept
    servers are not counted as they start: they are trimmed here, pinned configurations last, least recently used
    first). Per test, not per module: a module of twin tests kept every twin it started until its end (memory)."""
    group = request.node.get_closest_marker("xdist_group")
    cap = LANE_CAP.get(group.args[0], POOL_CAP) if group is not None and group.args else POOL_CAP
    evict(cap)


API_KEY = "test-key-123"
# one fixture per lab server (docs/CONTRACTS.md names them): (release, lab model, profile, extra args)
SERVERS: dict[str, tuple[str, str, str, list[str] | None]] = {
    "server_031_livelock": ("0.31.0", "tiny-qwen3", "livelock", None),
    "server_032_livelock": ("0.32.0", "tiny-qwen3", "livelock", None),
    "server_031_budget_equals_len": ("0.31.0", "tiny-qwen3", "budget-equals-len", None),
    "server_032_bert_waiting": ("0.32.0", "minilm", "bert-waiting", None),
    "server_032_mrl": ("0.32.0", "tiny-qwen3-mrl", "defaults", ["--max-model-len", "256"]),
    "server_032_apikey": ("0.32.0", "tiny-qwen3", "livelock", ["--api-key", API_KEY]),
}


def _session_server(name: str, spec: tuple[str, str, str, list[str] | None]) -> Any:
    # module scope, the server kept for the session (tests/lab_servers.py): a module holds it while it runs, and
    # between modules it is one of the pool's idle servers (least recently used stopped first) - memory stays
    # bounded on this 23 GB box (a session-held server could never be stopped: with twins, out of memory)
    @pytest.fixture(scope="module", name=name)
    def server() -> Iterator[LabServer]:
        yield from serve(*spec)

    return server


globals().update({name: _session_server(name, spec) for name, spec in SERVERS.items()})


# -- the store on PostgreSQL (issue 15) ----------------------------------------------------------
# VLLM_TRIAGE_TEST_DB=postgres runs every store of the suite on a lab PostgreSQL (`triage.lab.postgres`,
# a throw-away cluster on 127.0.0.1): each SQLite path a test gives (Store(path), --db path,
# $VLLM_TRIAGE_DB=path) becomes its own database in that cluster (tests/pgmode/mapping.py), in this
# process and in every child process (`python -m triage …`, the Streamlit server): tests/pgmode/
# sitecustomize.py applies the same mapping there.
# VLLM_TRIAGE_TEST_DB=postgresql+psycopg://… uses that server instead of starting one.
TEST_DB_ENV = "VLLM_TRIAGE_TEST_DB"
SQLITE_ONLY = {  # node id -> why it cannot run with the stores on PostgreSQL
    "tests/test_store.py::test_wal_and_incremental_findings": "reads the SQLite file's journal mode",
    "tests/hardening/test_hostile_files.py::test_an_unusable_database_is_exit_2_with_one_line":
        "unusable SQLite files (a directory, random bytes, truncated)",
}


@pytest.fixture(scope="session")
def lab_postgres_url() -> Iterator[str]:
    """A PostgreSQL server URL for the session: a lab cluster (stopped by PID at the end) or the one given."""
    given = os.environ.get(TEST_DB_ENV, "")
    if "://" in given:
        yield given
        return
    from triage.lab import postgres

    try:
        pg = postgres.up()
    except Exception as e:  # noqa: BLE001 - no PostgreSQL here: the tests that need it skip
        pytest.skip(f"no lab PostgreSQL: {e}")
    try:
        yield pg.url()
    finally:
        postgres.down(pg.pid)


@pytest.fixture(scope="session", autouse=True)
def _children_on_postgres(request: pytest.FixtureRequest) -> Iterator[None]:
    """PG mode: every child process of the session maps its SQLite paths as this one does.

    tests/pgmode goes first on $PYTHONPATH (its sitecustomize.py patches ``triage.store.to_url`` in the
    child) and $VLLM_TRIAGE_TEST_PG_SERVER names the server; session scope, so the module- and
    session-scoped fixtures that start children (the Streamlit server) inherit it too. Restored at the end.
    """
    if not os.environ.get(TEST_DB_ENV):
        yield
        return
    url = request.getfixturevalue("lab_postgres_url")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(mapping.SERVER_ENV, url)
        mp.setenv("PYTHONPATH", os.pathsep.join([str(mapping.HERE), *filter(None, [os.environ.get("PYTHONPATH")])]))
        yield


@pytest.fixture(autouse=True)
def _store_on_postgres(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if not os.environ.get(TEST_DB_ENV):
        return
    why = next((w for k, w in SQLITE_ONLY.items() if request.node.nodeid.split("[")[0] == k), None)
    if why is not None:
        pytest.skip(f"SQLite only: {why}")
    import sys

    import triage.store

    to_url = mapping.mapped(triage.store.to_url, request.getfixturevalue("lab_postgres_url"))
    monkeypatch.setattr(triage.store, "to_url", to_url)
    if "ui.services" in sys.modules:
        monkeypatch.setattr(sys.modules["ui.services"], "to_url", to_url)

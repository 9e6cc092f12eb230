"""Real parts of the fleet from the lab: Prometheus and PostgreSQL (Debian packages) on 127.0.0.1, and the
store on both SQLite and PostgreSQL: schema creation, additive upgrades, several writer processes at once."""
from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, inspect

from triage.cli import main
from triage.db import normalize_url
from triage.findings import Finding, Status
from triage.lab import postgres, prometheus
from triage.store import Store

ROOT = Path(__file__).resolve().parents[2]


def test_lab_prometheus_and_postgres_cli(capsys: pytest.CaptureFixture[str]) -> None:
    if not shutil.which("prometheus") or not Path("/usr/lib/postgresql").exists():
        pytest.skip("Debian prometheus/postgresql not installed")
    assert main(["lab", "prometheus", "up", "--scrape", "http://127.0.0.1:9"]) == 0
    url = capsys.readouterr().out.strip().splitlines()[-1]
    try:
        assert httpx.get(f"{url}/-/ready", timeout=5).status_code == 200
        cfg = httpx.get(f"{url}/api/v1/status/config", timeout=5).json()["data"]["yaml"]
        assert "127.0.0.1:9" in cfg and "scrape_interval: 2s" in cfg
    finally:
        assert main(["lab", "prometheus", "down", url]) == 0
    assert url not in {p.url for p in prometheus.status()}
    assert main(["lab", "postgres", "up"]) == 0
    pg_url = capsys.readouterr().out.strip().splitlines()[-1]
    assert pg_url.startswith("postgresql+psycopg://triage@127.0.0.1:")
    port = pg_url.rsplit(":", 1)[1].split("/")[0]
    try:
        with create_engine(pg_url).connect() as c:
            assert c.exec_driver_sql("select 1").scalar() == 1
    finally:
        assert main(["lab", "postgres", "down", port]) == 0
    assert port not in {str(p.port) for p in postgres.status()}


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 't.db'}"
        return
    server = request.getfixturevalue("lab_postgres_url")
    from sqlalchemy.engine import make_url

    u = make_url(server)
    name = f"t_{abs(hash(str(tmp_path))) % 10**12}"
    import psycopg

    with psycopg.connect(host=u.host, port=u.port, user=u.username, dbname=u.database or "postgres",
                         autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    yield u.set(database=name).render_as_string(hide_password=False)


WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from triage.findings import Finding, Status
    from triage.store import Store
    st = Store({url!r})
    t = st.find_or_add_target("http://10.0.0.1:8000")
    for i in range({n}):
        r = st.start_run(t.id, "fleet", {{"writer": {w}, "i": i}})
        for j in range(3):
            st.add_finding(r.id, Finding(f"c{{j}}", Status.PASS, f"w{w} r{{i}} f{{j}}"))
        st.finish_run(r.id, summary=f"w{w}")
""")


def test_several_writer_processes_lose_nothing(db_url: str) -> None:
    Store(db_url)  # schema first, as the dashboard or any command would
    n, writers = 15, 4
    procs = [subprocess.Popen([sys.executable, "-c", WRITER.format(root=str(ROOT), url=db_url, n=n, w=w)],
                              stderr=subprocess.PIPE, text=True) for w in range(writers)]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), errs
    st = Store(db_url)
    assert st.count_runs() == n * writers
    runs = st.list_runs(limit=1000)
    assert len(runs) == n * writers
    for r in runs:
        rec = st.get_run(r[0].id if isinstance(r, tuple) else r.id)
        assert rec is not None and len(rec.findings) == 3


def test_schema_creation_and_upgrade(db_url: str) -> None:
    old = MetaData()  # an older store: the target table without the columns added since
    Table("target", old, Column("id", Integer, primary_key=True), Column("url", String, nullable=False))
    eng = create_engine(normalize_url(db_url))
    old.create_all(eng)
    with eng.begin() as c:
        c.exec_driver_sql("INSERT INTO target (url) VALUES ('http://old:8000')")
    eng.dispose()
    st = Store(db_url)
    cols = {c["name"] for c in inspect(st.engine).get_columns("target")}
    assert {"model", "label", "cmdline", "truncate_prompt_tokens"} <= cols
    t = st.add_target("http://new:8000", model="m", label="new")
    assert t.label == "new"
    assert {x.url for x in st.list_targets()} == {"http://old:8000", "http://new:8000"}
    r = st.start_run(t.id, "fleet")
    st.add_finding(r.id, Finding("nul", Status.PASS, "a\x00b"))  # PostgreSQL text cannot hold NUL
    rec = st.get_run(r.id)
    assert rec is not None and rec.findings[0].title.startswith("a") and rec.findings[0].title.endswith("b")
    Store(db_url)  # a second start finds nothing to do


def test_postgres_url_spellings() -> None:
    assert normalize_url("postgresql://u@h:5/d") == "postgresql+psycopg://u@h:5/d"
    assert normalize_url("postgres://u@h/d") == "postgresql+psycopg://u@h/d"
    assert normalize_url("sqlite:///x.db") == "sqlite:///x.db"

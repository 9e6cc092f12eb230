"""The database engine behind triage.store, per dialect: SQLite (a file, the default) or PostgreSQL
(a team's shared store, ``VLLM_TRIAGE_DB=postgresql+psycopg://user@host:5432/db``).

Written once here: URL spelling (``postgres://`` and ``postgresql://`` use psycopg 3, the driver
requirements.txt installs), the SQLite pragmas (WAL: readers never block the writer), PostgreSQL
session settings (UTC), text PostgreSQL cannot hold (NUL), and schema creation and upgrades that
several processes may run at once (an advisory lock on PostgreSQL, a file lock on the SQLite file).
Upgrades are additive: a column a newer model has and the table lacks is added, nullable.
"""
from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: SQLite's own locking only
    fcntl = None  # type: ignore[assignment]

from sqlalchemy import Engine, MetaData, create_engine, event, inspect, text
from sqlalchemy.schema import CreateColumn

_SCHEMA_LOCK = 0x76_6C_6C_6D  # advisory lock id for schema changes ("vllm")


def normalize_url(url: str) -> str:
    """``postgres://`` / ``postgresql://`` -> ``postgresql+psycopg://`` (psycopg 3); others unchanged."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def make_engine(url: str) -> Engine:
    url = normalize_url(url)
    if is_sqlite(url):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _rec: Any) -> None:  # WAL: readers never block the writer
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()
        return engine
    kw: dict[str, Any] = {"pool_pre_ping": True}
    if url.startswith("postgresql"):
        kw["connect_args"] = {"options": "-c timezone=UTC"}
    engine = create_engine(url, **kw)
    if engine.dialect.name == "postgresql":
        @event.listens_for(engine, "before_cursor_execute", retval=True)
        def _no_nul(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> Any:
            return statement, _strip_nul(params)  # PostgreSQL text cannot hold U+0000
    return engine


def _strip_nul(params: Any) -> Any:
    if isinstance(params, str):
        return params.replace("\x00", "\ufffd") if "\x00" in params else params
    if isinstance(params, dict):
        return {k: _strip_nul(v) for k, v in params.items()}
    if isinstance(params, (list, tuple)):
        return type(params)(_strip_nul(v) for v in params)
    return params


_LOCK_FILES: dict[str, tuple[Any, threading.Lock]] = {}  # SQLite path -> its lock descriptor (one per file)
_LOCKS_GUARD = threading.Lock()


@contextlib.contextmanager
def _sqlite_file_lock(engine: Engine) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the SQLite file while the schema is made: several processes starting on
    a fresh file each saw no table and the later ones failed ("table finding already exists"). flock does not
    touch SQLite's own (fcntl) locks; an in-memory database or a platform without flock needs none."""
    path = engine.url.database if engine.dialect.name == "sqlite" else None
    if not path or path == ":memory:" or path.startswith("file:") or fcntl is None:
        yield
        return
    key = os.path.realpath(path)
    with _LOCKS_GUARD:
        held = _LOCK_FILES.get(key)
        if held is None:
            try:
                # creates the file SQLite would create (an empty file is a new database to it). Never closed: closing
                # any descriptor of the file drops every POSIX lock this process holds on it, SQLite's own included
                # (its WAL read lock), and that corrupted the database under concurrent writers.
                held = _LOCK_FILES[key] = (open(path, "ab"), threading.Lock())
            except OSError:
                held = None
    if held is None:
        yield  # the engine itself will say why the file is unusable
        return
    fh, tlock = held
    with tlock:  # flock is per open file: threads of this process share it, so they queue here
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def ensure_schema(engine: Engine, metadata: MetaData) -> list[str]:
    """Create missing tables and add missing columns; safe when several processes start at once.

    Returns the columns added (``table.column``), for logs and tests.
    """
    with _sqlite_file_lock(engine), engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK})
        metadata.create_all(conn)
        added = []
        insp = inspect(conn)
        for table in metadata.sorted_tables:
            have = {c["name"] for c in insp.get_columns(table.name)}
            for col in table.columns:
                if col.name in have or col.primary_key:
                    continue
                ddl = str(CreateColumn(col).compile(dialect=engine.dialect))
                ddl = ddl.replace(" NOT NULL", "")  # rows already there have no value for it
                conn.execute(text(f'ALTER TABLE "{table.name}" ADD COLUMN {ddl}'))
                added.append(f"{table.name}.{col.name}")
    return added

"""The PostgreSQL test mode's one mapping (issue 15): each SQLite path becomes its own database on a server.

Used by the pytest process (tests/conftest.py, which monkeypatches ``triage.store.to_url``) and by every
child process (tests/pgmode/sitecustomize.py, which patches the same function there), so a path a test
hands to ``python -m triage … --db PATH`` or to the Streamlit server's $VLLM_TRIAGE_DB names the same
database the test then reads. Only the standard library at import time: sitecustomize loads this module
in every child Python (vLLM lab servers included) before anything else.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

SERVER_ENV = "VLLM_TRIAGE_TEST_PG_SERVER"  # the server URL children map onto; set only in PG mode
HERE = Path(__file__).resolve().parent  # first on a child's PYTHONPATH, for its sitecustomize.py


def database_name(path: str) -> str:
    """The database a SQLite path maps to: the same from any working directory and in any process."""
    return "t_" + hashlib.sha1(os.path.abspath(os.path.expanduser(str(path))).encode()).hexdigest()[:24]


def create_database(server_url: str, name: str) -> None:
    """CREATE DATABASE name on the server, unless it exists (also when another process just made it)."""
    import psycopg
    from sqlalchemy.engine import make_url

    u = make_url(server_url)
    with psycopg.connect(host=u.host, port=u.port, user=u.username, password=u.password,
                         dbname=u.database or "postgres", autocommit=True) as c:
        try:
            c.execute(f'CREATE DATABASE "{name}"')
        except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
            pass  # made before, or by a concurrent process (the catalog's unique index then says so)


def mapped(original: Callable[[str], str], server_url: str) -> Callable[[str], str]:
    """``to_url`` with SQLite paths on ``server_url``: a URL ('://') still goes to ``original``."""
    from sqlalchemy.engine import make_url

    server = make_url(server_url)
    made: set[str] = set()

    def to_url(path_or_url: str) -> str:
        if "://" in path_or_url:
            return original(path_or_url)
        name = database_name(path_or_url)
        if name not in made:
            create_database(server_url, name)
            made.add(name)
        return server.set(database=name).render_as_string(hide_password=False)

    return to_url

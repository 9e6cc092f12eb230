"""Everything a store holds for a database path, as bytes: what the key-leak tests grep.

SQLite (the default): the file and its WAL/SHM siblings, byte for byte. PostgreSQL (VLLM_TRIAGE_TEST_DB, the
path mapped to its own database by tests/conftest.py): every row of every table of that database, as text.
"""
from __future__ import annotations

import os
from pathlib import Path


def stored_bytes(db: str | Path) -> bytes:
    if not os.environ.get("VLLM_TRIAGE_TEST_DB"):
        p = Path(db)
        return b"".join(q.read_bytes() for q in sorted(p.parent.glob(p.name + "*")) if q.is_file())
    from sqlalchemy import inspect, text

    from triage.store import Store

    engine = Store(str(db)).engine
    rows: list[str] = []
    with engine.connect() as c:
        for table in inspect(engine).get_table_names():
            rows += [repr(tuple(r)) for r in c.execute(text(f'select * from "{table}"'))]
    assert rows, f"nothing stored for {db}: the check would prove nothing"
    return "\n".join(rows).encode()

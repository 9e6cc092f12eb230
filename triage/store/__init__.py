"""SQLite (or any SQLAlchemy URL) storage of targets, runs, findings, probe results, samples, captures.

``Store`` is the one way the engine reads and writes the database; its methods live by seam: the tables
(``tables``), the frozen values it hands out (``values``), targets and a run's writes (``runs``), engine samples
(``samples``: EngineSample in, EngineSample out), reads (``queries``) and document imports (``documents``).
Each finding is committed as it is produced, so a crash mid-run loses nothing already seen. No API key is ever
stored: TargetRow has no field for it and captures pass through redact_text. Writing a run as it happens is
triage.recorder's job (an observer of the engine's events).

``to_url`` stays in this module: the PostgreSQL test mode patches ``triage.store.to_url`` (tests/pgmode), and
``Store`` and ``default_db_url`` look it up here.
"""
from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir
from sqlmodel import SQLModel

from triage.db import ensure_schema, make_engine, normalize_url
from triage.redact import add_url_secrets
from triage.store.documents import DocumentImport
from triage.store.queries import RunReader
from triage.store.runs import RunWriter, TargetStore
from triage.store.samples import SampleStore, sample_columns
from triage.store.tables import utcnow
from triage.store.values import CaptureInfo, ProbeInfo, RunInfo, RunRecord, TargetInfo, parse_iso

__all__ = ["DB_ENV", "CaptureInfo", "ProbeInfo", "RunInfo", "RunRecord", "Store", "TargetInfo", "default_db_url",
           "parse_iso", "private_file", "sample_columns", "to_url", "utcnow"]

DB_ENV = "VLLM_TRIAGE_DB"


def default_db_url() -> str:
    env = os.environ.get(DB_ENV)
    if env:
        return to_url(env)
    d = Path(user_data_dir("vllm-triage"))
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        d.chmod(0o700)  # private by default: it holds server URLs, command lines and evidence
    except OSError:
        pass
    return to_url(str(d / "triage.db"))


def to_url(path_or_url: str) -> str:
    """A plain path becomes a SQLite URL; anything with '://' is taken as a SQLAlchemy URL."""
    if "://" in path_or_url:
        return normalize_url(path_or_url)
    p = Path(path_or_url).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    private_file(p)
    return f"sqlite:///{p}"


def private_file(p: Path) -> None:
    """Create ``p`` empty and 0600 if it does not exist (an empty file is an empty SQLite database; SQLite
    gives its journal the database's mode). An existing file keeps its mode: the owner chose it."""
    try:
        os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError:
        pass


class Store(TargetStore, RunWriter, SampleStore, RunReader, DocumentImport):
    """The one way the engine reads and writes the database."""

    def __init__(self, url: str | None = None) -> None:
        self.url = to_url(url) if url else default_db_url()
        add_url_secrets(self.url)  # a database password never reaches an error line, stdout or an export
        self.engine = make_engine(self.url)  # the dialect's settings live in triage.db
        ensure_schema(self.engine, SQLModel.metadata)

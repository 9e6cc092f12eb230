"""Catalogue records as data: ``triage/catalogue/data/<module>.toml`` read into `FailureMode` records.

One table per record, keyed by the name its module exports (``[POOLING_LIVELOCK]``), in file order; the keys are
the fields of `FailureMode`:

- text fields as TOML strings; ``refs`` and ``symptoms`` as arrays of strings (symptoms are the words of
  ``triage.catalogue.symptoms.SYMPTOMS``); ``evidence`` as a table (source -> what proves the mode there);
- ``affected`` as ranges written the way they print (``">= 0.10.2, < 0.32.0"``), ``fixed_in`` as a version;
- ``fix_for`` and ``edits`` as ``"package.module:name"`` of a function (the module keeps its logic);
- ``clues`` as an array of inline tables: ``{name = "…", read = "pkg.mod:fn"}`` (with ``args`` / ``kwargs``: the
  reader is ``partial(fn, *args, **kwargs)``), or ``{call = "pkg.mod:factory", kwargs = {…}}`` (or ``args``) for a
  clue builder that returns one clue or several, its arguments by name. In ``args`` and ``kwargs`` an array is a
  tuple and ``{ref = "pkg.mod:name"}`` is that function.

A file that names an unknown field, function or symptom, or a value of the wrong shape, fails at import with the
file, the record and the key (`RecordFileError`). A catalogue module loads its file once, at its end
(``RECORDS = load(__name__)``), and serves the records as module attributes (`Records.exports`), so
``from triage.catalogue.vectors import MISSING_EOS`` works as it always did.
"""

from __future__ import annotations

import importlib
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import fields
from functools import partial
from importlib import resources
from typing import Any

from triage.catalogue.model import FailureMode
from triage.catalogue.symptoms import SYMPTOMS, Clue
from triage.catalogue.versions import Version, VersionRange

FIELDS = tuple(f.name for f in fields(FailureMode))
REQUIRED = ("id", "title", "mechanism")
TEXT = ("id", "title", "mechanism", "fix_ref", "now", "fix_text", "experiment", "experiment_probe")
FUNCTIONS = ("fix_for", "edits")
CLUE_KEYS = {"name", "read", "call", "args", "kwargs"}


class RecordFileError(ValueError):
    """A record file that does not describe records: where (file, record, key) and what is wrong."""


def resolve(ref: object) -> Callable[..., Any]:
    """The function ``"package.module:name"`` names (ValueError when the module or the name is not there)."""
    if not isinstance(ref, str) or ref.count(":") != 1:
        raise ValueError(f"{ref!r} is not 'package.module:name'")
    module, name = ref.split(":")
    try:
        obj = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"{ref!r} names no function ({e})") from None
    if not callable(obj):
        raise ValueError(f"{ref!r} is not callable")
    return obj  # type: ignore[no-any-return]


def _value(v: Any) -> Any:
    """An argument of a clue reader or builder: arrays are tuples, ``{ref = "m:n"}`` is that function."""
    if isinstance(v, list):
        return tuple(_value(x) for x in v)
    if isinstance(v, dict):
        return resolve(v["ref"]) if set(v) == {"ref"} else {k: _value(x) for k, x in v.items()}
    return v


def _clues(spec: Any) -> tuple[Clue, ...]:
    if not isinstance(spec, list) or not all(isinstance(c, dict) for c in spec):
        raise ValueError("clues is an array of inline tables")
    out: list[Clue] = []
    for c in spec:
        keys = set(c)
        reader = {"name", "read"} <= keys and "call" not in keys
        builder = "call" in keys and not {"name", "read"} & keys
        if keys - CLUE_KEYS or not (reader or builder):
            raise ValueError(f"a clue is {{name, read[, args, kwargs]}} or {{call[, args, kwargs]}}, not {sorted(c)}")
        args, kwargs = _value(c.get("args", [])), _value(c.get("kwargs", {}))
        if "read" in c:
            read = resolve(c["read"])
            out.append(Clue(str(c["name"]), partial(read, *args, **kwargs) if args or kwargs else read))
            continue
        made = resolve(c["call"])(*args, **kwargs)
        made = made if isinstance(made, tuple) else (made,)
        if not all(isinstance(m, Clue) for m in made):
            raise ValueError(f"{c['call']} made {made!r}, not clues")
        out.extend(made)
    return tuple(out)


def _strings(v: Any, key: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"{key} is an array of strings")
    return tuple(v)


def _field(key: str, v: Any) -> Any:
    if key in TEXT:
        if not isinstance(v, str):
            raise ValueError(f"{key} is a string")
        return v
    if key in FUNCTIONS:
        return resolve(v)
    if key == "evidence":
        if not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values()):
            raise ValueError("evidence is a table of strings (source = what proves the mode there)")
        return dict(v)
    if key == "affected":
        return tuple(VersionRange.parse(s) for s in _strings(v, key))
    if key == "fixed_in":
        if not isinstance(v, str):
            raise ValueError("fixed_in is a version string")
        return Version(v)
    if key == "symptoms":
        words = _strings(v, key)
        unknown = [w for w in words if w not in SYMPTOMS]
        if unknown:
            raise ValueError(f"unknown symptom {unknown} (the words of triage.catalogue.symptoms.SYMPTOMS)")
        return words
    if key == "clues":
        return _clues(v)
    return _strings(v, key)  # refs


def record(table: Mapping[str, Any]) -> FailureMode:
    """One record from its table (ValueError naming the key that is wrong)."""
    unknown = [k for k in table if k not in FIELDS]
    if unknown:
        raise ValueError(f"unknown field {unknown} (FailureMode has {', '.join(FIELDS)})")
    missing = [k for k in REQUIRED if k not in table]
    if missing:
        raise ValueError(f"missing field {missing}")
    values = {}
    for key, v in table.items():
        try:
            values[key] = _field(key, v)
        except Exception as e:  # any failure to build one value is the file's: say which key
            raise ValueError(f"{key}: {e}") from e
    return FailureMode(**values)


class Records(Mapping[str, FailureMode]):
    """One catalogue module's records by their exported names, in file order."""

    def __init__(self, module: str, records: Mapping[str, FailureMode]) -> None:
        self.module = module
        self._records = dict(records)

    def __getitem__(self, name: str) -> FailureMode:
        return self._records[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def __getattr__(self, name: str) -> FailureMode:
        """``RECORDS.POOLING_LIVELOCK``: how the module's own code reads a record."""
        records = self.__dict__.get("_records", {})
        if name in records:
            return records[name]  # type: ignore[no-any-return]
        raise AttributeError(f"{self.__dict__.get('module')} has no record {name!r}")

    def modes(self) -> tuple[FailureMode, ...]:
        return tuple(self._records.values())

    def exports(self, namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
        """The module's ``__getattr__`` and ``__dir__`` (PEP 562): its records are its attributes."""
        module = namespace["__name__"]

        def __getattr__(name: str) -> Any:
            if name in self._records:
                return self._records[name]
            raise AttributeError(f"module {module!r} has no attribute {name!r}")

        def __dir__() -> list[str]:
            return sorted({*namespace, *self._records})

        return __getattr__, __dir__


def parse(text: str, module: str, where: str) -> Records:
    """The records of one file's text (``where`` names the file in errors)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise RecordFileError(f"{where}: not TOML: {e}") from None
    out: dict[str, FailureMode] = {}
    for name, table in data.items():
        if not isinstance(table, dict) or not name.isidentifier():
            raise RecordFileError(f"{where}: {name!r} is not a record table ([NAME] with the record's fields)")
        try:
            out[name] = record(table)
        except ValueError as e:
            raise RecordFileError(f"{where}: [{name}] {e}") from None
    return Records(module, out)


def load(module: str) -> Records:
    """The records of catalogue module ``module`` (its ``__name__``): ``data/<last part>.toml`` beside it."""
    name = module.rsplit(".", 1)[-1]
    where = f"triage/catalogue/data/{name}.toml"
    try:
        text = resources.files("triage.catalogue").joinpath("data", f"{name}.toml").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordFileError(f"{where}: no such record file for {module}") from None
    return parse(text, module, where)

"""``python -m triage import FILE``: read an exported run (JSON, or a bundle's run.json) into the database.

Bounded: a document larger than MAX_DOCUMENT_BYTES is refused before it is parsed (a zip member is
read through a capped stream, whatever size its header claims), JSON nested past Python's limits is
refused, and the whole document is schema-validated (``triage.export.json_.validate``) before a row
is written. Exit 0 imported, 2 could not import (one line on stderr, nothing written).
"""
from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

from triage.cli import CLI_SCHEMA, add_db_arg, open_store, print_json

def ImportError_(message: str) -> ValueError:  # noqa: N802 (stands for the class, loaded with the store)
    """triage.export.json_.ImportError_ (a ValueError), imported when a file is read: a usage error needs no store."""
    from triage.export.json_ import ImportError_ as error

    return error(message)


MAX_DOCUMENT_BYTES = 32 * 1024 * 1024  # a day of 1 s watch samples is ~13 MB of JSON


def register(p: argparse.ArgumentParser) -> None:
    """Read a run document (JSON file, '-' for stdin, or a support bundle .zip) into the database as a new run;
    prints its id."""
    p.add_argument("file", metavar="FILE")
    p.add_argument("--format", choices=["text", "json"], default="text")
    add_db_arg(p)
    p.set_defaults(func=run)


def _read_capped(f: BinaryIO, what: str, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    data = f.read(limit + 1)
    if len(data) > limit:
        raise ImportError_(f"{what} is larger than {limit // (1024 * 1024)} MiB: not a run document this "
                           "version imports")
    return data


def _parse(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8", errors="replace"))
    except RecursionError:
        raise ImportError_("the JSON is nested too deeply to be a run document") from None
    except ValueError as e:
        raise ImportError_(f"not JSON: {e}") from None


def read_document(path: str) -> Any:
    """The run document from a JSON file, stdin, or the run.json inside a bundle."""
    if path == "-":
        return _parse(_read_capped(sys.stdin.buffer, "stdin"))
    p = Path(path).expanduser()
    if not p.is_file():  # a device or a FIFO: read through the cap (is_zipfile would seek and read /dev/zero whole)
        with open(p, "rb") as f:
            return _parse(_read_capped(f, str(p)))
    with open(p, "rb") as f:
        is_zip = f.read(4) == b"PK\x03\x04" and zipfile.is_zipfile(f)
    if is_zip:
        with zipfile.ZipFile(p) as zf:
            names = [n for n in zf.namelist() if n.rsplit("/", 1)[-1] == "run.json"]
            if not names:
                raise ImportError_("the zip holds no run.json: not a vllm-triage bundle")
            name = min(names, key=len)
            if zf.getinfo(name).file_size > MAX_DOCUMENT_BYTES:
                raise ImportError_(f"{name} inflates to {zf.getinfo(name).file_size} bytes: too large to import")
            with zf.open(name) as member:
                return _parse(_read_capped(member, name))
    with open(p, "rb") as f:
        return _parse(_read_capped(f, str(p)))


def run(args: argparse.Namespace) -> int:
    try:
        data = read_document(args.file)
    except (OSError, ValueError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, RuntimeError) as e:
        # ImportError_ is a ValueError: a user's file, not a crash
        print(f"import: cannot import {args.file}: {e}", file=sys.stderr)
        return 2
    from triage.export.json_ import import_run

    store = open_store(args.db)
    try:
        run_id = import_run(store, data)
    except (ValueError, KeyError, TypeError) as e:
        print(f"import: cannot import {args.file}: {e}", file=sys.stderr)
        return 2
    if args.format == "json":
        print_json({"schema": CLI_SCHEMA, "run_id": run_id, "db": store.url}, indent=None)
    else:
        print(f"imported run {run_id} into {store.url}")
    return 0

"""The catalogue's records are data (triage/catalogue/data/*.toml): the loader builds each `FailureMode` from its
table, names what is wrong in a bad file, and every catalogue module serves its records as it did when they were
Python (``from triage.catalogue.vectors import MISSING_EOS``, ``dir()``, the module's ``*_MODES``)."""
from __future__ import annotations

import importlib
import tomllib
from functools import partial
from pathlib import Path

import pytest

from triage.catalogue import MODES, POOLING_LIVELOCK, load as load_mod
from triage.catalogue.load import RecordFileError, Records, load, parse, resolve
from triage.catalogue.model import FailureMode
from triage.catalogue.symptoms import Case, Clue
from triage.catalogue.versions import Version, VersionRange

DATA = Path(load_mod.__file__).parent / "data"
MODULES = ("records", "startup", "vectors", "clients", "vector_causes", "features", "rerank", "kubernetes",
           "rerank_families", "crashes")

GOOD = '''
[A_MODE]
id = "a-mode"
title = "A"
mechanism = "m"
refs = ["vllm#1"]
affected = [">= 0.10.2, < 0.32.0"]
fixed_in = "0.32.0"
fix_for = "triage.catalogue.records:_livelock_fix"
symptoms = ["hang-running", "rejected"]
clues = [
  {name = "plain", read = "triage.catalogue.engine_clues:chunking_off"},
  {name = "bound", read = "triage.catalogue.engine_clues:rejected_status", kwargs = {statuses = [500, 503]}},
  {call = "triage.catalogue.refusal_clues:config_is", args = ["on", "flag", true, "the flag is {v}"]},
]

[A_MODE.evidence]
log = "a line"
'''


def _bad(text: str) -> str:
    with pytest.raises(RecordFileError) as e:
        parse(text, "triage.catalogue.test", "test.toml")
    return str(e.value)


def test_a_table_becomes_a_record_with_its_types() -> None:
    r = parse(GOOD, "triage.catalogue.test", "test.toml")["A_MODE"]
    assert (r.id, r.refs, r.symptoms, r.evidence) == ("a-mode", ("vllm#1",), ("hang-running", "rejected"),
                                                      {"log": "a line"})
    assert r.affected == (VersionRange.of("0.10.2", "0.32.0"),) and r.fixed_in == Version("0.32.0")
    assert r.fix_for is resolve("triage.catalogue.records:_livelock_fix")
    plain, bound, built = r.clues
    assert all(isinstance(c, Clue) for c in r.clues)
    assert (plain.name, bound.name, built.name) == ("plain", "bound", "on")
    assert isinstance(bound.read, partial) and bound.read.keywords == {"statuses": (500, 503)}  # arrays are tuples
    assert built.read(Case(config={"flag": True})).direction == "for"
    assert r.fixed_text == "vLLM >= 0.32.0" and r.affects("0.31.0") is True


@pytest.mark.parametrize(("text", "says"), [
    (GOOD.replace('mechanism = "m"', 'mechanism = "m"\nmechansim = "typo"'), "[A_MODE] unknown field ['mechansim']"),
    (GOOD.replace('"rejected"]', '"rejectd"]'), "symptoms: unknown symptom ['rejectd']"),
    (GOOD.replace("records:_livelock_fix", "records:_no_such_fix"), "fix_for: 'triage.catalogue.records:_no_such_fix'"),
    (GOOD.replace("records:_livelock_fix", "records._livelock_fix"), "is not 'package.module:name'"),
    (GOOD.replace("engine_clues:chunking_off", "no_such_module:f"),
     "clues: 'triage.catalogue.no_such_module:f' names no function"),
    (GOOD.replace('{name = "plain", ', "{"), "a clue is {name, read[, args, kwargs]}"),
    (GOOD.replace('"0.32.0"]', '"0.32"]').replace(">= 0.10.2, <", "> "), "not a version range"),
    (GOOD.replace('title = "A"\n', ""), "[A_MODE] missing field ['title']"),
    (GOOD.replace('refs = ["vllm#1"]', 'refs = "vllm#1"'), "refs is an array of strings"),
    ("[A_MODE\n", "test.toml: not TOML"),
    ('x = "a key outside any record"\n', "'x' is not a record table"),
], ids=lambda v: v.split(":")[0][:40] if "\n" not in v else None)
def test_a_bad_file_names_the_file_the_record_and_the_key(text: str, says: str) -> None:
    msg = _bad(text)
    assert msg.startswith("test.toml") and says in msg, msg


def test_a_module_without_its_file_fails_at_import_with_the_path() -> None:
    with pytest.raises(RecordFileError, match=r"triage/catalogue/data/no_such\.toml: no such record file"):
        load("triage.catalogue.no_such")


@pytest.mark.parametrize("name", MODULES)
def test_each_module_serves_its_file_s_records_as_attributes(name: str) -> None:
    mod = importlib.import_module(f"triage.catalogue.{name}")
    table = tomllib.loads((DATA / f"{name}.toml").read_text())
    assert isinstance(mod.RECORDS, Records) and list(mod.RECORDS) == list(table)  # file order
    for const, spec in table.items():
        rec = getattr(mod, const)
        assert isinstance(rec, FailureMode) and rec.id == spec["id"] and rec is MODES[rec.id]
        assert const in dir(mod)
    with pytest.raises(AttributeError, match=f"module 'triage.catalogue.{name}' has no attribute 'NOT_A_RECORD'"):
        mod.NOT_A_RECORD  # noqa: B018 - the attribute access is the test


def test_the_catalogue_is_every_file_s_records_once() -> None:
    ids = [tomllib.loads((DATA / f"{n}.toml").read_text())[c]["id"] for n in MODULES
           for c in tomllib.loads((DATA / f"{n}.toml").read_text())]
    # 58 +8 (issue 42) +7 (issue 44) +3 (world) +2 (world5a: gateway-own-error, rerank-usage-total-only)
    assert sorted(ids) == sorted(MODES) and len(ids) == len(set(ids)) == 78


def test_callers_import_records_as_before() -> None:
    from triage.catalogue.startup import MATRYOSHKA, STARTUP_MODES
    from triage.catalogue.vectors import DIMENSIONS_NOT_MATRYOSHKA, MISSING_EOS, VECTOR_MODES

    assert MISSING_EOS in VECTOR_MODES and MATRYOSHKA is DIMENSIONS_NOT_MATRYOSHKA
    assert MATRYOSHKA not in STARTUP_MODES  # the vectors catalogue's record, named again by start-up
    assert POOLING_LIVELOCK.fix({"max_model_len": 512}).startswith("1) Upgrade to vLLM >= 0.32.0")


def test_texts_written_out_in_the_data_agree_with_the_constants_the_code_reads() -> None:
    """A record's text that used to be an f-string of a module constant is written out in its TOML file: the two
    must not drift apart (the constant is what the probes and fixes use)."""
    from triage.catalogue import clients, rerank, vectors

    assert vectors.LANGCHAIN_SETTING in vectors.CLIENT_TOKEN_IDS.title
    assert f"{vectors.LANGCHAIN_SETTING}=False" in vectors.CLIENT_TOKEN_IDS.experiment
    assert str(clients.LITELLM_NULL_FORMAT) in clients.LITELLM_ENCODING_FORMAT_NULL.mechanism
    assert rerank.QWEN3_RERANKER_TEMPLATE in rerank.RERANKER_TEMPLATE_MISSING.fix()

"""Copyable fix blocks on recorded real material: the lab's 0.31.0 livelock server (its start-up log and
command line), the fix applied to that command line, and the edits held against the catalogue's prose."""
from __future__ import annotations

import shlex

import pytest

from tests.cmdline_edits import edited
from tests.sources import replay
from triage import catalogue
from triage.checklist import CheckOptions, run_checklist
from triage.findings import Status
from triage.fixblocks import FixBlock, apply_serve, blocks_for_findings, blocks_for_mode, link_refs, ref_url
from triage.lab.profiles import BASE_ARGS, CONVERT_EMBED, PROFILES
from triage.sources import cmdline as cmdline_source
from triage.target import Target, Truncation

LOG_031 = (replay.REAL / "0.31.0-tiny-qwen3-livelock" / "server.log").read_text()
MODEL = "/root/.cache/vllm-triage/lab/models/tiny-qwen3"
# what `lab up --vllm 0.31.0 --profile livelock` ran (triage/lab/server.py build_command)
CMD = shlex.join(["vllm", "serve", MODEL, "--host", "127.0.0.1", "--port", "8001", *BASE_ARGS, *CONVERT_EMBED,
                  *PROFILES["livelock"].args])
NO_GPU = CheckOptions(local_gpu=False)


def _livelock_run(cmd: str | None = CMD):  # type: ignore[no-untyped-def]
    res = run_checklist(Target(cmdline=cmd, log_text=LOG_031, truncation=Truncation.parse("256")), options=NO_GPU)
    assert next(f for f in res.findings if f.check == "pooling-livelock-risk").status == Status.FAIL
    return res


def test_the_seed_case_gets_its_own_command_line_with_the_fix_applied() -> None:
    res = _livelock_run()
    blocks = blocks_for_findings(res.findings, res.config, cmdline=CMD, url="http://127.0.0.1:8001")
    # ordered by risk (issue 32): the client change first, then the restart, then the upgrade; a risk read from
    # the config (nothing stuck) has no "now" block
    assert [b.kind for b in blocks] == ["request", "client", "cmdline", "diff", "upgrade"]
    fixed = next(b for b in blocks if b.kind == "cmdline").code
    facts = cmdline_source.collect(fixed).facts
    # runnable: every option is one vLLM has, the fix is in, the budget vLLM would refuse without chunking is gone
    assert "cmdline_unknown_flags" not in facts and "cmdline_removed_flags" not in facts
    assert facts["enable_chunked_prefill"].value is False
    assert "max_num_batched_tokens" not in facts
    assert facts["max_model_len"].value == 256 and facts["model"].value == MODEL
    assert "--port 8001" in fixed and "--kv-cache-memory-bytes 67108864" in fixed  # the rest is the user's own
    # and the checklist on the fixed command line no longer finds the livelock
    after = run_checklist(Target(cmdline=fixed, truncation=Truncation.parse("256"),
                                 answers={"vllm_version": "0.31.0"}), options=NO_GPU)
    assert next(f for f in after.findings if f.check == "pooling-livelock-risk").status == Status.PASS
    request = next(b for b in blocks if b.kind == "request")
    assert '"truncate_prompt_tokens": 255' in request.code and "127.0.0.1:8001/v1/embeddings" in request.code
    upgrade = next(b for b in blocks if b.kind == "upgrade")
    assert catalogue.fmt(catalogue.POOLING_LIVELOCK.fixed_in) in upgrade.code


def test_without_a_command_line_one_is_rebuilt_from_the_effective_config_and_says_so() -> None:
    res = _livelock_run(None)
    block = next(b for b in blocks_for_findings(res.findings, res.config) if b.kind == "cmdline")
    assert "Rebuilt" in block.note
    facts = cmdline_source.collect(block.code).facts
    assert facts["enable_chunked_prefill"].value is False and "cmdline_unknown_flags" not in facts


def test_docker_command_lines_keep_docker_options() -> None:
    cmd = ("docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.31.0 --model Qwen/Qwen3-Embedding-4B "
           "--runner pooling --max-model-len 2048 --max-num-batched-tokens=1024 --enable-chunked-prefill")
    out = apply_serve(shlex.split(cmd), {"enable_chunked_prefill": False, "max_num_batched_tokens": None})
    assert shlex.join(out) == ("docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.31.0 --model "
                               "Qwen/Qwen3-Embedding-4B --runner pooling --max-model-len 2048 "
                               "--no-enable-chunked-prefill")


@pytest.mark.parametrize("mode_id", sorted(m.id for m in catalogue.MODES.values() if m.edits))
def test_every_flag_an_edit_writes_is_in_the_records_own_fix(mode_id: str) -> None:
    """The edits restate the record's prose as data: each option they set must be one the record names."""
    mode = catalogue.get(mode_id)
    cfg = {"max_model_len": 256, "max_num_batched_tokens": 128, "device": "cpu",
           "cmdline_removed_flags": [{"option": "--task", "use": "--runner pooling"}],
           "removed": [{"option": "--task", "use": "--runner pooling"}],
           "pooler_config": {"pooling_type": "MEAN"}, "model_pooling": "LAST", "server_pooling": "MEAN"}
    prose = mode.fix(cfg)
    blocks = blocks_for_mode(mode, {"values": {**cfg, "model": "M"}})
    assert blocks, mode_id
    for b in blocks:
        if b.kind == "diff":
            for line in b.code.splitlines():
                if line.startswith("+  --"):
                    opt = line[3:].split()[0]
                    assert opt in prose or opt.replace("--no-", "--") in prose, (mode_id, opt, prose)
        if b.kind == "request":
            assert "truncate" in prose.lower(), (mode_id, prose)


def test_refs_are_links() -> None:
    assert ref_url("vllm#55427") == "https://github.com/vllm-project/vllm/issues/55427"
    md = link_refs("see vllm#55427 and the fix #48039, not 12 or #12")
    assert "[vllm#55427](https://github.com/vllm-project/vllm/issues/55427)" in md
    assert "[#48039](https://github.com/vllm-project/vllm/issues/48039)" in md and "#12" in md
    assert link_refs(md) == md  # already linked: left alone
    html = link_refs("vllm#55427", "html")
    assert html == '<a href="https://github.com/vllm-project/vllm/issues/55427">vllm#55427</a>'


def test_a_block_is_plain_data() -> None:
    assert FixBlock("cmdline", "t", "c").to_dict() == {"kind": "cmdline", "title": "t", "code": "c",
                                                      "language": "bash", "note": ""}


def test_reports_carry_the_same_blocks_under_the_verdict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from triage.export import render
    from triage.store import Store

    store = Store(str(tmp_path / "t.db"))
    saved = store.add_target("http://127.0.0.1:8001", MODEL, 256, CMD)
    res = run_checklist(Target(url=None, cmdline=CMD, log_text=LOG_031, truncation=Truncation.parse("256"),
                               target_id=saved.id), store=store, options=NO_GPU)
    rec = store.get_run(res.run_id)
    fixed = next(b for b in blocks_for_findings(res.findings, res.config, cmdline=CMD, url="http://127.0.0.1:8001")
                 if b.kind == "cmdline").code
    md = render(rec, "md").decode()
    assert md.index("## Fix: copy and paste") < md.index("## Findings")
    assert f"```bash\n{fixed}\n```" in md
    assert "[`vllm#55427`](https://github.com/vllm-project/vllm/issues/55427)" in md
    html = render(rec, "html").decode()
    assert html.index("Fix: copy and paste") < html.index("<h2>Findings</h2>")
    assert f"<code>{fixed}</code>" in html
    assert '<a href="https://github.com/vllm-project/vllm/issues/55427"><code>vllm#55427</code></a>' in html


# -- issue 32: the fix belongs to the headline cause ------------------------------------------------------------

RERANK_NO_OVERRIDES = replay.REAL / "rerank" / "0.32.0-rerank-no-overrides"
LOG_032 = (replay.REAL / "0.32.0-tiny-qwen3-livelock" / "server.log").read_text()


def test_the_restart_edits_the_given_line_in_place_only_the_changed_options_differ() -> None:
    fixed = next(b for b in blocks_for_findings(_livelock_run().findings, _livelock_run().config, cmdline=CMD)
                 if b.kind == "cmdline")
    assert "Edited your command line" in fixed.note
    # the lab's own line: --max-num-batched-tokens 128 must go (vLLM refuses it without chunking), and the
    # chunking flag is changed where it stands; --host, --port, --enforce-eager and the rest are the line's own
    assert edited(CMD, fixed.code) == (["--max-num-batched-tokens", "128", "--enable-chunked-prefill"],
                                        ["--no-enable-chunked-prefill"])


def test_without_a_pasted_line_the_server_process_own_line_is_edited_and_named() -> None:
    """The checklist's process source (triage/sources/process.py) states the line as ``process_cmdline``: the
    restart edits it (the lab's real command line for this recording), never a rebuilt one."""
    res = _livelock_run(None)
    config = {**res.config, "process_cmdline": {"value": CMD, "source": "process"},
              "server_pid": {"value": 4242, "source": "process"}}
    block = next(b for b in blocks_for_findings(res.findings, config) if b.kind == "cmdline")
    assert "the server process's own command line (pid 4242)" in block.note and "Rebuilt" not in block.note
    assert edited(CMD, block.code)[1] == ["--no-enable-chunked-prefill"]


def test_a_reranker_without_overrides_gets_the_overrides_and_nothing_of_the_livelock() -> None:
    """The recorded 0.32.0 reranker served without --hf-overrides: its fix box holds the overrides command only."""
    res = run_checklist(Target(log_text=(RERANK_NO_OVERRIDES / "server.log").read_text()), options=NO_GPU)
    from triage.fixblocks import headline_mode

    assert headline_mode(res.findings)[0] is catalogue.get("reranker-overrides-missing")
    blocks = blocks_for_findings(res.findings, res.config)
    assert [b.kind for b in blocks] == ["cmdline", "diff"]
    text = "\n".join(b.code for b in blocks)
    assert "--hf-overrides" in blocks[0].code and "Qwen3ForSequenceClassification" in blocks[0].code
    assert cmdline_source.collect(blocks[0].code).facts["runner"].value == "pooling"
    for livelock in ("chunked-prefill\n", "no-enable-chunked-prefill", "truncate_prompt_tokens", "Upgrade", "pip"):
        assert livelock not in text


def test_a_record_whose_fix_the_release_has_is_not_offered() -> None:
    """0.32.0 carries the #55427 fix: no livelock blocks and never "upgrade to >= 0.32.0" on it, even when a
    finding of that record is the worst one (a truncation the user stated)."""
    res = run_checklist(Target(log_text=LOG_032, truncation=Truncation.parse("256")), options=NO_GPU)
    mode = catalogue.POOLING_LIVELOCK
    assert res.config["vllm_version"]["value"] == "0.32.0"
    from triage.fixblocks import applies

    assert applies(mode, res.config) is False
    assert blocks_for_findings(res.findings, res.config, mode=mode) == []
    assert not any(b.kind == "upgrade" for b in blocks_for_mode(mode, res.config))


def test_a_seen_stall_puts_what_to_do_now_first() -> None:
    """The recorded 0.32.0 BERT log whose request waits forever (a hang the log shows, not only a risk): the
    abort comes first, then the client change, then the restart with the budget raised."""
    from tests.logs.real_logs import WAITING_BERT
    from triage.logs import analyze_log

    a = analyze_log(WAITING_BERT, year=2026)
    blocks = blocks_for_findings(a.findings, a.config, url="http://127.0.0.1:8003")
    assert [b.kind for b in blocks] == ["now", "request", "client", "cmdline", "diff"]
    assert "sport = :8003" in blocks[0].code and "127.0.0.1:8003" in blocks[1].code
    assert catalogue.STUCK_WAITING.now in blocks[0].title


def test_one_of_names_no_record_so_no_blocks() -> None:
    """The recorded 0.31.0 livelock log: the differential says "one of" (the experiments are the fix), so no
    candidate's blocks stand in for the cause."""
    from tests.logs.real_logs import LIVELOCK_031
    from triage.logs import analyze_log

    a = analyze_log(LIVELOCK_031, year=2026)
    assert blocks_for_findings(a.findings, a.config) == []


def test_the_reranker_report_carries_the_overrides_fix_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The Markdown and HTML exports of the recorded reranker-without-overrides run hold the page's fix."""
    from triage.export import render
    from triage.store import Store

    store = Store(str(tmp_path / "t.db"))
    res = run_checklist(Target(log_text=(RERANK_NO_OVERRIDES / "server.log").read_text()), store=store,
                        options=NO_GPU)
    rec = store.get_run(res.run_id)
    for fmt_ in ("md", "html"):
        out = render(rec, fmt_).decode()
        fix = out[out.index("Fix: copy and paste"):out.index("Findings")]
        assert "--hf-overrides" in fix and "Qwen3ForSequenceClassification" in fix
        assert "chunked-prefill\n" not in fix and "truncate_prompt_tokens" not in fix and "pip install" not in fix

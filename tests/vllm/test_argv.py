"""The one command-line reading (triage/vllm/argv.py): split as a shell does, parsed as vLLM's argparse parser does.

The parser cases are held against vLLM 0.31.0's own parser on the same arguments
(tests/fixtures/real/argparse/0.31.0-probe.txt, recorded with probe.py beside it)."""
from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest

from tests.sources import replay
from triage.checklist import CheckOptions, run_checklist
from triage.findings import Status
from triage.fixblocks import blocks_for_findings, command_line
from triage.lab.profiles import BASE_ARGS, CONVERT_EMBED, PROFILES
from triage.sources import cmdline as cmdline_source
from triage.target import Target, Truncation
from triage.vllm import argv, knowledge

PROBE = Path(__file__).parents[1] / "fixtures" / "real" / "argparse" / "0.31.0-probe.txt"
R031 = knowledge.for_version("0.31.0")


@pytest.mark.parametrize(("text", "words"), [
    ("vllm serve m --max-model-len 512  # served by the k8s job", ["vllm", "serve", "m", "--max-model-len", "512"]),
    ("vllm serve m \\\n  --max-model-len 512 \\\n  --enforce-eager", ["vllm", "serve", "m", "--max-model-len", "512",
                                                                       "--enforce-eager"]),
    # a comment after a continuation: the line still continues (what was meant; a shell would end the command)
    ("vllm serve m \\   # the model\n  --max-model-len=512", ["vllm", "serve", "m", "--max-model-len=512"]),
    ("# start it\nvllm serve m\n# done", ["vllm", "serve", "m"]),
    ("vllm serve m --served-model-name 'a#b' x#y", ["vllm", "serve", "m", "--served-model-name", "a#b", "x#y"]),
    ("vllm serve m --hf-overrides '{\"a\": 1,\n \"b\": \"# not a comment\"}'",
     ["vllm", "serve", "m", "--hf-overrides", '{"a": 1,  "b": "# not a comment"}']),
    ("vllm serve m \\\r\n --port 8000", ["vllm", "serve", "m", "--port", "8000"]),
    ('vllm serve m --chat-template "a\\\nb"', ["vllm", "serve", "m", "--chat-template", "ab"]),
])
def test_split_reads_the_line_as_a_shell_does(text: str, words: list[str]) -> None:
    assert argv.split(text) == words


def _probe_cases() -> list[tuple[list[str], str, dict]]:
    """(args, 'OK' | the error line, parsed values) per case of the recorded probe."""
    out = []
    err = ""
    for line in PROBE.read_text().splitlines():
        if line.startswith("vllm"):
            err = line
            continue
        m = re.match(r"(\[.*?\]) (OK|exit) ?(.*)", line)
        if m:
            out.append((ast.literal_eval(m.group(1)), "OK" if m.group(2) == "OK" else err,
                        ast.literal_eval(m.group(3)) if m.group(2) == "OK" else {}))
            err = ""
    return out


@pytest.mark.parametrize(("args", "outcome", "values"), _probe_cases(), ids=lambda x: str(x)[:40])
def test_parse_agrees_with_the_releases_own_parser(args: list[str], outcome: str, values: dict) -> None:
    p = argv.parse(args, R031)
    if outcome == "OK":
        assert p.unknown == [], args
        for dest, v in values.items():
            if dest in p.values:
                got = p.values[dest]
                assert (float(got) if dest == "gpu_memory_utilization" else
                        int(got) if dest in ("max_model_len", "tensor_parallel_size") else got) == v, (args, dest)
    else:
        assert p.unknown, args
        u = p.unknown[0]
        assert u["certain"] is True
        said = u.get("argparse_error") or "unrecognized arguments"
        assert said.split(": ", 1)[-1] in outcome or "unrecognized" in outcome, (said, outcome)


def test_an_ambiguous_prefix_is_argparses_error_naming_the_candidates() -> None:
    p = argv.parse(["--max-num", "8"], R031)
    u = p.unknown[0]
    assert u["candidates"] == sorted(u["candidates"]) and "--max-num-seqs" in u["candidates"]
    assert "--max-num-batched-tokens" in u["candidates"]
    assert u["why"].startswith("vllm serve 0.31.0's parser (argparse): ambiguous option: --max-num could match")


def test_an_abbreviation_is_no_false_alarm_and_is_named() -> None:
    """vllm#35603's line as posted (terminal wrap aside): `--gpu-memory-utili` + `zation` is two words there; the
    abbreviation alone, as argparse accepts it, starts the server."""
    res = cmdline_source.collect("vllm serve Qwen/Qwen3-Embedding-0.6B --gpu-memory-util 0.85 --max-model-len=8k "
                                 "--enable-prefix", release="0.31.0")
    facts = {k: f.value for k, f in res.facts.items()}
    assert "cmdline_unknown_flags" not in facts
    assert facts["gpu_memory_utilization"] == 0.85 and facts["max_model_len"] == 8000
    assert facts["enable_prefix_caching"] is True
    assert facts["cmdline_abbreviations"] == {"--gpu-memory-util": "--gpu-memory-utilization",
                                              "--enable-prefix": "--enable-prefix-caching"}


def test_repeats_keep_the_last_and_append_actions_collect() -> None:
    """GPUStack's own line in gpustack#3835 (as posted) gives --max-model-len twice: vLLM keeps the last."""
    line = ("vllm serve /var/lib/gpustack/cache/huggingface/openai/gpt-oss-120b --max-model-len 8192 "
            "--tensor-parallel-size 2 --pipeline-parallel-size 2 --distributed-executor-backend ray "
            "--max-model-len=32768 --tool-call-parser=openai --enable-auto-tool-choice --async-scheduling "
            "--host 192.168.8.141 --port 40044")
    p = argv.parse(argv.split(line)[2:], knowledge.for_version("0.11.2"))
    assert p.unknown == [] and p.values["max_model_len"] == "32768"
    assert argv.parse(["--middleware", "a", "--middleware", "b"], R031).values["middleware"] == ["a", "b"]


def test_masked_keeps_names_and_hides_secret_values() -> None:
    got = argv.masked(["vllm", "serve", "m", "--api-key", "k1", "k2", "--hf-token=hf_x", "--port", "1",
                       "-e", "HF_TOKEN=hf_y", "--ssl-keyfile", "/k.pem"])
    assert got == ["vllm", "serve", "m", "--api-key", "[REDACTED]", "[REDACTED]", "--hf-token=[REDACTED]",
                   "--port", "1", "-e", "HF_TOKEN=[REDACTED]", "--ssl-keyfile", "/k.pem"]


LOG_031 = (replay.REAL / "0.31.0-tiny-qwen3-livelock" / "server.log").read_text()
MODEL = "/root/.cache/vllm-triage/lab/models/tiny-qwen3"


def _pasted() -> str:
    """The lab's 0.31.0 livelock command line (tests/test_fixblocks.py) as a user pastes it: one option per line
    with continuations, a trailing comment, `=` values and an abbreviated flag."""
    args = [*BASE_ARGS, *CONVERT_EMBED, *PROFILES["livelock"].args]
    i = args.index("--max-num-batched-tokens")
    args[i:i + 2] = [f"--max-num-batched={args[i + 1]}"]  # abbreviated, with '='
    lines = [f"vllm serve {MODEL} --host 127.0.0.1", "--port=8001"]
    for a in args:
        if a.startswith("-"):
            lines.append(a)
        else:
            lines[-1] += " " + shlex.quote(a)
    return " \\\n  ".join(lines) + "   # the lab's livelock profile\n"


def test_one_reading_everywhere_and_a_fix_block_that_runs() -> None:
    text = _pasted()
    res = run_checklist(Target(cmdline=text, log_text=LOG_031, truncation=Truncation.parse("256")),
                        options=CheckOptions(local_gpu=False))
    assert next(f for f in res.findings if f.check == "pooling-livelock-risk").status == Status.FAIL
    want = argv.split(text)
    assert "#" not in " ".join(want) and "--max-num-batched=" + str(
        PROFILES["livelock"].args[PROFILES["livelock"].args.index("--max-num-batched-tokens") + 1]) in want
    # the same argv in the checks' facts, in the fix blocks' reading, in the source's own reading
    assert res.config["cmdline_argv"]["value"]["argv"] == want
    assert list(command_line(text).argv) == want == list(cmdline_source.read(text).argv)
    block = next(b for b in blocks_for_findings(res.findings, res.config, cmdline=text) if b.kind == "cmdline")
    back = shlex.split(block.code)  # the fix block parsed back as the shell will
    p = argv.parse(back[2:], R031)
    assert p.unknown == [] and p.positionals == [MODEL]
    assert p.values["enable_chunked_prefill"] is False
    assert "max_num_batched_tokens" not in p.values  # the abbreviated budget was the one the fix drops
    assert p.values["port"] == "8001" and p.values["host"] == "127.0.0.1"
    assert not any(t.startswith("#") for t in back)


def test_the_flags_check_names_argparses_error_for_an_ambiguous_prefix() -> None:
    from checks import flags
    from triage.config import merge

    cfg = merge([cmdline_source.collect("vllm serve m --runner pooling --max-num 8", release="0.31.0")])
    f = next(f for f in flags.check(cfg) if f.check == "flags-unknown")
    assert f.status == Status.FAIL
    assert f.title.startswith("vllm serve 0.31.0 refuses --max-num (ambiguous option: --max-num could match ")

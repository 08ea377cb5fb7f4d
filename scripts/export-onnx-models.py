#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/export-onnx-models.py: the committed ONNX test encoders and their torch goldens.

    /usr/bin/python3 scripts/export-onnx-models.py [--out tests/models/onnx]

Needs Debian 12's python3-torch (1.13) and python3-onnx (1.12); CI does not run it (the files it
writes are committed). Four small encoders, random weights from fixed seeds, exported with
`torch.onnx.export` and a dynamic `seq` axis (and `batch`), the shapes and ops real exporters
write for these families:

  bert_post_ln          BERT-style, post-LN, token types, position ids sliced from a buffer,
                        the additive mask (1 - mask) * -10000, erf GELU, a tanh pooler over the
                        first token; opset 14 (layer norm decomposed into ReduceMean/Sub/Pow/...).
                        Outputs last_hidden_state [batch, seq, 128], pooler_output [batch, 128].
  sentence_pre_ln       a pre-LN sentence encoder: fused QKV projection + Split, Where masking
                        with finfo(float32).min, tanh GELU, masked mean pooling, L2
                        normalisation; opset 17 (LayerNormalization). Outputs token_embeddings
                        [batch, seq, 96], sentence_embedding [batch, 96].
  distilbert_classifier DistilBERT-style classifier: post-LN, positions from arange (Range),
                        queries scaled before the product, masked_fill(-inf), first-token
                        pre-classifier + ReLU + classifier; opset 13. Output logits [batch, 3].
  unmasked_mean_encoder  one layer without any mask (nn.MultiheadAttention, a plain mean over
                        the sequence), hidden 32; opset 17. NOT padding-safe on purpose: the model
                        `rungs inspect --check-padding` must report. Outputs hidden_states
                        [batch, seq, 32], mean [batch, 32].

Each <name>.golden.json holds the inputs (int64, as exported) and the torch outputs (float32,
9 significant digits: exact for an f32) at lengths 1, 3, 8, 17 and 40 (batch 1, every token
real), a length-12 case whose mask ends in 3 zeros, and a batch-2 case (length 5, the second row
padded after 3 tokens). The export is deterministic for a given torch version: rerunning it
rewrites byte-identical .onnx and golden files (checked with torch 1.13 on Debian 12).
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import onnx
import torch
from torch import nn

VOCAB = 1000
MAX_POS = 512
LENGTHS = [1, 3, 8, 17, 40]


def randomise(module, seed):
    """Seeded weights with the spread of a trained model's, not init's near-identity."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(module.named_parameters()):
            if p.dim() == 1 and name.endswith("weight"):  # layer norm gains
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif p.dim() == 1:  # biases, layer norm shifts
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif "embeddings" in name:
                p.copy_(0.5 * torch.randn(p.shape, generator=g))
            else:  # linear weights [out, in]
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p.shape[1]))


# ---------------------------------------------------------------- (a) BERT, post-LN, opset 14
class BertLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads, self.dh = heads, hidden // heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.inter = nn.Linear(hidden, ffn)
        self.gelu = nn.GELU()
        self.out = nn.Linear(ffn, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=1e-12)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.dh).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + ext_mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        b, _, s, _ = ctx.shape
        ctx = ctx.permute(0, 2, 1, 3).contiguous().view(b, s, self.heads * self.dh)
        x = self.attn_norm(x + self.attn_out(ctx))
        return self.out_norm(x + self.out(self.gelu(self.inter(x))))


class BertPostLN(nn.Module):
    def __init__(self, hidden=128, heads=4, ffn=512, layers=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, hidden)
        self.position_embeddings = nn.Embedding(MAX_POS, hidden)
        self.token_type_embeddings = nn.Embedding(2, hidden)
        self.emb_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(MAX_POS).unsqueeze(0))
        self.layers = nn.ModuleList(BertLayer(hidden, heads, ffn) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask, token_type_ids):
        seq = input_ids.shape[1]
        pos = self.position_ids[:, :seq]
        x = self.word_embeddings(input_ids) + self.position_embeddings(pos) + self.token_type_embeddings(token_type_ids)
        x = self.emb_norm(x)
        ext = attention_mask[:, None, None, :].to(torch.float32)
        ext = (1.0 - ext) * -10000.0
        for layer in self.layers:
            x = layer(x, ext)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


# ---------------------------------------------------------------- (b) sentence encoder, pre-LN, opset 17
class PreLNLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads, self.dh, self.hidden = heads, hidden // heads, hidden
        self.norm1 = nn.LayerNorm(hidden, eps=1e-5)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden, eps=1e-5)
        self.fc1 = nn.Linear(hidden, ffn)
        self.act = nn.GELU(approximate="tanh")
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, x, keep, neg):
        b, s, _ = x.shape
        q, k, v = torch.split(self.qkv(self.norm1(x)), self.hidden, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, self.dh).transpose(1, 2) for t in (q, k, v))
        scores = torch.matmul(q, k.transpose(-1, -2)) * torch.tensor(1.0 / math.sqrt(self.dh))
        scores = torch.where(keep, scores, neg)  # tensors only: a Python float exports as double
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, s, self.hidden)
        x = x + self.proj(ctx)
        return x + self.fc2(self.act(self.fc1(self.norm2(x))))


class SentencePreLN(nn.Module):
    def __init__(self, hidden=96, heads=4, ffn=384, layers=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, hidden)
        self.position_embeddings = nn.Embedding(MAX_POS, hidden)
        self.layers = nn.ModuleList(PreLNLayer(hidden, heads, ffn) for _ in range(layers))
        self.final_norm = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, input_ids, attention_mask):
        seq = input_ids.shape[1]
        pos = torch.arange(seq, dtype=torch.int64, device=input_ids.device).unsqueeze(0)
        x = self.word_embeddings(input_ids) + self.position_embeddings(pos)
        keep = (attention_mask != 0)[:, None, None, :]
        neg = torch.tensor(torch.finfo(torch.float32).min, dtype=torch.float32)
        for layer in self.layers:
            x = layer(x, keep, neg)
        tokens = self.final_norm(x)
        m = attention_mask.unsqueeze(-1).to(torch.float32)
        summed = torch.sum(tokens * m, dim=1)
        counts = torch.clamp(m.sum(dim=1), min=torch.tensor(1e-9, dtype=torch.float32))
        pooled = summed / counts
        return tokens, nn.functional.normalize(pooled, p=2.0, dim=1)  # ReduceL2, Clip, Expand, Div


# ---------------------------------------------------------------- (c) DistilBERT classifier, opset 13
class DistilLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads, self.dh = heads, hidden // heads
        self.q_lin, self.k_lin, self.v_lin, self.out_lin = (nn.Linear(hidden, hidden) for _ in range(4))
        self.sa_layer_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.lin1 = nn.Linear(hidden, ffn)
        self.lin2 = nn.Linear(ffn, hidden)
        self.output_layer_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask):
        bs, s, dim = x.shape

        def shape(t):
            return t.view(bs, -1, self.heads, self.dh).transpose(1, 2)

        q = shape(self.q_lin(x)) / math.sqrt(self.dh)
        k, v = shape(self.k_lin(x)), shape(self.v_lin(x))
        scores = torch.matmul(q, k.transpose(2, 3))
        masked = (mask == 0).view(bs, 1, 1, s).expand_as(scores)
        scores = scores.masked_fill(masked, torch.tensor(-float("inf")))
        ctx = torch.matmul(nn.functional.softmax(scores, dim=-1), v)
        ctx = ctx.transpose(1, 2).contiguous().view(bs, -1, self.heads * self.dh)
        x = self.sa_layer_norm(self.out_lin(ctx) + x)
        return self.output_layer_norm(self.lin2(nn.functional.gelu(self.lin1(x))) + x)


class DistilBertClassifier(nn.Module):
    def __init__(self, hidden=64, heads=4, ffn=256, layers=2, labels=3):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, hidden)
        self.position_embeddings = nn.Embedding(MAX_POS, hidden)
        self.emb_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(DistilLayer(hidden, heads, ffn) for _ in range(layers))
        self.pre_classifier = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, labels)

    def forward(self, input_ids, attention_mask):
        seq = input_ids.size(1)
        pos = torch.arange(seq, dtype=torch.long, device=input_ids.device).unsqueeze(0).expand_as(input_ids)
        x = self.emb_norm(self.word_embeddings(input_ids) + self.position_embeddings(pos))
        for layer in self.layers:
            x = layer(x, attention_mask)
        pooled = torch.relu(self.pre_classifier(x[:, 0]))
        return self.classifier(pooled)


# ---------------------------------------------------------------- (d) no mask at all, opset 17
class UnmaskedMeanEncoder(nn.Module):
    """What bucketing must not be trusted with: attention over every position and a plain mean
    over the sequence, no attention mask. Padded tokens change every real output
    (`rungs inspect --check-padding` reports it); exact-length runs are still right."""

    def __init__(self, hidden=32, heads=2, ffn=64):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, hidden)
        self.position_embeddings = nn.Embedding(MAX_POS, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.attn = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, input_ids):
        seq = input_ids.shape[1]
        pos = torch.arange(seq, dtype=torch.int64, device=input_ids.device).unsqueeze(0)
        x = self.norm(self.word_embeddings(input_ids) + self.position_embeddings(pos))
        x = x + self.attn(x, x, x, need_weights=False)[0]
        x = x + self.fc2(torch.relu(self.fc1(x)))
        return x, x.mean(dim=1)


MODELS = [
    # name, class, seed, opset, input names, output names, description
    ("bert_post_ln", BertPostLN, 1401, 14, ["input_ids", "attention_mask", "token_type_ids"],
     ["last_hidden_state", "pooler_output"], "BERT-style post-LN encoder, token types, (1 - mask) * -10000"),
    ("sentence_pre_ln", SentencePreLN, 1702, 17, ["input_ids", "attention_mask"],
     ["token_embeddings", "sentence_embedding"],
     "pre-LN sentence encoder, fused QKV + Split, Where masking, masked mean pooling, L2 normalisation"),
    ("distilbert_classifier", DistilBertClassifier, 1303, 13, ["input_ids", "attention_mask"], ["logits"],
     "DistilBERT-style classifier, masked_fill(-inf), first-token classifier head"),
    ("unmasked_mean_encoder", UnmaskedMeanEncoder, 1704, 17, ["input_ids"], ["hidden_states", "mean"],
     "no attention mask, unmasked mean over the sequence: NOT padding-safe (a test of the padding check)"),
]


def make_inputs(names, batch, length, seed, pad_tail=0, pad_rows=()):
    """int64 inputs: ids in [1, VOCAB), a mask of ones (zeros on the last `pad_tail` tokens, and
    after token 3 in the rows of `pad_rows`), token types 0 then 1 from the middle."""
    g = np.random.default_rng(seed)
    ids = g.integers(1, VOCAB, size=(batch, length), dtype=np.int64)
    mask = np.ones((batch, length), dtype=np.int64)
    if pad_tail:
        mask[:, length - pad_tail:] = 0
    for r in pad_rows:
        mask[r, 3:] = 0
    ids[mask == 0] = 0  # the pad token, as a tokenizer writes it
    types = np.zeros((batch, length), dtype=np.int64)
    types[:, length // 2:] = 1
    by_name = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    return [by_name[n] for n in names]


def fmt_floats(a):
    return [float("%.9g" % x) for x in a.astype(np.float32).ravel().tolist()]


def tensor_json(a, floats):
    return {"shape": list(a.shape), "data": fmt_floats(a) if floats else [int(x) for x in a.ravel().tolist()]}


def export(name, cls, seed, opset, inputs, outputs, description, out_dir):
    torch.manual_seed(seed)
    model = cls().eval()
    randomise(model, seed)
    path = os.path.join(out_dir, name + ".onnx")
    example = tuple(torch.from_numpy(a) for a in make_inputs(inputs, 1, 7, seed))
    axes = {n: {0: "batch", 1: "seq"} for n in inputs}
    for o in outputs:
        axes[o] = {0: "batch", 1: "seq"} if o in ("last_hidden_state", "token_embeddings", "hidden_states") else {0: "batch"}
    torch.onnx.export(model, example, path, input_names=inputs, output_names=outputs, dynamic_axes=axes,
                      opset_version=opset, do_constant_folding=True)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    ops = sorted({n.op_type for n in m.graph.node})

    cases = []
    plan = [(1, n, 0, ()) for n in LENGTHS] + [(1, 12, 3, ()), (2, 5, 0, (1,))]
    for i, (batch, length, pad_tail, pad_rows) in enumerate(plan):
        arrays = make_inputs(inputs, batch, length, seed * 100 + i, pad_tail, pad_rows)
        with torch.no_grad():
            got = model(*(torch.from_numpy(a) for a in arrays))
        got = got if isinstance(got, tuple) else (got,)
        cases.append({
            "batch": batch, "length": length,
            "inputs": {n: tensor_json(a, False) for n, a in zip(inputs, arrays)},
            "outputs": {n: tensor_json(t.numpy(), True) for n, t in zip(outputs, got)},
        })
    golden = {
        "model": name + ".onnx", "description": description, "opset": opset,
        "exporter": "torch %s, onnx %s (scripts/export-onnx-models.py)" % (torch.__version__, onnx.__version__),
        "inputs": [{"name": n, "dtype": "int64", "dims": ["batch", "seq"]} for n in inputs],
        "outputs": outputs, "ops": ops, "cases": cases,
    }
    with open(os.path.join(out_dir, name + ".golden.json"), "w") as f:
        json.dump(golden, f, separators=(",", ":"))
        f.write("\n")
    print("%-22s opset %d, %7d bytes, %d nodes: %s" % (name, opset, os.path.getsize(path), len(m.graph.node),
                                                     " ".join(ops)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "models", "onnx"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for spec in MODELS:
        export(*spec, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

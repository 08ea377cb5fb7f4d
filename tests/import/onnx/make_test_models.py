#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes the small ONNX files the frontend's tests read (tests/import/onnx/onnx_import_test.cpp),
# with Debian's python3-onnx and python3-torch (CI does not run this: the outputs are committed).
#
#   /usr/bin/python3 tests/import/onnx/make_test_models.py
#
# matmul_add.onnx    x [batch, seq, 4] -> x @ W + b, written with onnx.helper (opset 13)
# tiny_bert.onnx     a 2-layer BERT-style encoder (post-LN, token types, the (1 - mask) * -10000
#                    additive mask, erf GELU, a tanh pooler on the first token) exported by
#                    torch.onnx at opset 14
# tiny_sentence.onnx a 2-layer pre-LN sentence encoder (fused QKV + Split, Where masking with
#                    finfo.min, LayerNormalization, masked mean pooling, L2 normalisation) at
#                    opset 17
# <name>.golden.json the inputs and torch's outputs at several lengths, for each of the two
import json
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def matmul_add():
    w = (np.arange(12, dtype=np.float32).reshape(4, 3) - 6) / 8
    b = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"], name="mm"),
         helper.make_node("Add", ["xw", "b"], ["y"], name="add")],
        "matmul_add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 3])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="rungs-tests")
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, "matmul_add.onnx"))


import torch  # noqa: E402
from torch import nn  # noqa: E402

VOCAB, HIDDEN, HEADS, FFN, MAX_POS, LAYERS = 50, 16, 2, 32, 64, 2


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(HIDDEN, HIDDEN) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-12), nn.LayerNorm(HIDDEN, eps=1e-12)
        self.up, self.down = nn.Linear(HIDDEN, FFN), nn.Linear(FFN, HIDDEN)

    def heads(self, x):
        b, s, _ = x.shape
        return x.view(b, s, HEADS, HIDDEN // HEADS).transpose(1, 2)

    def forward(self, x, add_mask):
        b, s, _ = x.shape
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HIDDEN // HEADS) + add_mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, s, HIDDEN)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.down(nn.functional.gelu(self.up(x))))


class TinyBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.pos = nn.Embedding(MAX_POS, HIDDEN)
        self.token_type = nn.Embedding(2, HIDDEN)
        self.register_buffer("position_ids", torch.arange(MAX_POS).unsqueeze(0))
        self.ln = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer() for _ in range(LAYERS))
        self.pooler = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, input_ids, attention_mask, token_type_ids):
        s = input_ids.shape[1]
        x = self.word(input_ids) + self.pos(self.position_ids[:, :s]) + self.token_type(token_type_ids)
        x = self.ln(x)
        add_mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, add_mask)
        return x, torch.tanh(self.pooler(x[:, 0]))


class SentenceLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv, self.o = nn.Linear(HIDDEN, 3 * HIDDEN), nn.Linear(HIDDEN, HIDDEN)
        self.ln1, self.ln2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
        self.up, self.down = nn.Linear(HIDDEN, FFN), nn.Linear(FFN, HIDDEN)

    def forward(self, x, keep):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(HIDDEN, dim=-1)
        q, k, v = (t.view(b, s, HEADS, HIDDEN // HEADS).transpose(1, 2) for t in (q, k, v))
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(HIDDEN // HEADS))
        scores = torch.where(keep, scores, torch.tensor(torch.finfo(torch.float32).min))
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, s, HIDDEN)
        x = x + self.o(ctx)
        return x + self.down(nn.functional.gelu(self.up(self.ln2(x))))


class TinySentence(nn.Module):
    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.pos = nn.Embedding(MAX_POS, HIDDEN)
        self.layers = nn.ModuleList(SentenceLayer() for _ in range(LAYERS))
        self.ln = nn.LayerNorm(HIDDEN)

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        pos = torch.arange(s, dtype=torch.int64).unsqueeze(0)
        x = self.word(input_ids) + self.pos(pos)
        keep = attention_mask[:, None, None, :] > 0
        for layer in self.layers:
            x = layer(x, keep)
        x = self.ln(x)
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(dim=1) / torch.clamp(m.sum(dim=1), min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2.0, dim=1)


LENGTHS = [1, 3, 5, 8, 13, 20]


def golden(model, name, input_names, output_names, seed):
    g = torch.Generator().manual_seed(seed)
    cases = []
    for n in LENGTHS:
        ids = torch.randint(0, VOCAB, (1, n), generator=g)
        mask = torch.ones(1, n, dtype=torch.int64)
        if n >= 8:
            mask[0, n - 2:] = 0  # two padding tokens the model itself masks
        types = torch.zeros(1, n, dtype=torch.int64)
        types[0, n // 2:] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        args = tuple(feed[k] for k in input_names)
        with torch.no_grad():
            outs = model(*args)
        if not isinstance(outs, tuple):
            outs = (outs,)
        cases.append({
            "length": n,
            "inputs": {k: feed[k].flatten().tolist() for k in input_names},
            "outputs": {k: [round(float(v), 7) for v in o.flatten().tolist()] for k, o in zip(output_names, outs)},
        })
    with open(os.path.join(HERE, name + ".golden.json"), "w") as f:
        json.dump({"model": name + ".onnx", "lengths": LENGTHS, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")


def export(model, name, input_names, output_names, opset, seed):
    model.eval()
    n = 4
    example = {"input_ids": torch.zeros(1, n, dtype=torch.int64), "attention_mask": torch.ones(1, n, dtype=torch.int64),
               "token_type_ids": torch.zeros(1, n, dtype=torch.int64)}
    axes = {k: {0: "batch", 1: "seq"} for k in input_names}
    for k in output_names:
        axes[k] = {0: "batch", 1: "seq"} if k == "last_hidden_state" else {0: "batch"}
    path = os.path.join(HERE, name + ".onnx")
    torch.onnx.export(model, tuple(example[k] for k in input_names), path, input_names=input_names,
                      output_names=output_names, dynamic_axes=axes, opset_version=opset)
    onnx.checker.check_model(onnx.load(path))
    golden(model, name, input_names, output_names, seed)


if __name__ == "__main__":
    matmul_add()
    torch.manual_seed(0)
    export(TinyBert(), "tiny_bert", ["input_ids", "attention_mask", "token_type_ids"],
           ["last_hidden_state", "pooler_output"], 14, 1)
    torch.manual_seed(1)
    export(TinySentence(), "tiny_sentence", ["input_ids", "attention_mask"], ["sentence_embedding"], 17, 2)

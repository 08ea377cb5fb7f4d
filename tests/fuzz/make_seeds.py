#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/fuzz/make_seeds.py: writes the seed corpora in tests/fuzz/corpus/ (committed; rerun after
changing this file). Small on purpose: libFuzzer mutates seeds, so a few hundred bytes each.

  /usr/bin/python3 tests/fuzz/make_seeds.py    (Debian's python3-onnx for the ONNX seeds)
"""
import json
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def safetensors(tensors):
    """tensors: list of (name, dtype, shape). Values are small deterministic numbers."""
    header, data = {}, b""
    for name, dtype, shape in tensors:
        n = 1
        for d in shape:
            n *= d
        vals = [((i * 7) % 11 - 5) / 8 for i in range(n)]
        if dtype == "F32":
            raw = struct.pack("<%df" % n, *vals)
        elif dtype == "F16":
            raw = struct.pack("<%de" % n, *vals)
        else:  # BF16: the top half of the f32 bits
            raw = b"".join(struct.pack("<f", v)[2:] for v in vals)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def model(name, inputs, blocks, outputs, bucket="seq"):
    m = {"format": "rungs-model", "version": 1, "name": name}
    if bucket:
        m["bucket_dim"] = bucket
    m.update({"inputs": inputs, "blocks": blocks, "outputs": outputs})
    return json.dumps(m, separators=(",", ":")).encode()


def write(folder, name, data):
    os.makedirs(os.path.join(HERE, "corpus", folder), exist_ok=True)
    with open(os.path.join(HERE, "corpus", folder, name), "wb") as f:
        f.write(data)


def model_seeds():
    mlp = model("mlp", [{"name": "x", "shape": ["seq", 4]}],
                [{"op": "linear", "name": "fc1", "input": "x", "out_features": 3, "activation": "gelu", "out": "h"},
                 {"op": "linear", "name": "fc2", "input": "h", "out_features": 4, "bias": False, "out": "y"}],
                [{"name": "y"}])
    mlp_w = [("fc1.weight", "F32", [4, 3]), ("fc1.bias", "F32", [3]), ("fc2.weight", "F32", [3, 4])]
    write("fuzz_model_loader", "mlp_f32", mlp + b"\0" + safetensors(mlp_w))
    write("fuzz_model_loader", "mlp_f16", mlp + b"\0" + safetensors([(n, "F16", s) for n, _, s in mlp_w]))

    enc = model("enc", [{"name": "ids", "shape": [1, "seq"]}, {"name": "mask", "shape": [1, "seq"]}],
                [{"op": "embedding", "name": "tok", "input": "ids", "vocab": 5, "dim": 4, "out": "h0"},
                 {"op": "layer_norm", "name": "ln", "input": "h0", "out": "x1"},
                 {"op": "self_attention", "name": "attn", "input": "x1", "heads": 2, "mask": "mask",
                  "causal": True, "out": "a"},
                 {"op": "add", "inputs": ["h0", "a"], "out": "h1"},
                 {"op": "mlp", "name": "ff", "input": "h1", "hidden": 4, "activation": "silu", "out": "h2"},
                 {"op": "rms_norm", "name": "fin", "input": "h2", "eps": 1e-5, "out": "h3"},
                 {"op": "mean_pool", "input": "h3", "mask": "mask", "out": "pooled"}],
                [{"name": "embedding", "value": "pooled"}, {"name": "tokens", "value": "h3"}])
    enc_w = [("tok.table", [5, 4]), ("ln.gamma", [4]), ("ln.beta", [4])]
    enc_w += [("attn.%s.%s" % (p, k), [4, 4] if k == "weight" else [4]) for p in "qkvo" for k in ("weight", "bias")]
    enc_w += [("ff.up.weight", [4, 4]), ("ff.up.bias", [4]), ("ff.down.weight", [4, 4]), ("ff.down.bias", [4]),
              ("fin.gamma", [4])]
    write("fuzz_model_loader", "encoder_bf16", enc + b"\0" + safetensors([(n, "BF16", s) for n, s in enc_w]))

    pool = model("pool", [{"name": "x", "shape": [2, "rows", 3]}, {"name": "y", "shape": [2, "rows", 3]}],
                 [{"op": "add", "inputs": ["x", "y"], "out": "s"}, {"op": "mean_pool", "input": "s", "out": "p"}],
                 [{"name": "p"}], bucket="rows")
    write("fuzz_model_loader", "no_params", pool)
    static = model("static", [{"name": "x", "shape": [2, 3]}],
                   [{"op": "linear", "name": "l", "input": "x", "out_features": 2, "activation": "tanh", "out": "y"}],
                   [{"name": "y"}], bucket=None)
    write("fuzz_model_loader", "static", static + b"\0" + safetensors([("l.weight", "F32", [3, 2]), ("l.bias", "F32", [2])]))
    # Hostile headers: a huge header length, huge offsets, a huge shape.
    write("fuzz_model_loader", "huge_header_len", static + b"\0" + struct.pack("<Q", 1 << 62) + b"{}")
    huge = json.dumps({"l.weight": {"dtype": "F32", "shape": [1 << 40, 1 << 40], "data_offsets": [0, 1 << 62]}}).encode()
    write("fuzz_model_loader", "huge_shape", static + b"\0" + struct.pack("<Q", len(huge)) + huge)


def graph_seeds():
    def g(nodes, outputs):
        return json.dumps({"format": "rungs.graph", "version": 1, "nodes": nodes, "outputs": outputs},
                          separators=(",", ":")).encode()
    write("fuzz_graph_json", "mlp", g(
        [{"op": "input", "name": "x", "shape": [2, 3]}, {"op": "param", "name": "w", "shape": [3, 4]},
         {"op": "matmul", "in": [0, 1]}, {"op": "constant", "shape": [4], "data": [0.5, -1, "inf", "nan"]},
         {"op": "add", "in": [2, 3]}, {"op": "gelu", "in": [4]}, {"op": "softmax", "in": [5], "axis": -1}],
        [{"name": "y", "node": 6}]))
    write("fuzz_graph_json", "norms", g(
        [{"op": "input", "name": "x", "shape": [2, 2, 4]}, {"op": "param", "name": "g", "shape": [4]},
         {"op": "param", "name": "b", "shape": [4]}, {"op": "layer_norm", "in": [0, 1, 2], "eps": 1e-5},
         {"op": "rms_norm", "in": [3, 1], "eps": 1e-6}, {"op": "sum", "in": [4], "axes": [1], "keep_dims": True},
         {"op": "mean", "in": [4], "axes": [0, 2]}, {"op": "max", "in": [4], "axes": [-1]}],
        [{"name": "s", "node": 5}, {"name": "m", "node": 6}, {"name": "x", "node": 7}]))
    write("fuzz_graph_json", "movement", g(
        [{"op": "input", "name": "x", "shape": [2, 3, 4]}, {"op": "reshape", "in": [0], "shape": [6, -1]},
         {"op": "transpose", "in": [1], "perm": [1, 0]}, {"op": "slice", "in": [2], "axis": 1, "start": 1, "length": 4},
         {"op": "concat", "in": [3, 3], "axis": 0}, {"op": "param", "name": "t", "shape": [5, 2]},
         {"op": "gather", "in": [5, 4]}, {"op": "exp", "in": [6]}, {"op": "log", "in": [7]}],
        [{"name": "y", "node": 8}]))
    write("fuzz_graph_json", "attention", g(
        [{"op": "input", "name": "q", "shape": [1, 3, 4]}, {"op": "input", "name": "k", "shape": [1, 5, 4]},
         {"op": "input", "name": "m", "shape": [1, 5]},
         {"op": "attention", "in": [0, 1, 1], "heads": 2, "causal": True, "key_mask": 2, "scale": 0.5},
         {"op": "div", "in": [3, 0]}, {"op": "maximum", "in": [4, 3]}, {"op": "rsqrt", "in": [5]}],
        [{"name": "a", "node": 3}, {"name": "r", "node": 6}]))


def api_seeds():
    rng = random.Random(1)
    for i in range(12):
        write("fuzz_api", "random_%02d" % i, bytes(rng.randrange(256) for _ in range(24 + 16 * i)))


def onnx_seeds():
    """Small valid ONNX models (python3-onnx, Debian) for fuzz_onnx: the exporter idioms the
    frontend folds (Shape/Gather/Unsqueeze/Concat/Reshape), the encoder ops, every initializer
    form, a symbol to bucket and one to fix, and a few the frontend must refuse clearly."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def save(name, nodes, inputs, outputs, inits=(), opset=14):
        g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="rungs-seeds")
        m.ir_version = 8
        write("fuzz_onnx", name, m.SerializeToString())

    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    w = lambda name, *shape: numpy_helper.from_array(
        (np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) % 7 - 3) / 8, name)
    # MatMul + Add + Relu over [batch, seq, 4].
    save("mlp", [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["a"]),
                 helper.make_node("Relu", ["a"], ["y"])],
         [helper.make_tensor_value_info("x", f32, ["batch", "seq", 4])],
         [helper.make_tensor_value_info("y", f32, ["batch", "seq", 3])], [w("w", 4, 3), w("b", 3)])
    # Embedding Gather of int64 ids, LayerNormalization, ReduceMean: an encoder's ends (opset 17).
    save("embed_ln", [helper.make_node("Gather", ["table", "ids"], ["e"]),
                      helper.make_node("LayerNormalization", ["e", "g", "b"], ["n"], axis=-1, epsilon=1e-5),
                      helper.make_node("ReduceMean", ["n"], ["y"], axes=[1], keepdims=0)],
         [helper.make_tensor_value_info("ids", i64, [1, "seq"])],
         [helper.make_tensor_value_info("y", f32, [1, 4])], [w("table", 10, 4), w("g", 4), w("b", 4)], opset=17)
    # The shape arithmetic exporters emit: Reshape to (Shape[0], Shape[1], 2, 2) then Transpose.
    save("shape_fold", [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Constant", [], ["i0"], value=helper.make_tensor("i0", i64, [], [0])),
        helper.make_node("Constant", [], ["i1"], value=helper.make_tensor("i1", i64, [], [1])),
        helper.make_node("Gather", ["s", "i0"], ["d0"], axis=0), helper.make_node("Gather", ["s", "i1"], ["d1"], axis=0),
        helper.make_node("Unsqueeze", ["d0", "ax"], ["u0"]), helper.make_node("Unsqueeze", ["d1", "ax"], ["u1"]),
        helper.make_node("Concat", ["u0", "u1", "tail"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3]),
        helper.make_node("Softmax", ["t"], ["y"], axis=-1)],
        [helper.make_tensor_value_info("x", f32, ["batch", "seq", 4])],
        [helper.make_tensor_value_info("y", f32, ["batch", 2, "seq", 2])],
        [numpy_helper.from_array(np.array([0], np.int64), "ax"), numpy_helper.from_array(np.array([2, 2], np.int64), "tail")])
    # An additive mask from an int64 attention mask: (1 - mask) * -10000, Cast, Where, Erf.
    save("mask", [
        helper.make_node("Cast", ["mask"], ["mf"], to=f32), helper.make_node("Sub", ["one", "mf"], ["inv"]),
        helper.make_node("Mul", ["inv", "big"], ["add"]), helper.make_node("Add", ["x", "add"], ["s"]),
        helper.make_node("Erf", ["s"], ["e"]), helper.make_node("Equal", ["mf", "one"], ["keep"]),
        helper.make_node("Where", ["keep", "e", "zero"], ["y"])],
        [helper.make_tensor_value_info("x", f32, [1, "seq"]), helper.make_tensor_value_info("mask", i64, [1, "seq"])],
        [helper.make_tensor_value_info("y", f32, [1, "seq"])],
        [numpy_helper.from_array(np.array(1, np.float32), "one"), numpy_helper.from_array(np.array(-10000, np.float32), "big"),
         numpy_helper.from_array(np.array(0, np.float32), "zero")], opset=13)
    # Initializers in typed fields (float_data, int64_data), f16 raw data, a graph input that is
    # also an initializer.
    typed = helper.make_tensor("wt", f32, [4, 2], [0.5, -1, 2, 0.25, 1, 1, -0.5, 3])
    half = numpy_helper.from_array(np.array([1, -2], np.float16), "bh")
    save("typed_f16", [helper.make_node("Cast", ["bh"], ["bh32"], to=f32),
                       helper.make_node("Gemm", ["x", "wt", "bh32"], ["y"], transB=0)],
         [helper.make_tensor_value_info("x", f32, ["n", 4]), helper.make_tensor_value_info("wt", f32, [4, 2])],
         [helper.make_tensor_value_info("y", f32, ["n", 2])], [typed, half], opset=11)
    # Two symbols and no batch-like name: ambiguous without options (refused, with both names).
    save("two_symbols", [helper.make_node("Add", ["a", "b"], ["y"])],
         [helper.make_tensor_value_info("a", f32, ["rows", "cols"]), helper.make_tensor_value_info("b", f32, ["rows", "cols"])],
         [helper.make_tensor_value_info("y", f32, ["rows", "cols"])])
    # External data the bytes do not carry: refused by name.
    ext = TensorProto(name="we", data_type=f32, dims=[2])
    ext.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", "8")):
        e = ext.external_data.add()
        e.key, e.value = k, v
    save("external", [helper.make_node("Mul", ["x", "we"], ["y"])],
         [helper.make_tensor_value_info("x", f32, ["seq", 2])], [helper.make_tensor_value_info("y", f32, ["seq", 2])], [ext])
    # An op the frontend does not map.
    save("unsupported", [helper.make_node("Hardmax", ["x"], ["y"])],
         [helper.make_tensor_value_info("x", f32, ["seq", 2])], [helper.make_tensor_value_info("y", f32, ["seq", 2])])


if __name__ == "__main__":
    model_seeds()
    graph_seeds()
    api_seeds()
    onnx_seeds()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes the small ONNX files the frontend's tests read (tests/import/onnx/onnx_import_test.cpp),
# with Debian's python3-onnx and python3-torch (CI does not run this: the outputs are committed).
#
#   /usr/bin/python3 tests/import/onnx/make_test_models.py
#
# matmul_add.onnx    x [batch, seq, 4] -> x @ W + b, written with onnx.helper (opset 13)
# tiny_bert.onnx     a 2-layer BERT-like encoder exported by torch.onnx (opset 14) with
#                    tiny_bert.golden.json: inputs and torch outputs at several lengths
import json
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


if __name__ == "__main__":
    matmul_add()

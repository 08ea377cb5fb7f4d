// SPDX-License-Identifier: Apache-2.0
// The fusion passes on the committed ONNX encoders (tests/models/onnx, exported by PyTorch and
// imported op by op by the frontend): every attention, layer norm, GELU and linear the exporter
// spelled out in primitives runs as the fused kernel a hand-built HirModule gets, and the fused
// graph computes what the unfused one does, with padding masked.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

struct Expect {
  const char* file;
  size_t attention, norms, fused_matmul, slices;
};

// per model: 2 layers. bert_post_ln: q, k and v as one product (fuse_qkv), o, up, down per layer +
// the pooler (tanh in the epilogue); norms: embeddings + 2 per layer; slices: the position ids and
// the pooler's first token. sentence_pre_ln: its own fused qkv (the attention reads it in place,
// no slice copies), o, up, down per layer; norms: 2 per layer + final; slices: the position ids.
// distilbert: q, k and v as one product, o, up, down per layer + pre-classifier (relu) and
// classifier; norms: embeddings + 2 per layer; slices: as bert_post_ln.
const Expect kModels[] = {
    {"bert_post_ln", 2, 5, 9, 2},
    {"sentence_pre_ln", 2, 5, 8, 1},
    {"distilbert_classifier", 2, 5, 10, 2},
};

class PassOnnxEncoders : public ::testing::TestWithParam<Device> {};

TEST_P(PassOnnxEncoders, ExportedPatternsRunFused) {
  constexpr uint64_t kExtent = 12;
  for (const Expect& e : kModels) {
    SCOPED_TRACE(e.file);
    const Model m = load_model(std::string(RUNGS_ONNX_MODELS_DIR) + "/" + e.file + ".onnx");
    auto [hir, params] = m.build(kExtent);
    CompileOptions on;
    on.threads = 1;
    CompileOptions off = on;
    off.fusion = false;
    CompiledGraph fused = Session(GetParam()).compile_hir(hir, on);
    CompiledGraph plain = Session(GetParam()).compile_hir(hir, off);
    for (const auto& [name, data] : params) {
      fused.set_param(name, data);
      plain.set_param(name, data);
    }
    const CompileReport& r = fused.report();
    EXPECT_EQ(count_kernels(r, "attention"), e.attention) << kernel_ops(r);
    EXPECT_EQ(count_kernels(r, "layer_norm") + count_kernels(r, "fused_add_norm"), e.norms) << kernel_ops(r);
    EXPECT_EQ(count_kernels(r, "fused_matmul"), e.fused_matmul) << kernel_ops(r);
    EXPECT_EQ(count_kernels(r, "slice"), e.slices) << kernel_ops(r);
    EXPECT_TRUE(pass_report(r, "fuse_qkv").changed);
    // nothing of the exporter's attention, norm or activation spelling is left as its own kernel
    for (const char* op : {"softmax", "matmul", "erf", "tanh", "pow", "where", "sqrt"})
      EXPECT_EQ(count_kernels(r, op), 0u) << op << " in " << kernel_ops(r);
    // the only transposes left are of 2-D weights (Gemm's transB, which the frontend writes as a
    // transpose of the param); none of the attention's heads
    for (const KernelReport& k : r.kernels)
      if (k.op == "transpose") EXPECT_EQ(k.shape.size(), 2u) << kernel_ops(r);
    EXPECT_LT(r.kernels.size() * 2, plain.report().kernels.size()) << kernel_ops(r);

    // ids from the synthetic inputs, the mask dropping the last 4 tokens
    std::vector<std::vector<float>> data = m.synthetic_inputs(kExtent, 5);
    std::vector<NamedInput> named;
    const auto inputs = m.inputs(kExtent);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (m.input_role(i) == InputRole::Mask)
        for (size_t k = 8; k < data[i].size(); ++k) data[i][k] = 0.f;
      named.push_back({inputs[i].name, data[i]});
    }
    const auto a = fused.run(named), b = plain.run(named);
    ASSERT_EQ(a.size(), b.size());
    for (size_t o = 0; o < a.size(); ++o) EXPECT_LE(max_rel_error(a[o], b[o]), 2e-5) << "output " << o;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, PassOnnxEncoders, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace

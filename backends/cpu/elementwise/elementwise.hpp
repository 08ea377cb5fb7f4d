// SPDX-License-Identifier: Apache-2.0
// backends/cpu/elementwise/elementwise.hpp: unary and binary elementwise ops with numpy
// broadcasting, and FusedElementwise register programs, in one kernel.
//
// Every node this family handles is turned into a Program (a primitive op is a one-instruction
// program). At run time the output is viewed, after collapsing axes, as [rows, inner] with each
// input either contiguous along `inner` or broadcast (a splat). Work is cut into segments of at
// most kBlock floats of one row; each instruction runs as one vector loop over a segment, its
// temporaries living in L1-sized buffers, the last instruction writing the output directly: one
// pass over memory whatever the program's length.
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <span>
#include <vector>

#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend::cpu {

// 1 for unary elementwise ops, 2 for binary ones, 3 for where, 0 otherwise.
int elementwise_arity(ops::Op op);

struct Program {
  std::vector<ops::Instr> code;
  int inputs = 0;
  int regs = 0;
};
// The program of a primitive elementwise op or a FusedElementwise node (params.elementwise).
Program program_of(const KernelParams& params);

// The output as [rows, inner] after dropping size-1 axes and merging axes that every input walks
// contiguously (or broadcasts) alike.
struct BroadcastPlan {
  int outer_rank = 0;
  std::array<int64_t, ops::kMaxRank> outer{};                 // collapsed outer dims
  std::vector<std::array<int64_t, ops::kMaxRank>> in_stride;  // per input, per outer axis
  std::vector<uint8_t> in_contiguous;                        // per input: 1 walks inner, 0 splat
  int64_t rows = 1;
  int64_t inner = 1;
};
// Into `plan`, reusing its vectors' memory.
void plan_broadcast(std::span<const Dims> inputs, const Dims& out, BroadcastPlan& plan);

// Walks the rows of a plan, tracking each input's offset in `offsets` (one per input).
class RowCursor {
 public:
  RowCursor(const BroadcastPlan& plan, std::span<int64_t> offsets) : plan_(plan), off_(offsets) {
    std::fill(off_.begin(), off_.end(), 0);
  }
  void seek(int64_t row);  // any row
  void next();             // row + 1
  int64_t row() const { return row_; }
  int64_t offset(size_t input) const { return off_[input]; }

 private:
  const BroadcastPlan& plan_;
  std::array<int64_t, ops::kMaxRank> idx_{};
  std::span<int64_t> off_;
  int64_t row_ = 0;
};

// Scalar reference: op semantics on one value pair (or triple: c is where's third operand), and a
// whole node by plain index arithmetic.
float eval_scalar(ops::Op op, float a, float b, float c = 0.f);
void elementwise_reference(const KernelParams& params, std::span<const TensorArg> in, float* out,
                           const Dims& out_dims);

template <class Arch>
std::unique_ptr<Kernel> make_elementwise_for(const KernelParams& params);
// nullptr for nodes this family does not handle (or Isa::Scalar).
std::unique_ptr<Kernel> make_elementwise_kernel(const KernelParams& params, Isa isa);

}  // namespace rungs::backend::cpu

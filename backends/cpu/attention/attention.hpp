// SPDX-License-Identifier: Apache-2.0
// backends/cpu/attention/attention.hpp: fused multi-head attention, flash style.
//
// q [B, Sq, H*Dh], k and v [B, Sk, H*Dh], optional keep mask [B, Sk] (>= 0.5 keeps a key);
// causal: query i sees key j <= i + (Sk - Sq). Work is split over (batch, head, block of kQueryBlock
// queries). For each block of keys, the keys are transposed once into a [Dh, keys] tile, so a
// query's scores for W keys at a time are Dh FMAs with no horizontal sums; a running max and sum
// (online softmax) rescale the [queries, Dh] accumulators, so no [Sq, Sk] buffer exists. A query
// whose keys are all dropped (mask, causality) outputs zeros, never NaN or Inf.
#pragma once

#include <memory>
#include <span>

#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend::cpu {

// Scalar reference: full softmax per query in double.
void attention_reference(const AttentionParams& p, std::span<const TensorArg> in, float* out);

template <class Arch>
std::unique_ptr<Kernel> make_attention_for(const KernelParams& params);
std::unique_ptr<Kernel> make_attention_kernel(const KernelParams& params, Isa isa);

// Queries per task: the work is split over (batch, head, block of this many queries).
constexpr int64_t kAttentionQueryBlock = 128;

// The fewest tasks (batch x head x query block) a thread takes: about 16 K floats of work
// (grain_for's rule for the row kernels), a task counted as its queries (at most a block) x keys
// x head dim / 4. Counted as a whole block, 16 queries over 4 heads went to two threads natively
// and ran 3x slower than on one (sentence_pre_ln at 16 tokens: 29.5 against 8.8 us).
int64_t attention_task_grain(int64_t sq, int64_t sk, int64_t dh);

}  // namespace rungs::backend::cpu

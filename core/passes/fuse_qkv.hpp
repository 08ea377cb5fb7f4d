// SPDX-License-Identifier: Apache-2.0
// core/passes/fuse_qkv.hpp: compute a self-attention's q, k and v projections as one product.
//
// Why: an encoder layer projects the same rows three times (x Wq + bq, x Wk + bk, x Wv + bv)
// before its attention. Three products read x three times and each hands out its tasks to the
// threads and waits for them; at short sequences (16-64 rows) those hand-overs are a large share
// of the projections' time. One product of x with the three weights side by side
// (Epilogue::b_parts = 3; each weight keeps its own packed copy) reads x once, splits one task set
// across the threads, and writes one [B, S, Dq + Dk + Dv] tensor that the attention reads in
// place (its packed_qk form: q the first Dq columns, k the next, v the rest).
//
// Matched: an Attention node whose q, k and v are three different MatMul / FusedMatMul nodes read
// by nothing else, with the same A ([B, S, K]), each B a rank-2 weight of the same kind (all
// Params or all Constants, all transposed or none), the same epilogue (a bias on all or none, the
// same activation, no residual). And an Attention whose q, k and v are slices of one [B, S, N]
// tensor along its last axis (a model that projects the three at once, then splits them: q the
// first w columns, k the next w, v the rest), each read by nothing else: the attention reads that
// tensor in place and the three slice copies go.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_qkv(ir::GraphImpl& g);

}  // namespace rungs::passes

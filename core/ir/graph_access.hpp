// SPDX-License-Identifier: Apache-2.0
// core/ir/graph_access.hpp: the IR behind a public Graph, for the layers that may see the IR
// (docs/architecture.md). The public header exposes no internals; this header is reachable only
// from rungs_ir and the layers that depend on it.
#pragma once

#include "core/ir/graph_impl.hpp"
#include "rungs/graph.hpp"

namespace rungs::ir {

struct GraphAccess {
  static const GraphImpl& impl(const Graph& g) { return *g.impl_; }
  static GraphImpl& impl(Graph& g) { return *g.impl_; }
};

inline const GraphImpl& impl_of(const Graph& g) { return GraphAccess::impl(g); }
inline GraphImpl& impl_of(Graph& g) { return GraphAccess::impl(g); }

}  // namespace rungs::ir

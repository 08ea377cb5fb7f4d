#include "core/passes/fuse_attention.hpp"

namespace rungs::passes {

// Not implemented yet: leaves the graph unchanged.
bool fuse_attention(ir::GraphImpl& g) {
  (void)g;
  return false;
}

}  // namespace rungs::passes

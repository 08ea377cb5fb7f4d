// SPDX-License-Identifier: Apache-2.0
// core/compile/weight_store.hpp: params stored once per process, keyed by content.
//
// Why: a BucketedCompileCache compiles one graph per bucket, and every bucket uploads the same
// weights. Each executor keeps the raw (f32, policy-rounded) copy of a param that some kernel reads
// directly; interning that copy by content makes all graphs holding the same values share one
// buffer, so a 6-bucket ladder holds its weights once. A buffer dies with its last user.
#pragma once

#include <memory>
#include <span>

#include "core/compile/executor.hpp"

namespace rungs::compile {

// The shared read-only buffer holding exactly `values` (a new one if no live buffer matches).
// Thread-safe.
std::shared_ptr<const AlignedBuffer> intern_weights(std::span<const float> values);

}  // namespace rungs::compile

// SPDX-License-Identifier: Apache-2.0
// native_cli/workload.hpp: what the bench, plan and run commands share: ladder specs, traces,
// and inputs for a model at a given number of rows.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rungs/ladder.hpp"
#include "rungs/model.hpp"

namespace CLI {
class App;
}

namespace rungs::cli {

// Thrown for a bad command-line value: main prints the command's usage and exits 2.
struct UsageError {
  std::string message;
};

// A parsed --ladder SPEC: pow2:MIN:MAX, geo:MIN:MAX:RATIO, lin:MIN:MAX:STEP, list:E1,E2,...,
// optimal:K, exact (one bucket per distinct trace length), one:MAX (a single bucket); each may end
// in "+head" for the {1, 2, 4} head buckets and/or "+active" for active extent.
struct LadderSpec {
  std::string text;
  std::string kind;
  std::vector<double> args;
  bool head = false;
  bool active = false;
};
LadderSpec parse_ladder_spec(const std::string& spec);
// The buckets of a spec; `optimal` and `exact` fit the trace.
std::vector<Range> ladder_for(const LadderSpec& spec, std::span<const uint64_t> trace);
std::string ladder_to_string(std::span<const Range> buckets);
// ladder::optimal is exact: about K x D^2 / 2 steps and 24 x K x D bytes for D distinct lengths.
// Past kMaxOptimalSteps or 1 GiB it is refused (UsageError) before it starts.
void check_optimal_cost(std::span<const uint64_t> trace, uint64_t max_buckets, const std::string& what);
// The ladder specs in --compare values: each value holds specs separated by ';' or ','; a part
// that starts with a digit continues the list ladder before it ("list:16,64,256,one:256" is two
// specs), so list ladders compare with or without ';'.
std::vector<std::string> split_specs(const std::vector<std::string>& values);

// --trace FILE: one positive length a line ('#' comments and blank lines allowed), at most
// kMaxRequests of them. Errors name the file and line and exit 1 (rungs::Error ParseError); a
// binary line is shown escaped, never echoed raw.
std::vector<uint64_t> read_trace(const std::string& path);
// --synthetic lognormal:MEDIAN:COUNT[:MAX[:SEED]] (COUNT at most kMaxRequests, SEED >= 0)
std::vector<uint64_t> synthetic_trace(const std::string& spec);

// --bucket-dim NAME and --fix NAME=VALUE (repeatable): how an ONNX model's symbolic dims are
// bound (rungs::LoadOptions). run, bench and inspect take them.
struct LoadFlags {
  std::string bucket_dim;
  std::vector<std::string> fix;
};
void add_load_options(CLI::App* cmd, LoadFlags& flags);
// Loads a model file (.json with its weights, or .onnx) with those options. A bad --fix value
// (not NAME=VALUE with a whole VALUE >= 1) is a UsageError; a bad file an Error naming it.
Model load_cli_model(const std::string& path, const LoadFlags& flags);

// Inputs and outputs of a model at one extent, with how each maps to rows of the bucket dim, as
// the model reports it (Model::input_layouts / output_layouts).
struct ModelIo {
  struct Port {
    std::string name;
    Shape shape;       // at the extent
    size_t inner = 0;  // values per row along the bucket dim; 0 when the port has no bucket dim
  };
  std::vector<Port> inputs, outputs;
  const Model* model = nullptr;  // the model described (it outlives the ModelIo)
};
ModelIo model_io(const Model& model, uint64_t extent);

// Inputs for `rows` real rows (padded inputs are made by the cache): Model::synthetic_inputs, the
// same bytes on every platform (ids below the vocabulary, masks of ones, values in [-1, 1]).
// Refused (Error(OutOfRange)) past kMaxRequestBytes, before anything is allocated.
std::vector<std::vector<float>> synthetic_inputs(const ModelIo& io, uint64_t rows, uint64_t seed);
// The same size check alone, for a caller about to build a model at `rows`; `who` starts the message.
void check_input_bytes(const ModelIo& io, uint64_t rows, const std::string& who);

}  // namespace rungs::cli

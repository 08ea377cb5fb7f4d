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

// --trace FILE: one positive length a line ('#' comments and blank lines allowed). Errors name the
// file and line and exit 1 (rungs::Error ParseError).
std::vector<uint64_t> read_trace(const std::string& path);
// --synthetic lognormal:MEDIAN:COUNT[:MAX[:SEED]]
std::vector<uint64_t> synthetic_trace(const std::string& spec);

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
std::vector<std::vector<float>> synthetic_inputs(const ModelIo& io, uint64_t rows, uint64_t seed);

}  // namespace rungs::cli

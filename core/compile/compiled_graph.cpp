// SPDX-License-Identifier: Apache-2.0
// core/compile/compiled_graph.cpp: the checks around the executor. Every user mistake is caught
// here, before a kernel runs, with a message naming the input or param and the sizes involved.
#include <algorithm>

#include "core/check.hpp"
#include "core/compile/compiled_graph_impl.hpp"

namespace rungs {

namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  if (names.empty()) return "(none)";
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
  return s;
}

}  // namespace

CompiledGraph::CompiledGraph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CompiledGraph::CompiledGraph(CompiledGraph&&) noexcept = default;
CompiledGraph& CompiledGraph::operator=(CompiledGraph&&) noexcept = default;
CompiledGraph::~CompiledGraph() = default;

void CompiledGraph::set_param(std::string_view name, std::span<const float> data) {
  compile::Executor& ex = *impl_->exec;
  std::unique_lock<std::shared_mutex> lock(impl_->params_mu);
  auto id = ex.param_node(name);
  if (!id)
    fail(ErrorCode::UnknownName, "set_param: unknown param '" + std::string(name) +
                                     "'; the graph's params are: " + quoted_list(ex.param_names()));
  const Shape& shape = ex.graph().nodes[*id].shape;
  if (static_cast<int64_t>(data.size()) != shape_numel(shape))
    fail(ErrorCode::ShapeMismatch, "set_param: param '" + std::string(name) + "' got " + std::to_string(data.size()) +
                                       " values, expected " + std::to_string(shape_numel(shape)) + " (" +
                                       shape_to_string(shape) + ")");
  ex.set_param(name, data);
  impl_->report.param_bytes = ex.param_bytes();
}

namespace {

void check_params_set(const compile::Executor& ex, const char* fn) {
  for (const auto& pname : ex.param_names()) {
    uint32_t node = *ex.param_node(pname);
    if (!ex.param_is_set(node)) {
      const Shape& s = ex.graph().nodes[node].shape;
      fail(ErrorCode::ParamNotSet, std::string(fn) + ": param '" + pname + "' " + shape_to_string(s) +
                                       " was never set; call set_param(\"" + pname + "\", ...) with " +
                                       std::to_string(shape_numel(s)) + " values");
    }
  }
}

// Matches named inputs to the executor's inputs and checks sizes against `dims`.
// Non-f32 inputs are converted into `converted` (exactly; an integer past 2^24 throws).
std::vector<std::span<const float>> match_inputs(const compile::Executor& ex, std::span<const NamedInput> inputs,
                                                 const compile::RunDims& dims, const char* fn,
                                                 std::vector<std::vector<float>>& converted) {
  const auto& names = ex.input_names();
  std::vector<std::span<const float>> data(names.size());
  std::vector<bool> given(names.size(), false);
  for (const NamedInput& in : inputs) {
    auto it = std::find(names.begin(), names.end(), in.name);
    if (it == names.end())
      fail(ErrorCode::UnknownName, std::string(fn) + ": unknown input '" + std::string(in.name) +
                                       "'; the graph's inputs are: " + quoted_list(names));
    size_t k = static_cast<size_t>(it - names.begin());
    if (given[k])
      fail(ErrorCode::InvalidArgument, std::string(fn) + ": input '" + std::string(in.name) + "' is given twice");
    given[k] = true;
    uint32_t node = *ex.input_node(in.name);
    const backend::Dims& d = dims[node];
    if (static_cast<int64_t>(in.data.size()) != d.numel()) {
      Shape s(d.d.begin(), d.d.begin() + d.rank);
      fail(ErrorCode::ShapeMismatch, std::string(fn) + ": input '" + std::string(in.name) + "' has " +
                                         std::to_string(in.data.size()) + " values, expected " +
                                         std::to_string(d.numel()) + " (" + shape_to_string(s) + ")");
    }
    converted.resize(names.size());
    data[k] = in.data.to_f32(converted[k], std::string(fn) + ": input '" + std::string(in.name) + "'");
  }
  for (size_t k = 0; k < names.size(); ++k)
    if (!given[k]) {
      uint32_t node = *ex.input_node(names[k]);
      fail(ErrorCode::MissingInput, std::string(fn) + ": input '" + names[k] + "' " +
                                        shape_to_string(ex.graph().nodes[node].shape) + " was not given");
    }
  check_params_set(ex, fn);
  return data;
}

}  // namespace

std::vector<std::vector<float>> CompiledGraph::run(std::span<const NamedInput> inputs) const {
  const compile::Executor& ex = *impl_->exec;
  std::shared_lock<std::shared_mutex> lock(impl_->params_mu);
  std::vector<std::vector<float>> converted;
  auto data = match_inputs(ex, inputs, ex.compiled_dims(), "run", converted);
  return ex.run(data, ex.compiled_dims());
}

void CompiledGraph::run_in_place(const std::function<void(size_t, std::span<float>)>& fill,
                                 const std::function<void(size_t, std::span<const float>)>& take) const {
  const compile::Executor& ex = *impl_->exec;
  std::shared_lock<std::shared_mutex> lock(impl_->params_mu);
  check_params_set(ex, "run_in_place");
  ex.run_in_place(fill, take, ex.compiled_dims());
}

namespace {

// The work of one node at its compiled shape: flops of the products (compile::product_flops),
// bytes of every input and the output.
void work_of(const ir::GraphImpl& g, const ir::Node& n, double& flops, double& bytes) {
  auto numel = [](const Shape& s) { return static_cast<double>(shape_numel(s)); };
  bytes = 4 * numel(n.shape);
  std::vector<backend::Dims> in;
  for (uint32_t i : n.in) {
    bytes += 4 * numel(g.nodes[i].shape);
    in.push_back(backend::Dims::of(g.nodes[i].shape));
  }
  flops = compile::product_flops(n, backend::Dims::of(n.shape), in);
}

}  // namespace

std::vector<KernelProfile> CompiledGraph::profile(std::span<const NamedInput> inputs, int repetitions) const {
  if (repetitions < 1 || repetitions > 100000)
    fail(ErrorCode::OutOfRange, "profile: repetitions must be in [1, 100000], got " + std::to_string(repetitions));
  const compile::Executor& ex = *impl_->exec;
  std::shared_lock<std::shared_mutex> lock(impl_->params_mu);
  std::vector<std::vector<float>> converted;
  auto data = match_inputs(ex, inputs, ex.compiled_dims(), "profile", converted);
  const ir::GraphImpl& g = ex.graph();
  std::vector<double> ns(g.nodes.size(), 0.0);
  ex.run(data, ex.compiled_dims());  // warm-up: caches, thread wake-up, first-touch pages
  for (int r = 0; r < repetitions; ++r) ex.run(data, ex.compiled_dims(), &ns);
  std::vector<KernelProfile> out;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const backend::Kernel* kernel = ex.kernel(i);
    if (!kernel) continue;
    KernelProfile p{std::string(ir::op_name(g.nodes[i].op)), kernel->describe(), g.nodes[i].shape,
                    ns[i] / repetitions / 1e6, 0, 0};
    work_of(g, g.nodes[i], p.flops, p.bytes);
    out.push_back(std::move(p));
  }
  return out;
}

const std::vector<std::string>& CompiledGraph::input_names() const { return impl_->exec->input_names(); }
const std::vector<std::string>& CompiledGraph::output_names() const { return impl_->exec->output_names(); }

Shape CompiledGraph::input_shape(std::string_view name) const {
  auto id = impl_->exec->input_node(name);
  if (!id)
    fail(ErrorCode::UnknownName, "input_shape: unknown input '" + std::string(name) +
                                     "'; the graph's inputs are: " + quoted_list(impl_->exec->input_names()));
  return impl_->exec->graph().nodes[*id].shape;
}

Shape CompiledGraph::output_shape(std::string_view name) const {
  auto id = impl_->exec->output_node(name);
  if (!id)
    fail(ErrorCode::UnknownName, "output_shape: unknown output '" + std::string(name) +
                                     "'; the graph's outputs are: " + quoted_list(impl_->exec->output_names()));
  return impl_->exec->graph().nodes[*id].shape;
}

const CompileReport& CompiledGraph::report() const { return impl_->report; }

uint64_t CompiledGraph::elements_computed() const { return impl_->exec->elements_computed(); }

std::vector<CompiledGraph::WeightBlock> CompiledGraph::weight_blocks() const { return impl_->exec->weight_blocks(); }

std::vector<std::string> CompiledGraph::param_names() const { return impl_->exec->param_names(); }

Shape CompiledGraph::param_shape(std::string_view name) const {
  auto id = impl_->exec->param_node(name);
  if (!id)
    fail(ErrorCode::UnknownName, "param_shape: unknown param '" + std::string(name) +
                                     "'; the graph's params are: " + quoted_list(impl_->exec->param_names()));
  return impl_->exec->graph().nodes[*id].shape;
}

bool CompiledGraph::param_is_set(std::string_view name) const {
  auto id = impl_->exec->param_node(name);
  if (!id)
    fail(ErrorCode::UnknownName, "param_is_set: unknown param '" + std::string(name) +
                                     "'; the graph's params are: " + quoted_list(impl_->exec->param_names()));
  std::shared_lock<std::shared_mutex> lock(impl_->params_mu);
  return impl_->exec->param_is_set(*id);
}

bool CompiledGraph::prepare_active_rows(int64_t extent) {
  std::lock_guard<std::mutex> lock(impl_->rows_mu);
  if (impl_->rows && impl_->rows->extent == extent) return impl_->rows->supported;
  passes::ActiveRows rows = passes::analyze_active_rows(impl_->exec->graph(), extent);
  impl_->rows_reason = rows.supported ? std::string() : rows.reason;
  impl_->rows_differs = rows.differs_from_padding;
  impl_->rows = std::move(rows);
  return impl_->rows->supported;
}

bool CompiledGraph::active_rows_supported() const {
  std::lock_guard<std::mutex> lock(impl_->rows_mu);
  return impl_->rows && impl_->rows->supported;
}

const std::string& CompiledGraph::active_rows_reason() const { return impl_->rows_reason; }
const std::string& CompiledGraph::active_rows_differs_from_padding() const { return impl_->rows_differs; }

std::vector<std::vector<float>> CompiledGraph::run_rows(std::span<const NamedInput> inputs, int64_t rows) const {
  const passes::ActiveRows* plan;
  {
    std::lock_guard<std::mutex> lock(impl_->rows_mu);
    if (!impl_->rows)
      fail(ErrorCode::Unsupported, "run_rows: call prepare_active_rows(extent) first");
    if (!impl_->rows->supported)
      fail(ErrorCode::Unsupported, "run_rows: this graph cannot run at fewer rows than its extent " +
                                       std::to_string(impl_->rows->extent) + ": " + impl_->rows->reason);
    plan = &*impl_->rows;
  }
  if (rows < 1 || rows > plan->extent)
    fail(ErrorCode::OutOfRange, "run_rows: rows must be in [1, " + std::to_string(plan->extent) + "], got " +
                                    std::to_string(rows));
  const compile::Executor& ex = *impl_->exec;
  compile::RunDims dims = ex.compiled_dims();
  for (size_t i = 0; i < dims.size(); ++i)
    if (plan->row_axis[i] >= 0) dims[i][plan->row_axis[i]] = rows;
  std::shared_lock<std::shared_mutex> lock(impl_->params_mu);
  std::vector<std::vector<float>> converted;
  auto data = match_inputs(ex, inputs, dims, "run_rows", converted);
  return ex.run(data, dims);
}

}  // namespace rungs

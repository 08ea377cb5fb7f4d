// SPDX-License-Identifier: Apache-2.0
// tests/conformance/conformance.cpp: ONNX's own node tests (Debian's libonnx-testdata) through rungs.
//
// Every case directory (model.onnx, test_data_set_*/input_*.pb, output_*.pb) whose nodes are all
// ops the frontend supports is loaded with rungs::load_model, compiled on Device::Cpu and
// Device::Reference, run with its inputs in their own element types (the typed run API) and
// compared with the expected outputs as ONNX's backend tests compare (rtol 1e-3, atol 1e-7; NaN
// where NaN). A case passes when both devices match. Prints the pass count per op and every
// failure with its reason; the exit code is 1 when a case fails that the expected-failures file
// does not list (or a listed case passes: the list must stay true), else 0.
//
//   onnx_conformance NODE_DIR [EXPECTED_FAILURES_FILE] [-v] [--update]
//
// A case refused as it is runs again with its int64 / int32 graph inputs bound as constants (the
// data set's values), since rungs takes shapes and axes at compile time; such passes are counted apart.
//
// --update rewrites EXPECTED_FAILURES_FILE from this run (each failing case with its reason) and
// exits 0: for when the frontend learns (or drops) something; review the diff.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/import/onnx/onnx_proto.hpp"
#include "rungs/rungs.hpp"

namespace fs = std::filesystem;
namespace pb = rungs::onnx_import::pb;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// One tensor of a .pb file, its values in the type it was written in.
struct TestTensor {
  std::string name;
  rungs::Shape shape;
  int type = 0;
  std::vector<float> f32;
  std::vector<int64_t> i64;
  std::vector<int32_t> i32;
  std::vector<uint8_t> bools;
  std::vector<double> values;  // every element as a double, for comparison

  rungs::TensorView view() const {
    switch (type) {
      case pb::TensorProto::INT64: return i64;
      case pb::TensorProto::INT32: return i32;
      case pb::TensorProto::BOOL: return rungs::TensorView::bool_bytes(bools);
      default: return f32;
    }
  }
};

template <class T>
std::vector<T> raw_as(const std::string& raw) {
  std::vector<T> v(raw.size() / sizeof(T));
  std::memcpy(v.data(), raw.data(), v.size() * sizeof(T));
  return v;
}

// Throws std::runtime_error for a type the run API does not take.
TestTensor read_tensor(const fs::path& p) {
  pb::TensorProto t;
  const std::string bytes = read_file(p);
  if (!t.ParseFromString(bytes)) throw std::runtime_error("cannot parse " + p.string());
  TestTensor r;
  r.name = t.name();
  for (int64_t d : t.dims()) r.shape.push_back(d);
  r.type = t.data_type();
  const bool raw = t.has_raw_data();
  switch (r.type) {
    case pb::TensorProto::FLOAT:
      r.f32 = raw ? raw_as<float>(t.raw_data()) : std::vector<float>(t.float_data().begin(), t.float_data().end());
      for (float x : r.f32) r.values.push_back(x);
      break;
    case pb::TensorProto::INT64:
      r.i64 = raw ? raw_as<int64_t>(t.raw_data()) : std::vector<int64_t>(t.int64_data().begin(), t.int64_data().end());
      for (int64_t x : r.i64) r.values.push_back(static_cast<double>(x));
      break;
    case pb::TensorProto::INT32:
      r.i32 = raw ? raw_as<int32_t>(t.raw_data()) : std::vector<int32_t>(t.int32_data().begin(), t.int32_data().end());
      for (int32_t x : r.i32) r.values.push_back(x);
      break;
    case pb::TensorProto::BOOL:
      if (raw) r.bools = raw_as<uint8_t>(t.raw_data());
      else for (int32_t x : t.int32_data()) r.bools.push_back(x != 0);
      for (uint8_t x : r.bools) r.values.push_back(x != 0);
      break;
    default:
      throw std::runtime_error(p.filename().string() + ": element type " + std::to_string(r.type) +
                               " is not one the run API takes (f32, int64, int32, bool)");
  }
  if (static_cast<int64_t>(r.values.size()) != rungs::shape_numel(r.shape))
    throw std::runtime_error(p.filename().string() + ": " + std::to_string(r.values.size()) + " values for shape " +
                             rungs::shape_to_string(r.shape));
  return r;
}

// The ops the frontend supports, as its unsupported-op error lists them: loads a one-node model of
// an op no frontend has and reads the list after "the supported ops are: ". So the runner follows
// the frontend's own list (docs/onnx.md) without a copy that could drift.
std::set<std::string> supported_ops() {
  pb::ModelProto m;
  m.set_ir_version(8);
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("probe");
  for (const char* name : {"x", "y"}) {
    auto* v = name[0] == 'x' ? g->add_input() : g->add_output();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(pb::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(1);
  }
  auto* n = g->add_node();
  n->set_op_type("RungsConformanceProbe");
  n->set_name("probe");
  n->add_input("x");
  n->add_output("y");
  const std::string bytes = m.SerializeAsString();
  const std::string marker = "the supported ops are: ";
  try {
    rungs::load_model_from_onnx_bytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  } catch (const rungs::Error& e) {
    const std::string msg = e.what();
    const size_t at = msg.find(marker);
    if (at != std::string::npos) {
      std::set<std::string> ops;
      std::istringstream list(msg.substr(at + marker.size()));
      for (std::string op; std::getline(list, op, ',');) {
        op.erase(0, op.find_first_not_of(' '));
        op.erase(op.find_last_not_of(" .\n") + 1);
        if (!op.empty()) ops.insert(op);
      }
      return ops;
    }
    throw std::runtime_error("the frontend's unsupported-op error does not list the supported ops: " + msg);
  }
  throw std::runtime_error("the frontend loaded a model of an unknown op");
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int k = 0;; ++k) {
    fs::path p = dir / (prefix + std::to_string(k) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

// Runs one data set on one device; returns "" when every output matches, else why not. Inputs whose
// index is in `bound` were made constants of the model (bind_integer_inputs) and are not fed.
std::string run_set(const rungs::Model& model, rungs::Device device, const fs::path& set,
                    const std::set<int>& bound = {}) {
  std::vector<TestTensor> inputs, outputs;
  const auto input_files = numbered(set, "input_");
  for (size_t k = 0; k < input_files.size(); ++k)
    if (!bound.count(static_cast<int>(k))) inputs.push_back(read_tensor(input_files[k]));
  for (const auto& p : numbered(set, "output_")) outputs.push_back(read_tensor(p));
  auto [hir, params] = model.build(1);
  rungs::CompiledGraph g = rungs::Session(device).compile(hir.lower());
  for (const auto& [name, values] : params) g.set_param(name, values);
  const auto declared = model.inputs(1);
  if (declared.size() != inputs.size())
    return "the model takes " + std::to_string(declared.size()) + " inputs, the data set has " +
           std::to_string(inputs.size());
  std::vector<rungs::NamedInput> named;
  for (size_t k = 0; k < inputs.size(); ++k) named.push_back({declared[k].name, inputs[k].view()});
  const auto got = g.run(named);
  if (got.size() != outputs.size())
    return std::to_string(got.size()) + " outputs, expected " + std::to_string(outputs.size());
  for (size_t o = 0; o < outputs.size(); ++o) {
    const TestTensor& want = outputs[o];
    const rungs::Shape shape = g.output_shape(g.output_names()[o]);
    if (rungs::shape_numel(shape) != rungs::shape_numel(want.shape))
      return "output " + std::to_string(o) + " has shape " + rungs::shape_to_string(shape) + ", expected " +
             rungs::shape_to_string(want.shape);
    for (size_t i = 0; i < want.values.size(); ++i) {
      const double w = want.values[i], v = got[o][i];
      const bool ok = std::isnan(w) ? std::isnan(v) : (v == w || std::fabs(v - w) <= 1e-7 + 1e-3 * std::fabs(w));
      if (!ok) {
        std::ostringstream s;
        s << "output " << o << " element " << i << ": got " << v << ", expected " << w;
        return s.str();
      }
    }
  }
  return "";
}

// The case's model with every int64 / int32 graph input made an initializer holding the data set's
// value. ONNX's node tests pass shapes, axes and indices as graph inputs; rungs compiles static
// shapes, so such an argument must be known when the graph is built (as it is in an exported
// model, where it is a constant or folds from one). `bound` receives the input indices.
std::string bind_integer_inputs(const pb::ModelProto& proto, const fs::path& set, std::set<int>& bound) {
  pb::ModelProto m = proto;
  auto* g = m.mutable_graph();
  std::set<std::string> initialized;
  for (const auto& t : g->initializer()) initialized.insert(t.name());
  const auto files = numbered(set, "input_");
  google::protobuf::RepeatedPtrField<pb::ValueInfoProto> kept;
  int k = 0;
  for (const auto& in : g->input()) {
    if (initialized.count(in.name())) {
      *kept.Add() = in;
      continue;
    }
    const int type = in.type().tensor_type().elem_type();
    if ((type == pb::TensorProto::INT64 || type == pb::TensorProto::INT32) && k < static_cast<int>(files.size())) {
      pb::TensorProto t;
      if (!t.ParseFromString(read_file(files[k]))) throw std::runtime_error("cannot parse " + files[k].string());
      t.set_name(in.name());
      *g->add_initializer() = t;
      bound.insert(k);
    } else {
      *kept.Add() = in;
    }
    ++k;
  }
  g->mutable_input()->Swap(&kept);
  return m.SerializeAsString();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: onnx_conformance NODE_DIR [EXPECTED_FAILURES_FILE] [-v]\n";
    return 2;
  }
  const fs::path root = argv[1];
  bool verbose = false, update = false;
  std::string list_path;
  std::set<std::string> expected_failures;
  for (int a = 2; a < argc; ++a) {
    if (std::string(argv[a]) == "-v") {
      verbose = true;
      continue;
    }
    if (std::string(argv[a]) == "--update") {
      update = true;
      continue;
    }
    list_path = argv[a];
    std::ifstream f(argv[a]);
    if (!f) {
      std::cerr << "cannot read " << argv[a] << "\n";
      return 2;
    }
    for (std::string line; std::getline(f, line);) {
      line = line.substr(0, line.find('#'));
      line.erase(std::remove_if(line.begin(), line.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
                 line.end());
      if (!line.empty()) expected_failures.insert(line);
    }
  }
  const std::set<std::string> supported = supported_ops();
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  if (cases.empty()) {
    std::cerr << "no ONNX node test cases under " << root << "\n";
    return 1;
  }

  struct Count {
    int passed = 0, total = 0;
  };
  std::map<std::string, Count> per_op;
  std::vector<std::pair<std::string, std::string>> failures;  // case, why
  int unexpected = 0, passed_total = 0, total = 0, skipped = 0, passed_bound = 0;
  for (const fs::path& dir : cases) {
    const std::string name = dir.filename().string();
    pb::ModelProto proto;
    if (!proto.ParseFromString(read_file(dir / "model.onnx"))) {
      std::cerr << name << ": cannot parse model.onnx\n";
      ++unexpected;
      continue;
    }
    std::set<std::string> ops;
    bool all_supported = proto.graph().node_size() > 0;
    for (const auto& node : proto.graph().node()) {
      ops.insert(node.op_type());
      all_supported = all_supported && node.domain().empty() && supported.count(node.op_type());
    }
    if (!all_supported) {
      ++skipped;
      continue;
    }
    std::string op;
    for (const auto& o : ops) op += (op.empty() ? "" : "+") + o;
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    std::string why;
    try {
      rungs::Model model = rungs::load_model((dir / "model.onnx").string());
      if (sets.empty()) why = "no test_data_set_*";
      for (const auto& set : sets)
        for (rungs::Device device : {rungs::Device::Cpu, rungs::Device::Reference})
          if (why.empty()) {
            why = run_set(model, device, set);
            if (!why.empty()) why = set.filename().string() + " on " + rungs::to_string(device) + ": " + why;
          }
    } catch (const std::exception& e) {
      why = e.what();
    }
    // Refused as it is: again with its integer inputs (shapes, axes, indices) bound as constants,
    // one model per data set; counted apart.
    bool with_bound = false;
    if (!why.empty() && !sets.empty()) {
      std::string bound_why;
      bool any_bound = false;
      try {
        for (const auto& set : sets) {
          std::set<int> bound;
          const std::string bytes = bind_integer_inputs(proto, set, bound);
          if (bound.empty()) {
            bound_why = "no integer inputs to bind";
            break;
          }
          any_bound = true;
          rungs::Model model =
              rungs::load_model_from_onnx_bytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, {}, name);
          for (rungs::Device device : {rungs::Device::Cpu, rungs::Device::Reference})
            if (bound_why.empty()) {
              bound_why = run_set(model, device, set, bound);
              if (!bound_why.empty())
                bound_why = set.filename().string() + " on " + rungs::to_string(device) + ": " + bound_why;
            }
          if (!bound_why.empty()) break;
        }
      } catch (const std::exception& e) {
        bound_why = e.what();
      }
      if (any_bound && bound_why.empty()) {
        why.clear();
        with_bound = true;
        ++passed_bound;
      } else if (any_bound) {
        why += " (with its integer inputs bound as constants: " + bound_why + ")";
      }
    }
    const bool pass = why.empty();
    ++total;
    ++per_op[op].total;
    if (pass) {
      ++passed_total;
      ++per_op[op].passed;
    }
    if (!pass) failures.push_back({name, why});
    const bool listed = expected_failures.count(name) > 0;
    if (!pass && !listed) {
      ++unexpected;
      std::cout << "FAIL " << name << ": " << why << "\n";
    } else if (!pass) {
      std::cout << "expected failure " << name << ": " << why << "\n";
    } else if (listed) {
      ++unexpected;
      std::cout << "UNEXPECTED PASS " << name << " (listed as an expected failure: remove it from the list)\n";
    } else if (verbose) {
      std::cout << "pass " << name << (with_bound ? " (integer inputs bound as constants)" : "") << "\n";
    }
  }
  std::cout << "\nONNX node tests of the supported ops, per op (passed / cases):\n";
  for (const auto& [op, c] : per_op) std::cout << "  " << op << ": " << c.passed << " / " << c.total << "\n";
  std::cout << "total: " << passed_total << " / " << total << " passed (" << skipped
            << " cases of unsupported ops skipped; " << passed_bound
            << " of the passes with their integer inputs (shapes, axes, indices) bound as constants, as rungs "
               "takes them at compile time); "
            << unexpected << " unexpected\n";
  if (update) {
    std::ifstream in(list_path);
    std::string header;
    for (std::string line; std::getline(in, line) && line.rfind("#", 0) == 0;) header += line + "\n";
    in.close();
    std::ofstream out(list_path);
    out << header;
    for (auto [name, why] : failures) {
      const std::string dir = (root / name).string() + "/model.onnx: ";
      if (why.rfind(dir, 0) == 0) why = why.substr(dir.size());
      std::replace(why.begin(), why.end(), '\n', ' ');
      out << name << "  # " << why << "\n";
    }
    std::cout << "wrote " << failures.size() << " expected failures to " << list_path << "\n";
    return 0;
  }
  return unexpected == 0 ? 0 : 1;
}

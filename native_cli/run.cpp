// SPDX-License-Identifier: Apache-2.0
// `rungs run`: one inference of a model file at N rows, printing or writing the outputs.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "limits.hpp"
#include "npy.hpp"
#include "rungs/cache.hpp"
#include "rungs/error.hpp"
#include "rungs/session.hpp"
#include "workload.hpp"

namespace rungs::cli {
namespace {

struct RunOptions {
  std::string model;
  uint64_t rows = 0;  // 0: from the .npy inputs, or 1 without a bucket dim
  std::string ids;
  std::vector<std::string> inputs;
  std::string ladder;
  LoadFlags load;
  std::string format = "text";
  std::string output;
  std::string device = "cpu";
};

std::vector<float> read_ids(const std::string& path, uint64_t rows) {
  check_input_file("ids", path);
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::ParseError, "ids '" + path + "': cannot open the file");
  std::vector<float> ids;
  std::string tok;
  while (in >> tok) {
    char* end = nullptr;
    double v = std::strtod(tok.c_str(), &end);
    if (*end != '\0' || v < 0 || v != static_cast<double>(static_cast<int64_t>(v)))
      throw Error(ErrorCode::ParseError, "ids '" + path + "': token " + std::to_string(ids.size() + 1) +
                                             " must be a whole number >= 0, got '" + printable(tok) + "'");
    if (ids.size() == rows)
      throw Error(ErrorCode::ParseError, "ids '" + path + "': more than " + std::to_string(rows) +
                                             " ids for --rows " + std::to_string(rows) + "; give exactly one id per row");
    ids.push_back(static_cast<float>(v));
  }
  if (ids.size() != rows)
    throw Error(ErrorCode::ParseError, "ids '" + path + "': " + std::to_string(ids.size()) +
                                           " ids for --rows " + std::to_string(rows) + "; give exactly one id per row");
  return ids;
}

// The folder --format npy writes into: made if missing; an existing file there is refused by name.
std::filesystem::path npy_folder(const std::string& output) {
  std::filesystem::path dir = output.empty() ? "." : output;
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw Error(ErrorCode::InvalidArgument, "run: -o '" + output +
                                                "' is a file; --format npy writes one .npy file per output into a folder");
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorCode::InvalidArgument, "run: cannot create the folder '" + dir.string() + "': " + ec.message());
  return dir;
}

// --input values: NAME=FILE.npy (repeatable) or one JSON file {"name": [values]}.
struct InputArgs {
  std::vector<std::pair<std::string, std::string>> npy;  // name, path
  std::string json;
};

InputArgs split_inputs(const std::vector<std::string>& values) {
  InputArgs a;
  for (const std::string& v : values) {
    const size_t eq = v.find('=');
    if (eq != std::string::npos && eq > 0 && v.size() > 4 && v.compare(v.size() - 4, 4, ".npy") == 0) {
      a.npy.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a.json.empty()) {
      a.json = v;
    } else {
      throw UsageError{"--input: one JSON file at most ('" + a.json + "' and '" + v +
                       "'); give .npy inputs as --input NAME=FILE.npy"};
    }
  }
  if (!a.json.empty() && !a.npy.empty())
    throw UsageError{"--input: give either one JSON file or NAME=FILE.npy inputs, not both"};
  return a;
}

std::string input_names(const ModelIo& io) {
  std::string names;
  for (const auto& p : io.inputs) names += (names.empty() ? "" : ", ") + p.name;
  return names;
}

// A .npy input as f32 values, with the rows it gives the bucket dim (0: the input does not follow it).
struct NpyInput {
  size_t index;
  std::vector<float> values;
  uint64_t rows;
};

std::vector<NpyInput> read_npy_inputs(const InputArgs& args, const ModelIo& io1) {
  std::vector<NpyInput> out;
  for (const auto& [name, path] : args.npy) {
    size_t k = 0;
    while (k < io1.inputs.size() && io1.inputs[k].name != name) ++k;
    if (k == io1.inputs.size())
      throw Error(ErrorCode::UnknownName, "--input " + name + "=" + path + ": the model has no input '" + name +
                                              "'; its inputs are: " + input_names(io1));
    for (const auto& other : out)
      if (other.index == k) throw UsageError{"--input: '" + name + "' is given twice"};
    const std::string what = "input '" + name + "'";
    NpyArray a = read_npy(path, what, kMaxRequestBytes);
    std::vector<float> v = npy_to_floats(a, what + " (" + path + ")");
    uint64_t rows = 0;
    if (const size_t inner = io1.inputs[k].inner) {
      if (v.empty() || v.size() % inner != 0)
        throw Error(ErrorCode::ShapeMismatch, what + " (" + path + "): " + std::to_string(v.size()) + " values (shape " +
                                                  shape_to_string(a.shape) + ") are not whole rows of " + std::to_string(inner) +
                                                  " values along '" + io1.model->bucket_dim() + "'");
      rows = v.size() / inner;
    }
    out.push_back({k, std::move(v), rows});
  }
  return out;
}

// The rows of the run: --rows, or what the .npy inputs along the bucket dim hold (they must agree),
// or 1 for a model without a bucket dim.
uint64_t rows_for(const RunOptions& o, const std::vector<NpyInput>& npy, const ModelIo& io1) {
  uint64_t rows = o.rows;
  std::string from = "--rows " + std::to_string(o.rows);
  for (const auto& in : npy) {
    if (!in.rows) continue;
    const std::string here = "input '" + io1.inputs[in.index].name + "' (" + std::to_string(in.rows) + " rows)";
    if (rows && rows != in.rows)
      throw Error(ErrorCode::ShapeMismatch, "run: " + here + " disagrees with " + from + " along '" + io1.model->bucket_dim() + "'");
    rows = in.rows;
    from = here;
  }
  if (rows) return rows;
  if (io1.model->bucket_dim().empty()) return 1;
  throw UsageError{"run: --rows is needed: give --rows N, or the inputs that follow '" + io1.model->bucket_dim() +
                   "' as --input NAME=FILE.npy"};
}

int run_run(const RunOptions& o) {
  check_input_file("model", o.model);
  const InputArgs args = split_inputs(o.inputs);
  if (!args.json.empty()) check_input_file("input", args.json);
  // Before anything is built: a bad output folder, a bad ladder, inputs too large to build.
  std::filesystem::path dir;
  if (o.format == "npy") dir = npy_folder(o.output);
  std::optional<LadderSpec> spec;
  if (!o.ladder.empty()) spec = parse_ladder_spec(o.ladder);
  Model model = load_cli_model(o.model, o.load);
  const ModelIo io1 = model_io(model, 1);
  const std::vector<NpyInput> npy = read_npy_inputs(args, io1);
  const uint64_t rows = rows_for(o, npy, io1);
  check_input_bytes(io1, rows, "run --rows " + std::to_string(rows));
  const ModelIo io = model_io(model, rows);

  std::vector<std::vector<float>> data = synthetic_inputs(io, rows, 1);
  if (!o.ids.empty()) {
    bool found = false;
    for (size_t k = 0; k < io.inputs.size(); ++k)
      if (model.input_role(k) == InputRole::Ids) {  // an embedding's input, whatever its name
        data[k] = read_ids(o.ids, rows);
        found = true;
      }
    if (!found) throw Error(ErrorCode::UnknownName, "run: --ids given, but '" + o.model + "' has no ids input (the input of an embedding block)");
  }
  for (const auto& in : npy) {
    const auto& port = io.inputs[in.index];
    const size_t want = port.inner ? port.inner * rows : static_cast<size_t>(shape_numel(port.shape));
    if (in.values.size() != want)
      throw Error(ErrorCode::ShapeMismatch, "input '" + port.name + "': " + std::to_string(in.values.size()) + " values, the model takes " +
                                                shape_to_string(port.shape) + " (" + std::to_string(want) + " values) at " +
                                                std::to_string(rows) + " rows");
    data[in.index] = in.values;
  }
  if (!args.json.empty()) {
    std::ifstream in(args.json);
    if (!in) throw Error(ErrorCode::ParseError, "input '" + args.json + "': cannot open the file");
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      throw Error(ErrorCode::ParseError, "input '" + args.json + "': not valid JSON: " + printable(e.what(), 200));
    }
    if (!j.is_object()) throw Error(ErrorCode::ParseError, "input '" + args.json + "': expected an object {\"name\": [values]}");
    for (auto it = j.begin(); it != j.end(); ++it) {
      size_t k = 0;
      while (k < io.inputs.size() && io.inputs[k].name != it.key()) ++k;
      if (k == io.inputs.size())
        throw Error(ErrorCode::UnknownName, "input '" + args.json + "': '" + it.key() + "' is not an input of the model");
      if (!it.value().is_array()) throw Error(ErrorCode::ParseError, "input '" + args.json + "': '" + it.key() + "' must be an array of numbers");
      std::vector<float> v;
      for (const auto& x : it.value()) {
        if (!x.is_number()) throw Error(ErrorCode::ParseError, "input '" + args.json + "': '" + it.key() + "' must hold numbers only");
        v.push_back(x.get<float>());
      }
      data[k] = std::move(v);
    }
  }

  const Device device = o.device == "reference" ? Device::Reference : Device::Cpu;
  std::vector<std::string> names;
  std::vector<Shape> shapes;
  std::vector<std::vector<float>> outputs;
  nlohmann::json bucket;  // --ladder: where the run went
  if (!spec) {            // compiled at exactly `rows`
    auto [module, params] = model.build(rows);
    CompiledGraph c = Session(device).compile_hir(module);
    for (const auto& [n, v] : params) c.set_param(n, v);
    std::vector<NamedInput> named;
    for (size_t k = 0; k < io.inputs.size(); ++k) named.push_back({io.inputs[k].name, data[k]});
    outputs = c.run(named);
    names = c.output_names();
    for (const auto& n : names) shapes.push_back(c.output_shape(n));
  } else {  // through the bucketed cache: padded to the bucket's upper bound (or active extent)
    const uint64_t trace[] = {rows};
    BucketedCompileCache cache(device, ladder_for(*spec, trace));
    cache.set_active_extent(spec->active);
    auto build = [&](uint64_t upper) { return model.build(upper); };
    const auto in = model.cache_inputs(data);
    auto run = cache.run_padded_mixed(rows, rows, build, in, model.output_inners());
    if (!run)
      throw Error(ErrorCode::OutOfRange, "run: no bucket of --ladder " + o.ladder + " (" + ladder_to_string(cache.buckets()) +
                                             ") holds " + std::to_string(rows) + " rows");
    const CacheStats st = cache.stats();
    bucket = {{"ladder", o.ladder}, {"extent", run->upper}, {"mode", st.active_runs ? "active" : "padded"}};
    outputs = std::move(run->outputs);
    for (const auto& p : io.outputs) {
      names.push_back(p.name);
      shapes.push_back(p.shape);  // at `rows`: sliced back from the bucket
    }
    std::cerr << "run: " << rows << " rows in the bucket at " << run->upper << " (" << bucket["mode"].get<std::string>() << ")\n";
  }

  if (o.format == "npy") {
    for (size_t i = 0; i < names.size(); ++i) {
      auto path = (dir / (names[i] + ".npy")).string();
      write_npy(path, shapes[i], outputs[i]);
      std::cout << "wrote " << path << '\n';
    }
    return 0;
  }
  if (o.format == "json") {
    nlohmann::json j = {{"model", model.name()}, {"rows", rows}};
    if (spec) j["bucket"] = bucket;
    j["outputs"] = nlohmann::json::array();
    for (size_t i = 0; i < names.size(); ++i)
      j["outputs"].push_back({{"name", names[i]}, {"shape", shapes[i]}, {"data", outputs[i]}});
    std::cout << j.dump() << '\n';
    return 0;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    std::cout << names[i] << ' ' << shape_to_string(shapes[i]) << '\n';
    for (size_t k = 0; k < outputs[i].size(); ++k) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", outputs[i][k]);
      std::cout << buf << ((k + 1) % 8 == 0 || k + 1 == outputs[i].size() ? '\n' : ' ');
    }
  }
  return 0;
}

}  // namespace

Command add_run(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "One inference of a model file at N rows");
  cmd->add_option("model", o->model, "Model file (.json with its .safetensors, or .onnx)")->required();
  cmd->add_option("--rows", o->rows,
                  "Rows along the bucket dim (e.g. tokens); default: from the .npy inputs (1 without a bucket dim)")
      ->check(whole_number(1));
  auto* ids = cmd->add_option("--ids", o->ids, "Token ids, whitespace separated, one per row (mask all ones)");
  auto* in = cmd->add_option("--input", o->inputs,
                             "NAME=FILE.npy (repeatable; int64, int32, bool or float32), or one JSON file {\"input name\": [values]}")
                 ->allow_extra_args(false);
  ids->excludes(in);
  cmd->add_option("--ladder", o->ladder,
                  "Run through a BucketedCompileCache with this ladder (e.g. pow2:8:256, +active): inputs padded to the bucket")
      ->check([](const std::string& s) {
        try {
          parse_ladder_spec(s);
        } catch (const UsageError& e) {
          return e.message;
        }
        return std::string();
      });
  add_load_options(cmd, o->load);
  cmd->add_option("--format", o->format, "Output: text, json, or npy files")->check(CLI::IsMember({"text", "json", "npy"}))->capture_default_str();
  cmd->add_option("--output,-o", o->output, "Folder for --format npy: OUT_DIR/NAME.npy per output (default: current folder)");
  cmd->add_option("--device", o->device, "Backend")->check(CLI::IsMember({"cpu", "reference"}))->capture_default_str();
  return [cmd, o]() { return cmd->parsed() ? run_run(*o) : -1; };
}

}  // namespace rungs::cli

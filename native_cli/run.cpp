// SPDX-License-Identifier: Apache-2.0
// `rungs run`: one inference of a model file at N rows, printing or writing the outputs.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "limits.hpp"
#include "npy.hpp"
#include "rungs/error.hpp"
#include "rungs/session.hpp"
#include "workload.hpp"

namespace rungs::cli {
namespace {

struct RunOptions {
  std::string model;
  uint64_t rows = 0;
  std::string ids;
  std::string input;
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

int run_run(const RunOptions& o) {
  check_input_file("model", o.model);
  if (!o.input.empty()) check_input_file("input", o.input);
  // Before anything is built: a bad output folder, inputs too large to build.
  std::filesystem::path dir;
  if (o.format == "npy") dir = npy_folder(o.output);
  Model model = load_model(o.model);
  ModelIo io = model_io(model, std::min<uint64_t>(o.rows, 2));
  check_input_bytes(io, o.rows, "run --rows " + std::to_string(o.rows));
  io = model_io(model, o.rows);
  auto [module, params] = model.build(o.rows);
  CompiledGraph c = Session(o.device == "reference" ? Device::Reference : Device::Cpu).compile_hir(module);
  for (const auto& [n, v] : params) c.set_param(n, v);

  std::vector<std::vector<float>> data = synthetic_inputs(io, o.rows, 1);
  if (!o.ids.empty()) {
    bool found = false;
    for (size_t k = 0; k < io.inputs.size(); ++k)
      if (model.input_role(k) == InputRole::Ids) {  // an embedding's input, whatever its name
        data[k] = read_ids(o.ids, o.rows);
        found = true;
      }
    if (!found) throw Error(ErrorCode::UnknownName, "run: --ids given, but '" + o.model + "' has no ids input (the input of an embedding block)");
  }
  if (!o.input.empty()) {
    std::ifstream in(o.input);
    if (!in) throw Error(ErrorCode::ParseError, "input '" + o.input + "': cannot open the file");
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      throw Error(ErrorCode::ParseError, "input '" + o.input + "': not valid JSON: " + printable(e.what(), 200));
    }
    if (!j.is_object()) throw Error(ErrorCode::ParseError, "input '" + o.input + "': expected an object {\"name\": [values]}");
    for (auto it = j.begin(); it != j.end(); ++it) {
      size_t k = 0;
      while (k < io.inputs.size() && io.inputs[k].name != it.key()) ++k;
      if (k == io.inputs.size())
        throw Error(ErrorCode::UnknownName, "input '" + o.input + "': '" + it.key() + "' is not an input of the model");
      if (!it.value().is_array()) throw Error(ErrorCode::ParseError, "input '" + o.input + "': '" + it.key() + "' must be an array of numbers");
      std::vector<float> v;
      for (const auto& x : it.value()) {
        if (!x.is_number()) throw Error(ErrorCode::ParseError, "input '" + o.input + "': '" + it.key() + "' must hold numbers only");
        v.push_back(x.get<float>());
      }
      data[k] = std::move(v);
    }
  }
  std::vector<NamedInput> named;
  for (size_t k = 0; k < io.inputs.size(); ++k) named.push_back({io.inputs[k].name, data[k]});
  auto outputs = c.run(named);

  const auto& names = c.output_names();
  if (o.format == "npy") {
    for (size_t i = 0; i < names.size(); ++i) {
      auto path = (dir / (names[i] + ".npy")).string();
      write_npy(path, c.output_shape(names[i]), outputs[i]);
      std::cout << "wrote " << path << '\n';
    }
    return 0;
  }
  if (o.format == "json") {
    nlohmann::json j = {{"model", model.name()}, {"rows", o.rows}};
    j["outputs"] = nlohmann::json::array();
    for (size_t i = 0; i < names.size(); ++i)
      j["outputs"].push_back({{"name", names[i]}, {"shape", c.output_shape(names[i])}, {"data", outputs[i]}});
    std::cout << j.dump() << '\n';
    return 0;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    std::cout << names[i] << ' ' << shape_to_string(c.output_shape(names[i])) << '\n';
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
  cmd->add_option("model", o->model, "Model description (.json)")->required();
  cmd->add_option("--rows", o->rows, "Rows along the bucket dim (e.g. tokens)")->required()->check(whole_number(1));
  auto* ids = cmd->add_option("--ids", o->ids, "Token ids, whitespace separated, one per row (mask all ones)");
  auto* in = cmd->add_option("--input", o->input, "JSON object {\"input name\": [values]}");
  ids->excludes(in);
  cmd->add_option("--format", o->format, "Output: text, json, or npy files")->check(CLI::IsMember({"text", "json", "npy"}))->capture_default_str();
  cmd->add_option("--output,-o", o->output, "Folder for --format npy (default: current folder)");
  cmd->add_option("--device", o->device, "Backend")->check(CLI::IsMember({"cpu", "reference"}))->capture_default_str();
  return [cmd, o]() { return cmd->parsed() ? run_run(*o) : -1; };
}

}  // namespace rungs::cli

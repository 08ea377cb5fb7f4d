// SPDX-License-Identifier: Apache-2.0
// `rungs embed`: texts to sentence embeddings with a text model (token ids, optionally a padding
// mask: Universal Sentence Encoder Lite's TF.js graph model, docs/tfjs.md) through a
// rungs::TextEmbedder: each text tokenized with the model's vocab.json, run through a bucketed
// cache, printed with its token count, bucket and mode; --similarity adds the cosine matrix.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "limits.hpp"
#include "npy.hpp"
#include "rungs/cache.hpp"
#include "rungs/embedder.hpp"
#include "rungs/error.hpp"
#include "rungs/text.hpp"
#include "workload.hpp"

namespace rungs::cli {
namespace {

struct EmbedOptions {
  std::string model;
  std::vector<std::string> texts;
  std::string file;
  std::string vocab;
  std::string ladder = "pow2:8:512+active";
  std::string format = "text";
  std::string output;
  std::string device = "cpu";
  bool similarity = false;
};

struct Embedded {
  std::string text;
  size_t tokens = 0;
  uint64_t bucket = 0;
  std::string mode;  // active, padded (the bucket is the length) or exact (run at its length instead)
  std::vector<float> vector;
};

std::vector<std::string> read_texts(const EmbedOptions& o) {
  std::vector<std::string> texts = o.texts;
  if (!o.file.empty()) {
    check_input_file("file", o.file);
    std::ifstream in(o.file);
    if (!in) throw Error(ErrorCode::ParseError, "file '" + o.file + "': cannot open the file");
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) texts.push_back(line);  // blank lines are no texts
      if (texts.size() > kMaxRequests) {
        throw UsageError{"embed: more than " + std::to_string(kMaxRequests) + " texts in '" + o.file + "'"};
      }
    }
  }
  if (texts.empty()) throw UsageError{"embed: no text: give --text TEXT (repeatable) or --file FILE (one text a line)"};
  return texts;
}

// The folder --format npy writes into, made if missing.
std::filesystem::path npy_dir(const std::string& output) {
  std::filesystem::path dir = output.empty() ? "." : output;
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw Error(ErrorCode::InvalidArgument, "embed: -o '" + output + "' is a file; --format npy writes into a folder");
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorCode::InvalidArgument, "embed: cannot create the folder '" + dir.string() + "': " + ec.message());
  return dir;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
}

int run_embed(const EmbedOptions& o) {
  check_input_file("model", o.model);
  std::filesystem::path dir;
  if (o.format == "npy") dir = npy_dir(o.output);
  const LadderSpec spec = parse_ladder_spec(o.ladder);
  const std::vector<std::string> texts = read_texts(o);
  Model model = load_cli_model(o.model, LoadFlags{});
  try {
    TextEmbedder::check_model(model);  // before the vocab, which a model of another kind lacks
  } catch (const Error& e) {
    throw Error(ErrorCode::Unsupported, "embed: '" + o.model + "': " + e.what());
  }
  const std::string vocab = o.vocab.empty() ? (std::filesystem::path(o.model).parent_path() / "vocab.json").string() : o.vocab;
  check_input_file("vocab", vocab);
  const text::UnigramTokenizer tok = text::UnigramTokenizer::load(vocab);

  // The ladder is fitted to the texts' token counts (--ladder exact, optimal:K), so count first.
  std::vector<uint64_t> lengths;
  for (size_t i = 0; i < texts.size(); ++i) {
    lengths.push_back(tok.encode(texts[i]).size());
    if (lengths.back() == 0) {
      throw Error(ErrorCode::InvalidArgument, "embed: text " + std::to_string(i + 1) + " ('" + printable(texts[i]) + "') has no tokens");
    }
  }
  TextEmbedderOptions options;
  options.ladder = ladder_for(spec, lengths);
  options.device = o.device == "reference" ? Device::Reference : Device::Cpu;
  options.active_extent = spec.active;
  const std::vector<Range> ladder = options.ladder;
  TextEmbedder embedder(std::move(model), tok, std::move(options));
  // A model without a padding mask (USE Lite) gives another embedding when padded: the embedder
  // runs a text the cache would pad at its exact length instead, and says so once.
  embedder.on_exact_fallback([](const std::string& message) { std::cerr << "embed: " << message << '\n'; });
  for (size_t i = 0; i < texts.size(); ++i) {
    const uint64_t last = ladder.back().end - 1;
    bool covered = false;
    for (const Range& r : ladder) covered = covered || (lengths[i] >= r.start && lengths[i] < r.end);
    if (!covered) {
      throw Error(ErrorCode::OutOfRange, "embed: text " + std::to_string(i + 1) + " has " + std::to_string(lengths[i]) +
                                             " tokens, " + (lengths[i] > last ? "past every bucket" : "in no bucket") +
                                             " of --ladder " + o.ladder + " (" + ladder_to_string(ladder) +
                                             "); give a ladder that reaches it");
    }
  }
  std::vector<Embedded> out;
  std::vector<TextEmbedding> embedded = embedder.embed(texts);
  for (size_t i = 0; i < texts.size(); ++i) {
    TextEmbedding& e = embedded[i];
    out.push_back({texts[i], e.tokens, e.bucket, std::string(to_string(e.mode)), std::move(e.vector)});
  }
  std::vector<std::vector<double>> sim;
  if (o.similarity) {
    for (const Embedded& a : out) {
      sim.emplace_back();
      for (const Embedded& b : out) sim.back().push_back(cosine(a.vector, b.vector));
    }
  }

  const size_t width = out[0].vector.size();
  if (o.format == "npy") {
    std::vector<float> all;
    for (const Embedded& e : out) all.insert(all.end(), e.vector.begin(), e.vector.end());
    const std::string path = (dir / "embeddings.npy").string();
    write_npy(path, {static_cast<int64_t>(out.size()), static_cast<int64_t>(width)}, all);
    std::cout << "wrote " << path << '\n';
    if (o.similarity) {
      std::vector<float> flat;
      for (const auto& row : sim) flat.insert(flat.end(), row.begin(), row.end());
      const std::string spath = (dir / "similarity.npy").string();
      write_npy(spath, {static_cast<int64_t>(out.size()), static_cast<int64_t>(out.size())}, flat);
      std::cout << "wrote " << spath << '\n';
    }
    return 0;
  }
  if (o.format == "json") {
    nlohmann::json j = {{"model", embedder.model().name()}, {"ladder", o.ladder}, {"texts", nlohmann::json::array()}};
    for (const Embedded& e : out) {
      j["texts"].push_back({{"text", e.text}, {"tokens", e.tokens}, {"bucket", e.bucket}, {"mode", e.mode}, {"embedding", e.vector}});
    }
    if (o.similarity) j["similarity"] = sim;
    std::cout << j.dump() << '\n';
    return 0;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const Embedded& e = out[i];
    std::cout << "text " << i + 1 << ": " << e.tokens << " tokens, bucket " << e.bucket << " ("
              << e.mode << "): " << printable(e.text, 60) << '\n';
    for (size_t k = 0; k < e.vector.size(); ++k) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", e.vector[k]);
      std::cout << buf << ((k + 1) % 8 == 0 || k + 1 == e.vector.size() ? '\n' : ' ');
    }
  }
  if (o.similarity) {
    std::cout << "cosine similarity\n";
    for (const auto& row : sim) {
      for (size_t k = 0; k < row.size(); ++k) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4f", row[k]);
        std::cout << buf << (k + 1 == row.size() ? '\n' : ' ');
      }
    }
  }
  return 0;
}

}  // namespace

Command add_embed(CLI::App& app) {
  auto o = std::make_shared<EmbedOptions>();
  CLI::App* cmd = app.add_subcommand("embed", "Sentence embeddings of texts (a model of token ids and its vocab.json)");
  cmd->add_option("model", o->model, "Model file (USE Lite's model.json, with vocab.json beside it)")->required();
  cmd->add_option("--text", o->texts, "A text to embed (repeatable)")->allow_extra_args(false);
  cmd->add_option("--file", o->file, "A file of texts, one a line (blank lines skipped)");
  cmd->add_option("--vocab", o->vocab, "The tokenizer's vocab.json (default: vocab.json beside the model)");
  cmd->add_option("--ladder", o->ladder, "Bucket ladder of the cache (e.g. pow2:8:512+active, exact)")
      ->check([](const std::string& s) {
        try {
          parse_ladder_spec(s);
        } catch (const UsageError& e) {
          return e.message;
        }
        return std::string();
      })
      ->capture_default_str();
  cmd->add_flag("--similarity", o->similarity, "Also print the cosine similarity of every pair of texts");
  cmd->add_option("--format", o->format, "Output: text, json, or npy files")->check(CLI::IsMember({"text", "json", "npy"}))->capture_default_str();
  cmd->add_option("--output,-o", o->output, "Folder for --format npy: embeddings.npy (and similarity.npy)");
  cmd->add_option("--device", o->device, "Backend")->check(CLI::IsMember({"cpu", "reference"}))->capture_default_str();
  return [cmd, o]() { return cmd->parsed() ? run_embed(*o) : -1; };
}

}  // namespace rungs::cli

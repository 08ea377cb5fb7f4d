// SPDX-License-Identifier: Apache-2.0
// Whole-graph benchmark: the bundled mlp and encoder at extents 16, 64 and 256, fused vs
// fusion = false, one thread and all hardware threads, on Device::Cpu. Outputs of the fused and
// unfused compiles are checked equal (1e-4 relative) before timing.
//
//   build/native-bench/bench/graphs/rungs_graph_bench [--benchmark_filter=encoder]
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rungs/rungs.hpp"

namespace {

struct Prepared {
  rungs::CompiledGraph graph;
  std::vector<std::vector<float>> data;
  std::vector<std::string> names;
};

const rungs::Model& model(const std::string& name) {
  static std::map<std::string, rungs::Model> models;
  auto it = models.find(name);
  if (it == models.end())
    it = models.emplace(name, rungs::load_model(std::string(RUNGS_SOURCE_DIR) + "/examples/models/" + name + ".json")).first;
  return it->second;
}

std::unique_ptr<Prepared> prepare(const std::string& name, uint64_t extent, bool fusion, int threads) {
  auto [module, params] = model(name).build(extent);
  rungs::CompileOptions opt;
  opt.fusion = fusion;
  opt.threads = threads;
  auto p = std::make_unique<Prepared>(Prepared{rungs::Session(rungs::Device::Cpu).compile_hir(module, opt), {}, {}});
  for (const auto& [n, v] : params) p->graph.set_param(n, v);
  uint32_t state = 12345;
  for (const auto& in : model(name).inputs(extent)) {
    int64_t n = 1;
    for (auto d : in.shape) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) {
      state = state * 1664525u + 1013904223u;
      x = in.name == "mask" ? 1.f : in.name == "ids" ? static_cast<float>(state % 1000) : (state >> 8) / 8388608.f - 1.f;
    }
    p->names.push_back(in.name);
    p->data.push_back(std::move(v));
  }
  return p;
}

std::vector<rungs::NamedInput> named(const Prepared& p) {
  std::vector<rungs::NamedInput> in;
  for (size_t i = 0; i < p.names.size(); ++i) in.push_back({p.names[i], p.data[i]});
  return in;
}

void check_fused_matches(const std::string& name, uint64_t extent) {
  auto a = prepare(name, extent, true, 1), b = prepare(name, extent, false, 1);
  auto oa = a->graph.run(named(*a)), ob = b->graph.run(named(*b));
  for (size_t k = 0; k < oa.size(); ++k)
    for (size_t i = 0; i < oa[k].size(); ++i)
      if (std::fabs(oa[k][i] - ob[k][i]) > 1e-4 * std::max(1.f, std::fabs(ob[k][i]))) {
        std::fprintf(stderr, "%s@%llu: fused and unfused outputs differ\n", name.c_str(), (unsigned long long)extent);
        std::exit(1);
      }
}

void BM_Graph(benchmark::State& state, std::string name, bool fusion, int threads) {
  const uint64_t extent = static_cast<uint64_t>(state.range(0));
  auto p = prepare(name, extent, fusion, threads);
  auto in = named(*p);
  for (auto _ : state) benchmark::DoNotOptimize(p->graph.run(in));
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(extent), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(p->graph.report().isa + (fusion ? " fused" : " unfused") + " threads=" + std::to_string(p->graph.report().threads));
}

int register_all() {
  for (const char* name : {"mlp", "encoder"}) {
    for (uint64_t e : {16, 64, 256}) check_fused_matches(name, e);
    for (bool fusion : {true, false})
      for (int threads : {1, 0}) {
        std::string label = std::string(name) + (fusion ? "/fused" : "/unfused") + (threads == 1 ? "/1thread" : "/allthreads");
        benchmark::RegisterBenchmark(label.c_str(), BM_Graph, std::string(name), fusion, threads)
            ->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond)->UseRealTime();
      }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

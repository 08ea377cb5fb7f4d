// SPDX-License-Identifier: Apache-2.0
// native_cli/commands.hpp: each command registers its options on the app and returns what runs it.
#pragma once

#include <functional>
#include <memory>

namespace CLI {
class App;
}

namespace rungs::cli {

using Command = std::function<int()>;

// `rungs info [--format text|json]`: version, the ISAs this CPU and OS support, the ISA the Cpu
// kernels dispatched to, hardware threads.
Command add_info(CLI::App& app);
// `rungs run MODEL [--rows N] [--ids FILE|--input FILE.json|--input NAME=FILE.npy...] [--ladder SPEC]
//  [--bucket-dim NAME] [--fix NAME=VALUE]... [--format text|json|npy] [-o DIR]`
Command add_run(CLI::App& app);
// `rungs bench MODEL --ladder SPEC (--trace FILE|--synthetic ...) [--compare ...] [--active-extent]`
Command add_bench(CLI::App& app);
// `rungs plan (--trace FILE|--synthetic ...) --buckets K`
Command add_plan(CLI::App& app);
// `rungs inspect MODEL --extent E [--dump-passes]`
Command add_inspect(CLI::App& app);
// `rungs embed MODEL (--text TEXT...|--file FILE) [--vocab PATH] [--ladder SPEC] [--similarity]
//  [--format text|json|npy] [-o DIR]`: sentence embeddings (docs/tfjs.md)
Command add_embed(CLI::App& app);
// `rungs trace lognormal --median M --count C --max X --seed S`
Command add_trace(CLI::App& app);

}  // namespace rungs::cli

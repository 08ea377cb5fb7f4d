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

}  // namespace rungs::cli

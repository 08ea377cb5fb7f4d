// wasm/bindings/register.cpp: Embind registration of the npm module's API (api.md section 7:
// camelCase methods, the C++ class names). Only registration here; the adapters do the work.
#include <emscripten/bind.h>

#include "adapters.hpp"

using namespace emscripten;

EMSCRIPTEN_BINDINGS(rungs) {
  using namespace rungs;
  using namespace rungs::wasm;

  function("version", &wasm::version);
  function("cpuIsa", &cpu_isa);

  enum_<Device>("Device").value("Cpu", Device::Cpu).value("Reference", Device::Reference);

  value_object<Value>("Value").field("id", &Value::id);

  class_<Graph>("Graph")
      .constructor<>()
      .function("input", &graph_input)
      .function("param", &graph_param)
      .function("relu", &graph_relu)
      .function("output", &graph_output)
      .function("shape", &graph_shape)
      .function("nodeCount", &Graph::node_count)
      .function("toText", &graph_to_text);

  class_<CompiledGraph>("CompiledGraph")
      .function("run", &compiled_run)
      .function("setParam", &compiled_set_param)
      .function("inputNames", &compiled_input_names)
      .function("outputNames", &compiled_output_names)
      .function("inputShape", &compiled_input_shape)
      .function("outputShape", &compiled_output_shape)
      .function("report", &compiled_report);

  class_<Session>("Session").constructor<Device>().function("compile", &session_compile);
}

#include "rungs/version.hpp"

namespace rungs {

std::string_view version() { return RUNGS_VERSION; }

}  // namespace rungs

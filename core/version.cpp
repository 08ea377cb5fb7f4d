// SPDX-License-Identifier: Apache-2.0
#include "rungs/version.hpp"

namespace rungs {

std::string_view version() { return RUNGS_VERSION; }

}  // namespace rungs

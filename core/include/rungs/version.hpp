// SPDX-License-Identifier: Apache-2.0
// rungs/version.hpp
#pragma once

#include <string_view>

namespace rungs {

// The library version, "MAJOR.MINOR.PATCH".
std::string_view version();

}  // namespace rungs

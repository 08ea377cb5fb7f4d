// SPDX-License-Identifier: Apache-2.0
// rungs/rungs.hpp: the umbrella header. Everything is in namespace rungs.
#pragma once

#include "rungs/cache.hpp"
#include "rungs/embedder.hpp"
#include "rungs/error.hpp"
#include "rungs/graph.hpp"
#include "rungs/hir.hpp"
#include "rungs/isa.hpp"
#include "rungs/ladder.hpp"
#include "rungs/model.hpp"
#include "rungs/session.hpp"
#include "rungs/text.hpp"
#include "rungs/types.hpp"
#include "rungs/version.hpp"

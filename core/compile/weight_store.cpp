// SPDX-License-Identifier: Apache-2.0
#include "core/compile/weight_store.hpp"

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace rungs::compile {
namespace {

// A fast 64-bit content hash (four independent multiply-mix lanes, so the multiplies overlap);
// collisions are resolved by comparing bytes.
uint64_t content_hash(std::span<const float> v) {
  constexpr uint64_t k1 = 0xBF58476D1CE4E5B9ull, k2 = 0x94D049BB133111EBull;
  uint64_t lane[4] = {0x9E3779B97F4A7C15ull ^ v.size(), k1, k2, 0xC2B2AE3D27D4EB4Full};
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
  const size_t n = v.size_bytes();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, bytes + i + 8 * l, 8);
      lane[l] = (lane[l] ^ w) * k1;
      lane[l] ^= lane[l] >> 31;
    }
  }
  uint64_t h = lane[0] ^ (lane[1] * k2) ^ (lane[2] * k1) ^ (lane[3] >> 7) ^ n;
  for (; i < n; ++i) h = (h ^ bytes[i]) * 0x100000001B3ull;
  h ^= h >> 29;
  return h * k2;
}

struct Store {
  std::mutex m;
  std::unordered_map<uint64_t, std::vector<std::weak_ptr<const AlignedBuffer>>> by_hash;
};

Store& store() {
  static Store* s = new Store;  // never destroyed: graphs may outlive static destruction order
  return *s;
}

}  // namespace

std::shared_ptr<const AlignedBuffer> intern_weights(std::span<const float> values) {
  const uint64_t h = content_hash(values);
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.m);
  auto& list = s.by_hash[h];
  std::shared_ptr<const AlignedBuffer> found;
  for (auto it = list.begin(); it != list.end();) {
    std::shared_ptr<const AlignedBuffer> b = it->lock();
    if (!b) {
      it = list.erase(it);  // its last user is gone
      continue;
    }
    if (!found && b->size() == values.size() && std::memcmp(b->data(), values.data(), values.size_bytes()) == 0)
      found = std::move(b);
    ++it;
  }
  if (found) return found;
  auto fresh = std::make_shared<AlignedBuffer>(values.size());  // (zeroed once; weights are uploaded rarely)
  std::copy(values.begin(), values.end(), fresh->data());
  list.push_back(fresh);
  return fresh;
}

}  // namespace rungs::compile

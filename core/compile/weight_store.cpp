#include "core/compile/weight_store.hpp"

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace rungs::compile {
namespace {

// A fast 64-bit content hash (word-wise multiply-mix); collisions are resolved by comparing bytes.
uint64_t content_hash(std::span<const float> v) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (v.size() * 0xC2B2AE3D27D4EB4Full);
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
  const size_t n = v.size_bytes();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes + i, 8);
    h = (h ^ (w * 0xBF58476D1CE4E5B9ull)) * 0x94D049BB133111EBull;
    h ^= h >> 29;
  }
  for (; i < n; ++i) h = (h ^ bytes[i]) * 0x100000001B3ull;
  return h;
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
  auto fresh = std::make_shared<AlignedBuffer>(values.size());
  std::copy(values.begin(), values.end(), fresh->data());
  list.push_back(fresh);
  return fresh;
}

}  // namespace rungs::compile

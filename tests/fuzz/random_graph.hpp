// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/random_graph.hpp: fuzz bytes -> a small random Graph with its inputs and params.
//
// A few ops of rungs::Graph on small shapes (every dim <= 8), operands picked among the values
// built so far. A step the builder refuses (rungs::Error: incompatible shapes, a bad axis) is
// skipped, so the builder's own checks are fuzzed too. Ops whose result is ill-conditioned are
// guarded (exp(tanh x), log(1 + |x|), x / (1 + |y|)) so that Device::Cpu and Device::Reference
// can be held to the documented tolerance; NaN and Inf enter only through `special` inputs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "rungs/rungs.hpp"

namespace rungs::fuzz {

struct RandomCase {
  Graph graph;
  std::map<std::string, std::vector<float>> inputs;
  ParamMap params;
  bool special = false;  // inputs may hold NaN / Inf: check determinism, not agreement
};

class GraphMaker {
 public:
  // perturb: every value the steps make (inputs too) is multiplied by a constant of 1 +- 2^-20
  // (fuzz::nudged) before later steps use it: the same graph with a relative error injected after
  // every op, as rounding does. The bytes are read exactly as without it, so the two graphs have
  // the same steps.
  GraphMaker(FuzzInput& in, bool perturb, Nudge how = Nudge::Alternating) : in_(in), perturb_(perturb), how_(how) {}

  RandomCase make() {
    c_.special = in_.below(8) == 0;
    const int n_inputs = 1 + static_cast<int>(in_.below(2));
    for (int i = 0; i < n_inputs; ++i)
      pool_.push_back(perturbed(new_input("x" + std::to_string(i), random_shape(i == 0 ? 3 : 0))));
    const int steps = 1 + static_cast<int>(in_.below(8));
    for (int s = 0; s < steps && !in_.empty(); ++s) {
      try {
        pool_.push_back(perturbed(step()));
      } catch (const Error&) {
        // the builder refused this combination: skip the step (the graph is unchanged)
      }
    }
    c_.graph.output("out", pool_.back());
    if (pool_.size() > 1 && in_.flag()) {
      Value aux = pick();
      if (aux.id != pool_.back().id) c_.graph.output("aux", aux);
    }
    return std::move(c_);
  }

 private:
  Graph& g() { return c_.graph; }
  Value pick() { return pool_[in_.below(static_cast<uint32_t>(pool_.size()))]; }
  int64_t dim() { return in_.range(1, 6); }

  // rank in [1, 3] (or `rank` when > 0), dims in [1, 6]
  Shape random_shape(int rank = 0) {
    const int r = rank > 0 ? rank : static_cast<int>(in_.range(1, 3));
    Shape s;
    for (int i = 0; i < r; ++i) s.push_back(dim());
    return s;
  }

  std::vector<float> values(int64_t n, bool special) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = in_.value(special);
    return v;
  }

  Value new_input(const std::string& name, Shape shape) {
    Value v = g().input(name, shape);
    c_.inputs[name] = values(shape_numel(shape), c_.special);
    return v;
  }

  Value new_param(Shape shape) {
    const std::string name = "p" + std::to_string(params_++);
    Value v = g().param(name, shape);
    c_.params[name] = values(shape_numel(shape), false);
    return v;
  }

  Value perturbed(Value v) {
    if (!perturb_) return v;
    const Shape s = g().shape(v);
    // Random signs: each op's its own (a phase per nudge, past the params' 0..). Alternating: one
    // pattern after every op.
    const size_t phase = how_ == Nudge::Random ? 1000 + nudges_++ : 0;
    return g().mul(v, g().constant(nudged(std::vector<float>(static_cast<size_t>(shape_numel(s)), 1.f), phase, how_), s));
  }

  Value one() { return g().constant({1.f}, {1}); }
  int axis(size_t rank) { return static_cast<int>(in_.range(-static_cast<int64_t>(rank), static_cast<int64_t>(rank) - 1)); }

  Value step() {
    Value x = pick();
    const Shape xs = g().shape(x);
    if (xs.empty()) return g().reshape(x, {1});  // a full reduction left a scalar: the steps below need an axis
    switch (in_.below(14)) {
      case 0: {
        switch (in_.below(8)) {
          case 0: return g().relu(x);
          case 1: return g().gelu(x);
          case 2: return g().gelu_tanh(x);
          case 3: return g().silu(x);
          case 4: return g().sigmoid(x);
          case 5: return g().tanh(x);
          case 6: return g().neg(x);
          default: return g().abs(x);
        }
      }
      case 1: {  // guarded: bounded arguments, away from the singular points
        switch (in_.below(4)) {
          case 0: return g().exp(g().tanh(x));
          case 1: return g().log(g().add(g().abs(x), one()));
          case 2: return g().sqrt(g().add(g().abs(x), one()));
          default: return g().rsqrt(g().add(g().abs(x), one()));
        }
      }
      case 2: {
        Value y = in_.flag() ? pick() : g().constant(values(xs.back(), false), {xs.back()});
        if (in_.flag()) std::swap(x, y);
        switch (in_.below(5)) {
          case 0: return g().add(x, y);
          case 1: return g().sub(x, y);
          case 2: return g().mul(x, y);
          case 3: return g().maximum(x, y);
          default: return g().minimum(x, y);
        }
      }
      case 3: return g().div(x, g().add(g().abs(pick()), one()));
      case 4: {
        if (in_.flag()) return g().matmul(x, pick());
        Shape w{xs.back(), dim()};
        return g().matmul(x, in_.flag() ? new_param(w) : g().constant(values(shape_numel(w), false), w));
      }
      case 5: return g().softmax(x, axis(xs.size()));
      case 6: {
        Value gamma = new_param({xs.back()});
        if (in_.flag()) return g().rms_norm(x, gamma);
        return g().layer_norm(x, gamma, new_param({xs.back()}));
      }
      case 7: {
        std::vector<int> axes{axis(xs.size())};
        if (in_.flag()) axes.push_back(axis(xs.size()));
        const bool keep = in_.flag();
        switch (in_.below(3)) {
          case 0: return g().sum(x, axes, keep);
          case 1: return g().mean(x, axes, keep);
          default: return g().max(x, axes, keep);
        }
      }
      case 8: {
        switch (in_.below(3)) {
          case 0: return g().reshape(x, {-1});
          case 1: return g().reshape(x, {-1, xs.back()});
          default: return g().reshape(x, {1, -1, dim()});
        }
      }
      case 9: {
        std::vector<int> perm(xs.size());
        for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
        for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[in_.below(static_cast<uint32_t>(i))]);
        return g().transpose(x, perm);
      }
      case 10: {
        const int a = axis(xs.size());
        const int64_t d = xs[static_cast<size_t>(a < 0 ? a + static_cast<int>(xs.size()) : a)];
        const int64_t start = in_.range(0, d - 1);
        return g().slice(x, a, start, in_.range(1, d - start));
      }
      case 11: return g().concat({x, pick()}, axis(xs.size()));
      case 12: {
        const int64_t vocab = dim();
        Shape ids_shape = random_shape();
        Value ids = g().input("ids" + std::to_string(ids_++), ids_shape);
        std::vector<float>& v = c_.inputs["ids" + std::to_string(ids_ - 1)];
        v.resize(static_cast<size_t>(shape_numel(ids_shape)));
        for (float& id : v) id = static_cast<float>(in_.range(-1, vocab));  // -1 and vocab: outside, a row of zeros
        return g().gather(new_param({vocab, dim()}), ids);
      }
      default: {
        Value k = in_.flag() ? pick() : x, v = in_.flag() ? pick() : x;
        AttentionOptions opt;
        opt.heads = static_cast<int>(in_.range(1, 3));
        opt.causal = in_.flag();
        if (in_.flag()) opt.scale = in_.value();
        if (xs.size() == 3 && in_.flag()) {
          const Shape ks = g().shape(k);
          const std::string name = "mask" + std::to_string(masks_++);
          Value m = g().input(name, {xs[0], ks.size() == 3 ? ks[1] : 1});
          std::vector<float>& mv = c_.inputs[name];
          mv.resize(static_cast<size_t>(shape_numel(g().shape(m))));
          for (float& b : mv) b = in_.flag() ? 1.f : 0.f;  // all-zero rows happen: they must give zeros
          opt.key_mask = m;
        }
        return g().attention(x, k, v, opt);
      }
    }
  }

  FuzzInput& in_;
  bool perturb_ = false;
  Nudge how_ = Nudge::Alternating;
  size_t nudges_ = 0;  // perturbed() calls so far
  RandomCase c_;
  std::vector<Value> pool_;
  int params_ = 0, ids_ = 0, masks_ = 0;
};

inline RandomCase random_case(FuzzInput& in, bool perturb = false, Nudge how = Nudge::Alternating) {
  return GraphMaker(in, perturb, how).make();
}

}  // namespace rungs::fuzz

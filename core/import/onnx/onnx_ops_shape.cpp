// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_ops_shape.cpp: the Builder's constant and shape ops (onnx_builder.hpp).
//
// Constants and shapes: Identity, Constant, Shape, ConstantOfShape, Range, Cast, Reshape,
// Unsqueeze / Squeeze / Flatten, Transpose, Concat, Gather, Slice, Split and Expand; each folds
// when its inputs are constant (shape arithmetic) and maps onto Graph ops otherwise.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/import/onnx/onnx_builder.hpp"

namespace rungs::onnx_import::detail {

void Builder::identity() {
  if (node_->op == "Dropout") {
    const bool training = has_input(2) && (!in(2).is_const() || in(2).c.v.at(0) != 0);
    if (training || attr_i("is_test", 1) == 0) {
      error(ErrorCode::Unsupported, "Dropout in training mode is not supported (rungs runs inference)");
    }
  }
  Val v = in(0);
  set(0, v);
  if (node_->op == "Dropout" && node_->outputs.size() > 1 && !node_->outputs[1].empty()) {
    Tensor mask = checked_tensor(Kind::Bool, v.shape);
    std::fill(mask.v.begin(), mask.v.end(), 1.0);
    set(1, make_const(std::move(mask)));
  }
}

void Builder::constant() {
  Tensor t;
  if (const Attr* a = attr("value"); a && a->t) {
    t = *a->t;
  } else if (const Attr* a = attr("value_float")) {
    t = {Kind::Float, {}, {a->f}};
  } else if (const Attr* a = attr("value_int")) {
    t = {Kind::Int, {}, {static_cast<double>(a->i)}};
  } else if (const Attr* a = attr("value_floats")) {
    t = {Kind::Float, {static_cast<int64_t>(a->floats.size())}, a->floats};
  } else if (const Attr* a = attr("value_ints")) {
    t = {Kind::Int, {static_cast<int64_t>(a->ints.size())}, {}};
    for (int64_t i : a->ints) t.v.push_back(static_cast<double>(i));
  } else {
    error(ErrorCode::Unsupported, "a Constant needs a value, value_float(s) or value_int(s) attribute");
  }
  set(0, make_const(std::move(t)));
}

void Builder::shape_op() {
  const Shape& s = in(0).shape;
  const auto r = static_cast<int64_t>(s.size());
  int64_t start = attr_i("start", 0), end = attr_i("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  Tensor t{Kind::Int, {end - start}, {}};
  for (int64_t i = start; i < end; ++i) t.v.push_back(static_cast<double>(s[static_cast<size_t>(i)]));
  set(0, make_const(std::move(t)));
}

void Builder::constant_of_shape() {
  const std::vector<int64_t> dims = ints_in(0, "shape");
  Tensor fill{Kind::Float, {}, {0.0}};
  if (const Attr* a = attr("value"); a && a->t) fill = *a->t;
  if (fill.v.size() != 1) error(ErrorCode::ParseError, "value must hold one element");
  Tensor t = checked_tensor(fill.kind, dims);
  std::fill(t.v.begin(), t.v.end(), fill.v[0]);
  set(0, make_const(std::move(t)));
}

void Builder::range() {
  const double start = const_in(0, "start").v.at(0), limit = const_in(1, "limit").v.at(0),
               delta = const_in(2, "delta").v.at(0);
  if (delta == 0) error(ErrorCode::InvalidArgument, "delta is 0");
  const double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (count > static_cast<double>(kMaxFoldElements)) {
    error(ErrorCode::OutOfRange, "Range of " + std::to_string(count) + " values is past the limit");
  }
  Tensor t = checked_tensor(in(0).kind, {static_cast<int64_t>(count)});
  for (size_t i = 0; i < t.v.size(); ++i) t.v[i] = round_to(t.kind, start + static_cast<double>(i) * delta);
  set(0, make_const(std::move(t)));
}

void Builder::cast() {
  const int to = static_cast<int>(attr_i("to", kFloat));
  if (!supported_type(to)) error(ErrorCode::Unsupported, "Cast to " + data_type_name(to) + " is not supported");
  const Kind kind = kind_of(to);
  Val v = in(0);
  if (v.is_const()) {
    for (double& x : v.c.v) x = round_to(kind, x);
    v.c.kind = kind;
    v.kind = kind;
    return set(0, v);
  }
  // Runtime values are f32: to float is exact, int/bool to int keeps the values, to bool is
  // x != 0. Float to int would need rounding toward zero, which rungs has no op for.
  if (kind == Kind::Int && v.kind == Kind::Float) {
    error(ErrorCode::Unsupported, "Cast of a float computed at run time to " + data_type_name(to) +
                                      " is not supported (rungs computes in f32 and has no truncation op)");
  }
  if (kind == Kind::Bool && v.kind != Kind::Bool) {
    v = make_rt(graph_->logical_not(graph_->logical_not(mat(v))), Kind::Bool, v.origin);
  }
  v.kind = kind;
  set(0, v);
}

// A runtime or weight value reshaped, keeping its origin (an input reshaped is still that input).
Val Builder::reshape_val(const Val& x, const Shape& s) {
  if (shape_numel(s) != shape_numel(x.shape)) {
    error(ErrorCode::ShapeMismatch, "cannot reshape " + shape_to_string(x.shape) + " to " + shape_to_string(s));
  }
  if (x.is_const()) {
    Val v = x;
    v.c.shape = s;
    v.shape = s;
    return v;
  }
  if (s == x.shape) return x;
  if (x.where == Val::Where::Runtime && !x.unreshaped.second.empty() && x.unreshaped.second == s) {
    Val v = make_rt(x.unreshaped.first, x.kind, x.origin);  // a reshape back: the value itself
    v.lo = x.lo;
    return v;
  }
  const Value from = mat(x);
  Val v = make_rt(graph_->reshape(from, s), x.kind, x.origin);
  v.lo = x.lo;
  if (x.where == Val::Where::Runtime) v.unreshaped = {from, x.shape};
  return v;
}

void Builder::reshape_op() {
  const Val& x = in(0);
  const std::vector<int64_t> want = ints_in(1, "shape");
  const bool allowzero = attr_i("allowzero", 0) != 0;
  Shape s;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    int64_t d = want[i];
    if (d == 0 && !allowzero) {
      if (i >= x.shape.size()) error(ErrorCode::ShapeMismatch, "shape " + ints_text(want) + " copies dim " + std::to_string(i) + " of " + shape_to_string(x.shape));
      d = x.shape[i];
    }
    if (d == -1) {
      if (infer >= 0) error(ErrorCode::ShapeMismatch, "shape " + ints_text(want) + " has two -1");
      infer = static_cast<int>(i);
      s.push_back(1);
      continue;
    }
    if (d < 0) error(ErrorCode::ShapeMismatch, "shape " + ints_text(want) + " has a negative dim");
    // A product past int64 (found by fuzz_onnx): no real tensor has that many values.
    if (d > 0 && known > std::numeric_limits<int64_t>::max() / d) {
      error(ErrorCode::ShapeMismatch, "cannot reshape " + shape_to_string(x.shape) + " to " + ints_text(want));
    }
    known *= d;
    s.push_back(d);
  }
  const int64_t total = shape_numel(x.shape);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      error(ErrorCode::ShapeMismatch, "cannot reshape " + shape_to_string(x.shape) + " to " + ints_text(want));
    }
    s[static_cast<size_t>(infer)] = total / known;
  }
  set(0, reshape_val(x, s));
}

void Builder::reshape_like(const std::string& op) {
  const Val& x = in(0);
  Shape s = x.shape;
  if (op == "Flatten") {  // axis in [-r, r]
    int64_t ax = attr_i("axis", 1);
    if (ax < 0) ax += static_cast<int64_t>(s.size());
    const int axis = norm_axis(ax, s.size() + 1);
    int64_t a = 1, b = 1;
    for (size_t i = 0; i < s.size(); ++i) (static_cast<int>(i) < axis ? a : b) *= s[i];
    return set(0, reshape_val(x, {a, b}));
  }
  std::vector<int64_t> axes;
  bool given = false;
  if (g_.opset >= 13) {
    if (has_input(1)) axes = ints_in(1, "axes"), given = true;
  } else if (auto a = attr_ints("axes")) {
    axes = *a;
    given = true;
  }
  if (op == "Unsqueeze") {
    const size_t r = s.size() + axes.size();
    std::vector<bool> at(r, false);
    for (int64_t a : axes) at[static_cast<size_t>(norm_axis(a, r))] = true;
    Shape out;
    size_t k = 0;
    for (size_t i = 0; i < r; ++i) out.push_back(at[i] ? 1 : s.at(k++));
    return set(0, reshape_val(x, out));
  }
  std::vector<bool> drop(s.size(), false);
  if (!given) {
    for (size_t i = 0; i < s.size(); ++i) drop[i] = s[i] == 1;
  } else {
    for (int64_t a : axes) {
      const int ax = norm_axis(a, s.size());
      if (s[static_cast<size_t>(ax)] != 1) {
        error(ErrorCode::ShapeMismatch, "cannot squeeze axis " + std::to_string(a) + " of " + shape_to_string(s));
      }
      drop[static_cast<size_t>(ax)] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < s.size(); ++i)
    if (!drop[i]) out.push_back(s[i]);
  set(0, reshape_val(x, out));
}

void Builder::transpose() {
  const Val& x = in(0);
  std::vector<int64_t> perm;
  if (auto p = attr_ints("perm")) perm = *p;
  else
    for (size_t i = x.shape.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  if (perm.size() != x.shape.size()) error(ErrorCode::ShapeMismatch, "perm " + ints_text(perm) + " does not fit " + shape_to_string(x.shape));
  std::vector<int> p;
  for (int64_t a : perm) p.push_back(norm_axis(a, x.shape.size()));
  if (x.is_const()) {
    Shape s;
    for (int a : p) s.push_back(x.shape[static_cast<size_t>(a)]);
    Tensor t = checked_tensor(x.kind, s);
    const size_t r = s.size();
    std::vector<int64_t> in_stride(r, 1);
    for (size_t i = r; i-- > 1;) in_stride[i - 1] = in_stride[i] * x.shape[i];
    std::vector<int64_t> pos(r, 0);
    for (size_t k = 0; k < t.v.size(); ++k) {
      int64_t src = 0;
      for (size_t d = 0; d < r; ++d) src += pos[d] * in_stride[static_cast<size_t>(p[d])];
      t.v[k] = x.c.v[static_cast<size_t>(src)];
      for (size_t d = r; d-- > 0;) {
        if (++pos[d] < s[d]) break;
        pos[d] = 0;
      }
    }
    return set(0, make_const(std::move(t)));
  }
  set(0, make_rt(graph_->transpose(mat(x), p), x.kind));
}

// Concatenates constants along `axis`.
Tensor Builder::concat_tensors(const std::vector<const Tensor*>& ts, int axis) {
  Shape s = ts[0]->shape;
  // Scalars have no axis to join along (found by fuzz_onnx: s[0] of an empty shape).
  if (s.empty()) error(ErrorCode::ShapeMismatch, "cannot concatenate scalars (rank 0)");
  const auto a = static_cast<size_t>(axis);
  s[a] = 0;
  for (const Tensor* t : ts) {
    if (t->shape.size() != s.size()) error(ErrorCode::ShapeMismatch, "inputs of different ranks");
    for (size_t i = 0; i < s.size(); ++i)
      if (i != a && t->shape[i] != ts[0]->shape[i]) error(ErrorCode::ShapeMismatch, "shapes " + shape_to_string(ts[0]->shape) + " and " + shape_to_string(t->shape) + " differ off the axis");
    s[a] += t->shape[a];
  }
  Tensor out = checked_tensor(ts[0]->kind, s);
  int64_t outer = 1;
  for (size_t i = 0; i < a; ++i) outer *= s[i];
  size_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* t : ts) {
      const auto chunk = static_cast<size_t>(shape_numel(t->shape) / std::max<int64_t>(outer, 1));
      for (size_t j = 0; j < chunk; ++j) out.v[k++] = t->v[static_cast<size_t>(o) * chunk + j];
    }
  }
  return out;
}

void Builder::concat() {
  const size_t n = node_->inputs.size();
  if (n == 0) error(ErrorCode::ParseError, "needs at least one input");
  const int axis = norm_axis(attr_i("axis", 0), in(0).shape.size());
  if (all_const()) {
    std::vector<const Tensor*> ts;
    for (size_t i = 0; i < n; ++i) ts.push_back(&in(i).c);
    Tensor t = concat_tensors(ts, axis);
    for (size_t i = 0; i < n; ++i)
      if (in(i).kind == Kind::Float) t.kind = Kind::Float;
    return set(0, make_const(std::move(t)));
  }
  std::vector<Value> xs;
  Kind kind = Kind::Bool;
  for (size_t i = 0; i < n; ++i) {
    if (shape_numel(in(i).shape) == 0) continue;  // exporters concatenate empty tensors
    xs.push_back(mat(in(i)));
    if (in(i).kind == Kind::Float || kind == Kind::Float) kind = Kind::Float;
    else kind = Kind::Int;
  }
  set(0, make_rt(xs.size() == 1 ? xs[0] : graph_->concat(xs, axis), kind));
}

// x[start:start+len] along axis for a runtime or weight value.
Value Builder::slice_rt(Value x, int axis, int64_t start, int64_t len) {
  const Shape s = graph_->shape(x);
  if (start == 0 && len == s[static_cast<size_t>(axis)]) return x;
  return graph_->slice(x, axis, start, len);
}

// x[..., ids, ...] along `axis` for ids in [0, dim) computed at run time (or constant): rows of
// a [dim, rest] table (an embedding lookup when x is a weight), another axis moved to the front
// first and back after. The result has shape xs[:axis] + ids_shape + xs[axis+1:].
Value Builder::take(Value x, const Shape& xs, int axis, Value ids, const Shape& ids_shape) {
  const size_t r = xs.size();
  const auto a = static_cast<size_t>(axis);
  const int64_t dim = xs[a];
  Shape moved{dim};
  if (axis != 0) {
    std::vector<int> perm{axis};
    for (size_t i = 0; i < r; ++i)
      if (i != a) perm.push_back(static_cast<int>(i));
    x = graph_->transpose(x, perm);
  }
  for (size_t i = 0; i < r; ++i)
    if (i != a) moved.push_back(xs[i]);
  const int64_t rest = dim == 0 ? 0 : shape_numel(xs) / dim;
  if (r != 2) x = graph_->reshape(x, {dim, rest});
  Value y = graph_->gather(x, ids);
  Shape ys(ids_shape);
  ys.insert(ys.end(), moved.begin() + 1, moved.end());
  y = graph_->reshape(y, ys);
  if (axis != 0) {  // put the ids' dims at `axis`
    const int q = static_cast<int>(ids_shape.size());
    std::vector<int> back;
    for (int i = 0; i < axis; ++i) back.push_back(q + i);
    for (int i = 0; i < q; ++i) back.push_back(i);
    for (int i = axis; i < static_cast<int>(r) - 1; ++i) back.push_back(q + i);
    y = graph_->transpose(y, back);
  }
  return y;
}

void Builder::gather() {
  const Val& data = in(0);
  const Val& idx = in(1);
  if (data.shape.empty()) error(ErrorCode::ShapeMismatch, "data must have rank >= 1, got a scalar");
  const int axis = norm_axis(attr_i("axis", 0), data.shape.size());
  const auto a = static_cast<size_t>(axis);
  const int64_t dim = data.shape.at(a);
  Shape out_shape(data.shape.begin(), data.shape.begin() + axis);
  out_shape.insert(out_shape.end(), idx.shape.begin(), idx.shape.end());
  out_shape.insert(out_shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  if (idx.is_const()) {
    std::vector<int64_t> ids;
    for (double d : idx.c.v) {
      const int64_t given = int_of(d, "indices");
      int64_t i = given;
      if (i < 0) i += dim;
      if (i < 0 || i >= dim) error(ErrorCode::OutOfRange, "index " + std::to_string(given) + " is outside [" + std::to_string(-dim) + ", " + std::to_string(dim) + ")");
      ids.push_back(i);
    }
    if (data.is_const()) {
      Tensor t = checked_tensor(data.kind, out_shape);
      int64_t outer = 1, inner = 1;
      for (size_t i = 0; i < a; ++i) outer *= data.shape[i];
      for (size_t i = a + 1; i < data.shape.size(); ++i) inner *= data.shape[i];
      size_t k = 0;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t id : ids)
          for (int64_t j = 0; j < inner; ++j) t.v[k++] = data.c.v[static_cast<size_t>((o * dim + id) * inner + j)];
      return set(0, make_const(std::move(t)));
    }
    // Rows of a weight table at constant ids (position embeddings). Consecutive ids from 0 (the
    // usual Range(0, seq) or a sliced position-id buffer) are a prefix slice of the table, which
    // active extent can shorten (docs/active-extent.md); other ids an embedding lookup.
    if (data.where == Val::Where::Weight && axis == 0 && data.shape.size() == 2 && ids.size() > 1) {
      bool prefix = true;
      for (size_t i = 0; prefix && i < ids.size(); ++i) prefix = ids[i] == static_cast<int64_t>(i);
      if (prefix) {
        const auto n = static_cast<int64_t>(ids.size());
        return set(0, reshape_val(make_rt(graph_->slice(mat(data), 0, 0, n), data.kind), out_shape));
      }
      Tensor ti{Kind::Int, idx.shape, std::vector<double>(ids.begin(), ids.end())};
      Value y = graph_->gather(mat(data), mat(make_const(ti)));
      return set(0, make_rt(y, data.kind));
    }
    // Constant positions of a runtime value (first-token selection): slices.
    const Value x = mat(data);
    std::vector<Value> parts;
    for (size_t i = 0; i < ids.size();) {
      size_t j = i + 1;
      while (j < ids.size() && ids[j] == ids[j - 1] + 1) ++j;  // runs of consecutive ids: one slice
      parts.push_back(slice_rt(x, axis, ids[i], static_cast<int64_t>(j - i)));
      i = j;
    }
    Value y = parts.size() == 1 ? parts[0] : graph_->concat(parts, axis);
    Val picked = make_rt(y, data.kind, data.origin);  // some of an input's values are still that input
    picked.lo = data.lo;
    return set(0, reshape_val(picked, out_shape));
  }
  // Runtime ids: rows of the table; a negative id counts from the end, as ONNX says.
  if (idx.kind == Kind::Float) error(ErrorCode::Unsupported, "Gather indices must be integers");
  Value ids = mat(idx);
  const Value zero = graph_->constant({0.f}, {});
  ids = graph_->where(graph_->less(ids, zero), graph_->add(ids, graph_->constant({static_cast<float>(dim)}, {})), ids);
  Value y = take(mat(data), data.shape, axis, ids, idx.shape);
  if (idx.origin >= 0 && roles_) {
    auto& r = (*roles_)[static_cast<size_t>(idx.origin)];
    r.role = InputRole::Ids;
    r.vocab = r.vocab ? std::min<uint64_t>(r.vocab, static_cast<uint64_t>(dim)) : static_cast<uint64_t>(dim);
  }
  set(0, reshape_val(make_rt(y, data.kind), out_shape));
}

void Builder::slice() {
  const Val& x = in(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (g_.opset < 10) {
    starts = attr_ints("starts").value_or(std::vector<int64_t>{});
    ends = attr_ints("ends").value_or(std::vector<int64_t>{});
    axes = attr_ints("axes").value_or(std::vector<int64_t>{});
  } else {
    starts = ints_in(1, "starts");
    ends = ints_in(2, "ends");
    if (has_input(3)) axes = ints_in(3, "axes");
    if (has_input(4)) steps = ints_in(4, "steps");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    error(ErrorCode::ParseError, "starts, ends, axes and steps differ in length");
  }
  // Per axis: start, step, count (numpy semantics, clamped).
  const size_t r = x.shape.size();
  std::vector<int64_t> st(r, 0), sp(r, 1), cnt(x.shape);
  for (size_t i = 0; i < starts.size(); ++i) {
    const auto a = static_cast<size_t>(norm_axis(axes[i], r));
    const int64_t d = x.shape[a], step = steps[i];
    if (step == 0) error(ErrorCode::InvalidArgument, "step 0");
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += d;
    if (e < 0) e += d;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      cnt[a] = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, -1, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      cnt[a] = s > e ? (s - e - step - 1) / (-step) : 0;
    }
    st[a] = s;
    sp[a] = step;
  }
  if (x.is_const()) {
    Tensor t = checked_tensor(x.kind, cnt);
    std::vector<int64_t> stride(r, 1);
    for (size_t i = r; i-- > 1;) stride[i - 1] = stride[i] * x.shape[i];
    std::vector<int64_t> pos(r, 0);
    for (size_t k = 0; k < t.v.size(); ++k) {
      int64_t src = 0;
      for (size_t d = 0; d < r; ++d) src += (st[d] + pos[d] * sp[d]) * stride[d];
      t.v[k] = x.c.v[static_cast<size_t>(src)];
      for (size_t d = r; d-- > 0;) {
        if (++pos[d] < cnt[d]) break;
        pos[d] = 0;
      }
    }
    return set(0, make_const(std::move(t)));
  }
  Value y = mat(x);
  for (size_t a = 0; a < r; ++a) {
    if (cnt[a] == x.shape[a] && sp[a] == 1) continue;
    if (cnt[a] == 0) error(ErrorCode::Unsupported, "Slice to an empty tensor of a value computed at run time is not supported");
    if (sp[a] == 1) {
      y = graph_->slice(y, static_cast<int>(a), st[a], cnt[a]);
      continue;
    }
    std::vector<float> ids;  // another step: the rows it picks, gathered
    for (int64_t k = 0; k < cnt[a]; ++k) ids.push_back(static_cast<float>(st[a] + k * sp[a]));
    y = take(y, graph_->shape(y), static_cast<int>(a), graph_->constant(std::move(ids), {cnt[a]}), {cnt[a]});
  }
  set(0, make_rt(y, x.kind, x.origin));
}

void Builder::split() {
  const Val& x = in(0);
  const int axis = norm_axis(attr_i("axis", 0), x.shape.size());
  const int64_t d = x.shape[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes;
  if (g_.opset >= 13 && has_input(1)) sizes = ints_in(1, "split");
  else if (auto s = attr_ints("split")) sizes = *s;
  const size_t n = node_->outputs.size();
  if (sizes.empty()) {
    if (n == 0 || d % static_cast<int64_t>(n) != 0) error(ErrorCode::ShapeMismatch, "cannot split " + std::to_string(d) + " into " + std::to_string(n) + " equal parts");
    sizes.assign(n, d / static_cast<int64_t>(n));
  }
  if (sizes.size() != n || std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != d) {
    error(ErrorCode::ShapeMismatch, "split " + ints_text(sizes) + " does not cover dim " + std::to_string(d) + " in " + std::to_string(n) + " outputs");
  }
  int64_t start = 0;
  for (size_t i = 0; i < n; ++i) {
    if (x.is_const()) {
      // Reuse slice's constant path through a temporary node description.
      Tensor t = x.c;
      Shape s = x.shape;
      s[static_cast<size_t>(axis)] = sizes[i];
      Tensor out = checked_tensor(x.kind, s);
      int64_t outer = 1, inner = 1;
      for (size_t k = 0; k < static_cast<size_t>(axis); ++k) outer *= x.shape[k];
      for (size_t k = static_cast<size_t>(axis) + 1; k < x.shape.size(); ++k) inner *= x.shape[k];
      size_t w = 0;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < sizes[i] * inner; ++j) out.v[w++] = t.v[static_cast<size_t>((o * d + start) * inner + j)];
      set(i, make_const(std::move(out)));
    } else {
      set(i, make_rt(slice_rt(mat(x), axis, start, sizes[i]), x.kind));
    }
    start += sizes[i];
  }
}

void Builder::expand() {
  const Val& x = in(0);
  const std::vector<int64_t> want = ints_in(1, "shape");
  const Shape s = broadcast_shape(x.shape, want);
  if (x.is_const()) {
    const Tensor zeros = checked_tensor(x.kind, s);
    return set(0, make_const(fold_binary(x.c, zeros, x.kind, [](double a, double) { return a; })));
  }
  if (s == x.shape) return set(0, x);
  std::vector<float> zeros(static_cast<size_t>(shape_numel(s)), 0.f);
  set(0, make_rt(graph_->add(mat(x), graph_->constant(std::move(zeros), s)), x.kind));
}

}  // namespace rungs::onnx_import::detail

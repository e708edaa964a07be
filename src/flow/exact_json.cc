// The non-template half of exact conversions (pgflow/detail/exact_json.h). Walks are
// iterative: JSON from the database may be nested thousands of levels deep.
#include "pgflow/detail/exact_json.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "internal/strings.h"
#include "internal/text_checks.h"

namespace pgflow::detail {
namespace {

using Json = nlohmann::json;
using internal::append_pointer_token;

// Numbers compare as long double: exact for every int64, uint64 and double on the x86-64 and
// aarch64 Linux targets (64- and 113-bit mantissas).
long double number_value(const Json& j) {
  if (j.is_number_unsigned()) return static_cast<long double>(j.get<std::uint64_t>());
  if (j.is_number_integer()) return static_cast<long double>(j.get<std::int64_t>());
  return static_cast<long double>(j.get<double>());
}

bool has_fraction(const Json& j) {
  if (!j.is_number_float()) return false;
  const double d = j.get<double>();
  return std::isfinite(d) && d != std::trunc(d);
}

bool non_finite(const Json& j) { return j.is_number_float() && !std::isfinite(j.get<double>()); }

// A number read as floating point at or beyond 2^53 (nlohmann reads so any integer outside
// int64 and uint64, and anything written with a fraction or exponent) may already have been
// rounded while parsed (9007199254740993.0 reads as 2^53), so it cannot be taken as an exact
// integer.
bool beyond_exact_integers(const Json& j) {
  return j.is_number_float() && std::fabs(j.get<double>()) >= 9007199254740992.0;
}
constexpr char kNonFinite[] = "a non-finite JSON number does not convert";
constexpr char kBeyondExact[] =
    "a JSON number at or beyond 2^53 that is not written as an integer (it may have been rounded "
    "when "
    "read) does not convert exactly to ";

// Why `original` (a number or boolean) did not survive as `back`, or nullopt if it did (or
// `back` is no number or boolean: a type with its own JSON shape, compared no further).
std::optional<std::string> changed(const Json& original, const Json& back) {
  const bool back_scalar = back.is_number() || back.is_boolean();
  if (!back_scalar) return std::nullopt;
  if (original.is_boolean()) {
    if (back.is_boolean()) return std::nullopt;
    return "a JSON boolean does not convert to a number";
  }
  if (back.is_boolean()) return "a JSON number does not convert to bool";
  if (non_finite(original)) return kNonFinite;
  if (back.is_number_float()) {
    // A floating field: rounding to the nearest representable value is what it means.
    if (!std::isfinite(back.get<double>())) return "a JSON number is out of the field's range";
    return std::nullopt;
  }
  if (beyond_exact_integers(original))
    return std::string(kBeyondExact) + "the field's integer type";
  if (number_value(original) == number_value(back)) return std::nullopt;
  if (has_fraction(original)) {
    return "a JSON number with a fraction does not convert exactly to the field's integer type";
  }
  return "a JSON number is out of the field's range";
}

// The JSON pointer of `target` inside `root` (searched only when reporting an error).
std::string pointer_to(const Json& root, const Json* target) {
  std::vector<std::pair<const Json*, std::string>> stack{{&root, ""}};
  while (!stack.empty()) {
    auto [node, path] = std::move(stack.back());
    stack.pop_back();
    if (node == target) return path;
    if (node->is_object()) {
      for (auto it = node->begin(); it != node->end(); ++it) {
        std::string child = path;
        append_pointer_token(child, it.key());
        stack.emplace_back(&it.value(), std::move(child));
      }
    } else if (node->is_array()) {
      for (std::size_t i = 0; i < node->size(); ++i) {
        std::string child = path;
        append_pointer_token(child, std::to_string(i));
        stack.emplace_back(&(*node)[i], std::move(child));
      }
    }
  }
  return "";
}

[[noreturn]] void throw_at(const Json& root, const Json* node, std::string_view reason) {
  const std::string path = pointer_to(root, node);
  if (path.empty()) throw ConversionError(std::string(reason));
  // The path holds the input's object keys (a map's keys can be emails or tokens): escaped, and
  // at most 96 bytes of it.
  throw ConversionError(
      absl::StrCat("at ", internal::escaped(path, 96), ": ", internal::absl_view(reason)));
}

// A number or boolean of the original that did not survive, and why.
struct Change {
  const Json* where;
  std::string why;
};

// The common case, cheaply and without recursion: every number and boolean survived at the
// same place (arrays of the same length compared element by element, objects key by key).
bool positionally_unchanged(const Json& original, const Json& written_back) {
  std::vector<std::pair<const Json*, const Json*>> stack{{&original, &written_back}};
  while (!stack.empty()) {
    auto [a, b] = stack.back();
    stack.pop_back();
    if (a->is_number() || a->is_boolean()) {
      if (changed(*a, *b)) return false;
    } else if (a->is_object() && b->is_object()) {
      for (auto it = a->begin(); it != a->end(); ++it) {
        const auto found = b->find(it.key());
        if (found != b->end()) stack.emplace_back(&it.value(), &*found);
      }
    } else if (a->is_array() && b->is_array()) {
      if (a->size() != b->size()) {
        if (has_numbers_or_booleans(*a)) return false;
        continue;
      }
      for (std::size_t i = 0; i < a->size(); ++i) stack.emplace_back(&(*a)[i], &(*b)[i]);
    }
  }
  return true;
}

// A total order on JSON values without NaN that compares numbers by exact value (2 and 2.0 are
// equal), for matching the elements of an array that came back reordered.
int rank(const Json& j) {
  if (j.is_null()) return 0;
  if (j.is_boolean()) return 1;
  if (j.is_number()) return 2;
  if (j.is_string()) return 3;
  if (j.is_array()) return 4;
  if (j.is_object()) return 5;
  return 6;
}
int compare(const Json& x, const Json& y) {
  if (rank(x) != rank(y)) return rank(x) < rank(y) ? -1 : 1;
  if (x.is_boolean()) return static_cast<int>(x.get<bool>()) - static_cast<int>(y.get<bool>());
  if (x.is_number()) {
    const long double a = number_value(x), b = number_value(y);
    return a < b ? -1 : (b < a ? 1 : 0);
  }
  if (x.is_string())
    return x.get_ref<const std::string&>().compare(y.get_ref<const std::string&>());
  if (x.is_array() || x.is_object()) {
    if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
    for (auto i = x.begin(), k = y.begin(); i != x.end(); ++i, ++k) {
      if (x.is_object() && i.key() != k.key()) return i.key() < k.key() ? -1 : 1;
      if (int c = compare(i.value(), k.value()); c != 0) return c;
    }
  }
  return 0;
}

// The first node of `j` that `bad` holds for, or nullptr.
template <typename Pred>
const Json* find_node(const Json& j, Pred bad) {
  std::vector<const Json*> stack{&j};
  while (!stack.empty()) {
    const Json* node = stack.back();
    stack.pop_back();
    if (bad(*node)) return node;
    if (node->is_structured()) {
      for (const Json& child : *node) stack.push_back(&child);
    }
  }
  return nullptr;
}

std::optional<Change> array_change(const Json& a, const Json& b);

// The first number or boolean of `a` that did not survive in `b` (nullopt if all did).
// Recursive, but only when the cheap walk above found a difference.
std::optional<Change> change_in(const Json& a, const Json& b) {
  if (a.is_number() || a.is_boolean()) {
    if (std::optional<std::string> why = changed(a, b)) return Change{&a, std::move(*why)};
  } else if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      const auto found = b.find(it.key());
      if (found == b.end()) continue;
      if (std::optional<Change> c = change_in(it.value(), *found)) return c;
    }
  } else if (a.is_array() && b.is_array()) {
    return array_change(a, b);
  }
  return std::nullopt;
}

// An array may come back reordered or with equal elements merged (a set, a map with number
// keys, written as [[key, value], ...]): each element holding a number or boolean must survive
// at its own index or in an element equal to it (numbers by exact value).
std::optional<Change> array_change(const Json& a, const Json& b) {
  std::optional<Change> at_index;
  if (a.size() == b.size()) {
    for (std::size_t i = 0; i < a.size() && !at_index; ++i) at_index = change_in(a[i], b[i]);
    if (!at_index) return std::nullopt;
  }
  if (const Json* bad = find_node(a, non_finite)) return Change{bad, kNonFinite};
  const auto is_nan = [](const Json& j) {
    return j.is_number_float() && std::isnan(j.get<double>());
  };
  if (find_node(b, is_nan) != nullptr) {  // written back as NaN: no order to match by
    return at_index ? at_index
                    : Change{&a, "a JSON value did not survive the conversion (it became NaN)"};
  }
  std::vector<const Json*> sorted;
  sorted.reserve(b.size());
  for (const Json& e : b) sorted.push_back(&e);
  const auto less = [](const Json* x, const Json* y) { return compare(*x, *y) < 0; };
  std::sort(sorted.begin(), sorted.end(), less);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Json& e = a[i];
    if (!has_numbers_or_booleans(e)) continue;
    if (i < b.size() && !change_in(e, b[i])) continue;
    auto [first, last] = std::equal_range(sorted.begin(), sorted.end(), &e, less);
    const bool survived =
        std::any_of(first, last, [&](const Json* c) { return !change_in(e, *c); });
    if (survived) continue;
    // Why, from the element it became at its index or, merged away, its nearest neighbour.
    const Json* counterpart = i < b.size()            ? &b[i]
                              : first != sorted.end() ? *first
                              : sorted.empty()        ? nullptr
                                                      : sorted.back();
    if (counterpart != nullptr) {
      if (std::optional<Change> c = change_in(e, *counterpart)) return c;
    }
    return Change{&e,
                  "a JSON value did not survive the conversion (dropped or merged with another)"};
  }
  return std::nullopt;
}

}  // namespace

void check_number(const Json& j, const NumberTarget& target) {
  if (j.is_boolean())
    throw ConversionError(absl::StrCat("a JSON boolean does not convert to ", target.name));
  if (!j.is_number()) return;  // nlohmann's type error names the JSON type
  if (non_finite(j)) {
    throw ConversionError(
        absl::StrCat("a non-finite JSON number does not convert to ", target.name));
  }
  if (target.integral && has_fraction(j)) {
    throw ConversionError(
        absl::StrCat("a JSON number with a fraction does not convert exactly to ", target.name));
  }
  const long double v = number_value(j);
  if (v < target.lowest || v > target.max) {
    throw ConversionError(absl::StrCat("a JSON number is out of the range of ", target.name));
  }
  if (target.integral && beyond_exact_integers(j)) {
    throw ConversionError(absl::StrCat(kBeyondExact, target.name));
  }
}

bool has_numbers_or_booleans(const Json& j) {
  return find_node(j, [](const Json& n) { return n.is_number() || n.is_boolean(); }) != nullptr;
}

void check_round_trip(const Json& original, const Json& written_back) {
  if (positionally_unchanged(original, written_back)) return;
  if (std::optional<Change> change = change_in(original, written_back)) {
    throw_at(original, change->where, change->why);
  }
}

}  // namespace pgflow::detail

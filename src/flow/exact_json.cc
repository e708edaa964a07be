// The non-template half of exact conversions (pgflow/detail/exact_json.h). Walks are
// iterative: JSON from the database may be nested thousands of levels deep.
#include "pgflow/detail/exact_json.h"

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

// A number read as floating point beyond 2^53 (nlohmann reads so any integer outside int64 and
// uint64, and anything written with a fraction or exponent) may already have been rounded
// while parsed, so it cannot be taken as an exact integer.
bool beyond_exact_integers(const Json& j) {
  return j.is_number_float() && std::fabs(j.get<double>()) > 9007199254740992.0;
}
constexpr char kBeyondExact[] =
    "a JSON number beyond 2^53 that is not written as an integer (it may have been rounded when "
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
  if (non_finite(original)) return "a non-finite JSON number does not convert";
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
  throw ConversionError(absl::StrCat("at ", path, ": ", internal::absl_view(reason)));
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
  std::vector<const Json*> stack{&j};
  while (!stack.empty()) {
    const Json* node = stack.back();
    stack.pop_back();
    if (node->is_number() || node->is_boolean()) return true;
    if (node->is_structured()) {
      for (const Json& child : *node) stack.push_back(&child);
    }
  }
  return false;
}

void check_round_trip(const Json& original, const Json& written_back) {
  std::vector<std::pair<const Json*, const Json*>> stack{{&original, &written_back}};
  while (!stack.empty()) {
    auto [a, b] = stack.back();
    stack.pop_back();
    if (a->is_number() || a->is_boolean()) {
      if (std::optional<std::string> why = changed(*a, *b)) throw_at(original, a, *why);
    } else if (a->is_object() && b->is_object()) {
      for (auto it = a->begin(); it != a->end(); ++it) {
        const auto found = b->find(it.key());
        if (found != b->end()) stack.emplace_back(&it.value(), &*found);
      }
    } else if (a->is_array() && b->is_array() && a->size() == b->size()) {
      for (std::size_t i = 0; i < a->size(); ++i) stack.emplace_back(&(*a)[i], &(*b)[i]);
    }
  }
}

}  // namespace pgflow::detail

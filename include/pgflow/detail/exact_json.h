// File: pgflow/detail/exact_json.h
//
// NOT API: how typed handlers and typed run outputs read JSON (see pgflow/json.h, "Exact
// conversions").
//
// nlohmann/json converts numbers leniently: 2.5 into an int is 2, 3e10 into an int32_t wraps,
// -1 into an unsigned is 4294967295, true into an int is 1. pgflow never lets a conversion
// change a value: exact_get<T> converts like `j.get<T>()` and then throws ConversionError if
// any number or boolean of `j` did not survive unchanged, naming where (a JSON pointer) and
// what (the JSON type, never the value: values are message bodies).
//   - Into an integral type: the number must be integral (2.0 is 2) and in the type's range,
//     and at or beyond 2^53 written as an integer (nlohmann reads other forms as a double, which may
//     have rounded it).
//   - Into a floating type: the number must be finite and in the type's range; it takes the
//     nearest representable value, as any decimal does (0.1 into a float).
//   - A boolean converts to bool only, and a number never converts to bool.
// Scalars are checked before converting; any other type (a struct, vector or map) is
// converted, written back with its to_json, and every number and boolean compared with the
// value it became (only when `j` holds one: strings-only values cost nothing more); an array
// that came back reordered or merged (a set, a map with number keys) passes when every element
// holding a number survived in an element equal to it.
#ifndef PGFLOW_DETAIL_EXACT_JSON_H_
#define PGFLOW_DETAIL_EXACT_JSON_H_

#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "nlohmann/json.hpp"

namespace pgflow::detail {

// Thrown by exact_get; the handler wrapper and output_as turn it into a status.
class ConversionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What an arithmetic target type can hold, for the check that runs before converting.
struct NumberTarget {
  const char* name;  // "int", "unsigned int", "double", ...
  bool integral;
  bool is_signed;
  long double lowest;
  long double max;
};

// Throws ConversionError unless the JSON scalar `j` converts to `target` unchanged.
void check_number(const nlohmann::json& j, const NumberTarget& target);
// True when `j` holds a number or a boolean anywhere (so a round trip could change it).
bool has_numbers_or_booleans(const nlohmann::json& j);
// Throws ConversionError, naming the place, unless every number and boolean of
// `original` reads the same in `written_back` (the converted value's JSON) where both exist.
void check_round_trip(const nlohmann::json& original, const nlohmann::json& written_back);

template <typename T>
constexpr const char* number_name() {
  if constexpr (std::is_same_v<T, signed char>) return "signed char";
  if constexpr (std::is_same_v<T, unsigned char>) return "unsigned char";
  if constexpr (std::is_same_v<T, char>) return "char";
  if constexpr (std::is_same_v<T, short>) return "short";
  if constexpr (std::is_same_v<T, unsigned short>) return "unsigned short";
  if constexpr (std::is_same_v<T, int>) return "int";
  if constexpr (std::is_same_v<T, unsigned>) return "unsigned int";
  if constexpr (std::is_same_v<T, long>) return "long";
  if constexpr (std::is_same_v<T, unsigned long>) return "unsigned long";
  if constexpr (std::is_same_v<T, long long>) return "long long";
  if constexpr (std::is_same_v<T, unsigned long long>) return "unsigned long long";
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, double>) return "double";
  if constexpr (std::is_same_v<T, long double>) return "long double";
  return "a number type";
}

// `j` as T, exactly (see the top of this file); nlohmann's exceptions for what cannot
// convert at all (a string into an int, a missing key), ConversionError for what would change.
template <typename T>
T exact_get(const nlohmann::json& j) {
  if constexpr (std::is_same_v<T, nlohmann::json>) {
    return j;
  } else if constexpr (std::is_same_v<T, bool>) {
    return j.template get<bool>();  // nlohmann accepts only a JSON boolean here
  } else if constexpr (std::is_arithmetic_v<T>) {
    check_number(j, NumberTarget{number_name<T>(), std::is_integral_v<T>, std::is_signed_v<T>,
                                 static_cast<long double>(std::numeric_limits<T>::lowest()),
                                 static_cast<long double>(std::numeric_limits<T>::max())});
    return j.template get<T>();
  } else {
    T value = j.template get<T>();
    if (has_numbers_or_booleans(j)) check_round_trip(j, nlohmann::json(value));
    return value;
  }
}

}  // namespace pgflow::detail

#endif  // PGFLOW_DETAIL_EXACT_JSON_H_

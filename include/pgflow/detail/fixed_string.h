// File: pgflow/detail/fixed_string.h
//
// NOT API: template machinery of the typed flow DSL (see pgflow/flow.h).
//
// FixedString<N> is a string literal usable as a template argument (a C++20 structural
// type), so slugs become part of the step and flow types: `step<"fetch">` instantiates
// `step<FixedString<5>{"fetch"}>`. The constructor is consteval, so a FixedString can only
// be made from a literal at compile time.
#ifndef PGFLOW_DETAIL_FIXED_STRING_H_
#define PGFLOW_DETAIL_FIXED_STRING_H_

#include <cstddef>
#include <string_view>

namespace pgflow::detail {

template <std::size_t N>
struct FixedString {
  // Public because structural types (usable as template arguments) need public members.
  char chars[N + 1] = {};

  consteval FixedString(const char (&literal)[N + 1]) {  // NOLINT: implicit by design
    for (std::size_t i = 0; i <= N; ++i) chars[i] = literal[i];
  }

  static constexpr std::size_t size() { return N; }
  constexpr std::string_view view() const { return std::string_view(chars, N); }
  constexpr operator std::string_view() const { return view(); }  // NOLINT: implicit

  template <std::size_t M>
  constexpr bool operator==(const FixedString<M>& other) const {
    return view() == other.view();
  }
};

template <std::size_t M>
FixedString(const char (&)[M]) -> FixedString<M - 1>;

}  // namespace pgflow::detail

#endif  // PGFLOW_DETAIL_FIXED_STRING_H_

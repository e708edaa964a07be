// File: pgflow/json.h
//
// How pgflow moves your types in and out of JSON. Flow inputs and step outputs are stored
// as JSONB, so every such type needs nlohmann/json conversions, found by ADL in the type's
// own namespace (pgflow never specialises nlohmann templates for your types):
//
//   namespace shop {
//   struct Order { std::string id; int qty; };
//   NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Order, id, qty)   // defines to_json and from_json
//   }
//
// Use `j.at("key")` rather than `j["key"]` in hand-written from_json functions, so a
// missing key is an error instead of a silent null. Conversion errors never escape pgflow
// as exceptions: the handler wrapper turns them into absl::Status values (see flow.h).
//
// Conversions are exact: pgflow re-checks every number and boolean nlohmann/json converted for
// it, so 2.5 into an int, 3e10 into an int32_t or -1 into an unsigned is an error naming the
// field, not a silently different value (docs/flows.md, "Exact conversions").
#ifndef PGFLOW_JSON_H_
#define PGFLOW_JSON_H_

#include <concepts>
#include <type_traits>

#include "nlohmann/json.hpp"

namespace pgflow {

// pgflow::JsonConvertible<T>
//
// Satisfied when T converts to JSON and back: nlohmann::json itself, the standard types
// nlohmann supports (numbers, bool, std::string, std::vector<T>, std::map<std::string, T>,
// std::nullptr_t, ...) and user types with to_json and from_json (for example through
// NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE). A type with only one direction does not qualify:
// step outputs are written by one handler and read by the next.
//
// Note: nlohmann/json 3.11 has no std::optional support; a handler that wants to return
// "nothing" can return nlohmann::json (null) or a struct with a flag.
template <typename T>
concept JsonConvertible = std::same_as<T, nlohmann::json> ||
    (requires(nlohmann::json& j, const T& in) { nlohmann::adl_serializer<T>::to_json(j, in); } &&
     (
         requires(const nlohmann::json& cj, T& out) {
           nlohmann::adl_serializer<T>::from_json(cj, out);
         } ||
         requires(const nlohmann::json& cj) {
           { nlohmann::adl_serializer<T>::from_json(cj) } -> std::same_as<T>;
         }));

}  // namespace pgflow

#endif  // PGFLOW_JSON_H_

// File: pgflow/detail/flow_output.h
//
// NOT API: the type behind pgflow::FlowOutput<F> (see pgflow/flow_signature.h). A run's output
// is the JSON object {leaf_slug: output} of its leaf steps (steps nothing depends on) that
// completed; a leaf that may be skipped is absent then, so it is a std::optional here.
#ifndef PGFLOW_DETAIL_FLOW_OUTPUT_H_
#define PGFLOW_DETAIL_FLOW_OUTPUT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "nlohmann/json.hpp"
#include "pgflow/detail/exact_json.h"
#include "pgflow/detail/fixed_string.h"
#include "pgflow/detail/step.h"

namespace pgflow::detail {

template <FixedString Slug, typename T, bool Optional>
struct OutputField {
  static constexpr FixedString slug = Slug;
  static constexpr bool optional = Optional;
  using value = T;
  using type = std::conditional_t<Optional, std::optional<T>, T>;
};

// The run output of a typed flow: `out.get<"report">()`.
template <typename... Fields>
class OutputRecord {
 public:
  static constexpr std::size_t size = sizeof...(Fields);

  template <FixedString Slug>
  const auto& get() const {
    static_assert(index_of<Slug>() < size,
                  "pgflow: FlowOutput has no leaf step with this slug; only steps that no other "
                  "step depends on are part of the run output");
    return std::get<index_of<Slug>()>(values_);
  }
  template <FixedString Slug>
  auto& get() {
    static_assert(index_of<Slug>() < size,
                  "pgflow: FlowOutput has no leaf step with this slug; only steps that no other "
                  "step depends on are part of the run output");
    return std::get<index_of<Slug>()>(values_);
  }

  // Reads a run's `output` column. A missing optional leaf is std::nullopt; a missing
  // required one throws nlohmann's out_of_range (callers wrap this into a Status).
  friend void from_json(const nlohmann::json& j, OutputRecord& out) {
    out.read_all(j, std::index_sequence_for<Fields...>{});
  }
  friend void to_json(nlohmann::json& j, const OutputRecord& out) {
    j = nlohmann::json::object();
    out.write_all(j, std::index_sequence_for<Fields...>{});
  }

 private:
  template <FixedString Slug>
  static constexpr std::size_t index_of() {
    constexpr bool matches[] = {(Fields::slug == Slug)..., false};
    for (std::size_t i = 0; i < size; ++i) {
      if (matches[i]) return i;
    }
    return size;
  }

  template <std::size_t... I>
  void read_all(const nlohmann::json& j, std::index_sequence<I...>) {
    (read_one<Fields>(j, std::get<I>(values_)), ...);
  }
  template <typename Field>
  static void read_one(const nlohmann::json& j, typename Field::type& out) {
    if constexpr (Field::optional) {
      const auto it = j.find(Field::slug.view());
      if (it == j.end()) {
        out.reset();
      } else {
        out = exact_get<typename Field::value>(*it);
      }
    } else {
      out = exact_get<typename Field::value>(j.at(Field::slug.view()));
    }
  }

  template <std::size_t... I>
  void write_all(nlohmann::json& j, std::index_sequence<I...>) const {
    (write_one<Fields>(j, std::get<I>(values_)), ...);
  }
  template <typename Field>
  static void write_one(nlohmann::json& j, const typename Field::type& value) {
    if constexpr (Field::optional) {
      if (value.has_value()) j[std::string(Field::slug.view())] = *value;
    } else {
      j[std::string(Field::slug.view())] = value;
    }
  }

  std::tuple<typename Fields::type...> values_;
};

// Whether Step is part of the run output: a leaf of the flow's steps, or a step its signature
// (pgflow/flow_signature.h) declares a leaf.
template <typename Step, typename... Steps>
constexpr bool in_run_output() {
  if constexpr (requires { Step::leaf; }) {
    return Step::leaf;
  } else {
    return is_leaf<Step::slug, Steps...>;
  }
}

// OutputRecord of the leaf steps of Steps..., in declaration order.
template <typename... Steps>
struct FlowOutputOf {
  template <typename Step>
  using FieldIfLeaf = std::conditional_t<
      in_run_output<Step, Steps...>(),
      TypeList<OutputField<Step::slug, typename Step::output_type, Step::skip.may_be_absent>>,
      TypeList<>>;
  template <typename List>
  struct ToRecord;
  template <typename... Fields>
  struct ToRecord<TypeList<Fields...>> {
    using type = OutputRecord<Fields...>;
  };
  using type = typename ToRecord<decltype((TypeList<>{} + ... + FieldIfLeaf<Steps>{}))>::type;
};

}  // namespace pgflow::detail

#endif  // PGFLOW_DETAIL_FLOW_OUTPUT_H_

// Early-return helpers for absl::Status / absl::StatusOr (Debian's Abseil 20220623 has none).
#ifndef PGFLOW_INTERNAL_STATUS_MACROS_H_
#define PGFLOW_INTERNAL_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define PGFLOW_CONCAT_INNER_(a, b) a##b
#define PGFLOW_CONCAT_(a, b) PGFLOW_CONCAT_INNER_(a, b)

// Returns the status of `expr` from the current function when it is not OK.
#define PGFLOW_RETURN_IF_ERROR(expr)                                  \
  do {                                                                \
    if (absl::Status pgflow_status_ = (expr); !pgflow_status_.ok()) { \
      return pgflow_status_;                                          \
    }                                                                 \
  } while (false)

// Declares or assigns `lhs` from the value of the StatusOr `expr`, or returns its status.
#define PGFLOW_ASSIGN_OR_RETURN(lhs, expr) \
  PGFLOW_ASSIGN_OR_RETURN_IMPL_(PGFLOW_CONCAT_(pgflow_statusor_, __LINE__), lhs, expr)

#define PGFLOW_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return std::move(tmp).status();      \
  lhs = std::move(tmp).value()

#endif  // PGFLOW_INTERNAL_STATUS_MACROS_H_

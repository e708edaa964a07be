#include "internal/random.h"

#include <algorithm>
#include <cstdint>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"

namespace pgflow::internal {
namespace {

absl::BitGen& generator() {
  thread_local absl::BitGen gen;  // BitGen is not thread-safe; seeded from the OS
  return gen;
}

}  // namespace

std::chrono::milliseconds random_duration(std::chrono::milliseconds low,
                                          std::chrono::milliseconds high) {
  return std::chrono::milliseconds(absl::Uniform(absl::IntervalClosed, generator(), low.count(),
                                                 std::max(low.count(), high.count())));
}

std::string random_uuid() {
  uint64_t hi = absl::Uniform<uint64_t>(generator());
  uint64_t lo = absl::Uniform<uint64_t>(generator());
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // RFC 4122 variant
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff,
                         lo >> 48, lo & 0xffffffffffffULL);
}

}  // namespace pgflow::internal

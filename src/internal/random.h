// The library's one source of randomness (Abseil's BitGen, one per thread): jitter for
// backoff and recovery offsets, and worker ids.
#ifndef PGFLOW_INTERNAL_RANDOM_H_
#define PGFLOW_INTERNAL_RANDOM_H_

#include <chrono>
#include <string>

namespace pgflow::internal {

// Uniform in [low, high] (high below low counts as low).
std::chrono::milliseconds random_duration(std::chrono::milliseconds low,
                                          std::chrono::milliseconds high);

// A random (version 4) UUID in its canonical text form.
std::string random_uuid();

}  // namespace pgflow::internal

#endif  // PGFLOW_INTERNAL_RANDOM_H_

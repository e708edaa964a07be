// How often a wait for a run re-reads it: Client::wait_for_run, and the CLI's live wait
// (`pgflow start --wait` on a terminal, which re-reads while it redraws its progress line).
#ifndef PGFLOW_CLIENT_REREADS_H_
#define PGFLOW_CLIENT_REREADS_H_

#include <algorithm>
#include <chrono>

namespace pgflow::internal {

// A wait re-reads a run at least this often, so it also ends when events are off.
inline constexpr std::chrono::milliseconds kRereadInterval{1000};
// A poll-only wait re-reads this soon first, then twice as late each time (next_reread).
inline constexpr std::chrono::milliseconds kFirstReread{20};

inline std::chrono::milliseconds next_reread(std::chrono::milliseconds delay) {
  return std::min<std::chrono::milliseconds>(delay * 2, kRereadInterval);
}

}  // namespace pgflow::internal

#endif  // PGFLOW_CLIENT_REREADS_H_

// The hot-path issue's (#30) verdicts on rows of the other sections, judged after every section
// ran: server CPU per task over the raw cycle's (primary; the raw row is the best-throughput
// one, as the ratios use), throughput ratios, map scaling, producer scaling and latency
// (secondary). A verdict whose row did not run is not printed.
#include <string>

#include "absl/strings/str_format.h"
#include "load/support.h"

namespace pgflow::bench {

void add_row_verdicts(BenchContext& ctx) {
  struct Bound {
    const char* id;
    double value;
  };
  for (const Bound& b : {Bound{"b1", 2}, Bound{"c1", 4}, Bound{"d1", 2.5}}) {
    const ResultRow* row = ctx.report.find(b.id);
    if (!row || !row->server_us || !ctx.raw_server_us) continue;
    ctx.report.verdict(
        multiple_verdict(absl::StrFormat("%s server CPU per task over the raw PGMQ cycle's", b.id),
                         *row->server_us, *ctx.raw_server_us, "us", b.value, /*at_most=*/true));
  }
  for (const Bound& b : {Bound{"b1", 0.50}, Bound{"c1", 0.25}, Bound{"d1", 0.40}}) {
    const ResultRow* row = ctx.report.find(b.id);
    if (!row || ctx.raw_rate <= 0) continue;
    Verdict v = multiple_verdict(absl::StrFormat("%s throughput over the raw PGMQ cycle's", b.id),
                                 row->value, ctx.raw_rate, "tasks/s", b.value, /*at_most=*/false);
    v.primary = false;
    ctx.report.verdict(std::move(v));
  }
  struct Limit {
    const char* id;
    const char* what;
    double bound;
    bool at_most;
  };
  for (const Limit& l :
       {Limit{"f4", "map per-element time, large map over small (f2 / f1)", 1.2, true},
        Limit{"c3", "producers, 2 threads over 1", 1.8, false},
        Limit{"e1", "latency start_flow commit -> handler start, p50", 3, true},
        Limit{"e3", "latency start_flow commit -> handler start, p99", 10, true}}) {
    const ResultRow* row = ctx.report.find(l.id);
    if (!row) continue;
    ctx.report.verdict(
        {.what = absl::StrFormat("%s %s", l.id, l.what),
         .met = l.at_most ? row->value <= l.bound : row->value >= l.bound,
         .figure = absl::StrFormat("%.2f %s", row->value, row->unit),
         .target = absl::StrFormat("%s %g %s", l.at_most ? "<=" : ">=", l.bound, row->unit),
         .primary = false});
  }
}

}  // namespace pgflow::bench

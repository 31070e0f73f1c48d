//===- Trace.h - a timeline in the Trace Event Format -----------*- C++ -*-===//
//
// A bounded recorder of timeline events (named tracks, spans and flow
// arrows between them) and a writer of the JSON Trace Event Format that
// https://ui.perfetto.dev and chrome://tracing open. It knows nothing of
// the simulator: CtaTrace.h records the protocol of a CTA into it.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_LIB_SIMULATOR_TRACE_H
#define FA4_LIB_SIMULATOR_TRACE_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace mlir::fa4::sim {

class Trace {
public:
  /// An argument shown with a span: a number or a string.
  using Value = std::variant<int64_t, std::string>;
  using Args = std::vector<std::pair<std::string, Value>>;

  /// Records at most `limit` spans and flow events; after that, recording
  /// stops and the metadata says where.
  explicit Trace(uint64_t limit) : limit(limit) {}

  /// Whether recording goes on (the limit is not reached).
  bool recording() const { return !truncated; }
  uint64_t events() const { return recorded; }

  /// A new process (a group of tracks) named `name`; processes are
  /// ordered as created. Returns its id.
  int64_t process(StringRef name);
  /// Names track `tid` of process `pid`; tracks are ordered by `tid`.
  /// Names are metadata: they do not count against the limit.
  void track(int64_t pid, int64_t tid, StringRef name);
  /// A span on a track over [begin, end) (end > begin).
  void span(int64_t pid, int64_t tid, StringRef category, StringRef name,
            uint64_t begin, uint64_t end, Args args = {});
  /// An arrow from the span enclosing time `from` on track `fromTid` to the
  /// span enclosing time `to` on track `toTid`, both in process `pid`.
  /// Recorded whole or not at all.
  void flow(int64_t pid, int64_t fromTid, uint64_t from, int64_t toTid,
            uint64_t to, StringRef name);
  /// A key of the trace's metadata ("otherData"), shown by the viewers.
  void note(StringRef key, StringRef value);

  /// Writes {"traceEvents": [...], "displayTimeUnit": ..., "otherData": ...}.
  void write(raw_ostream &os) const;

private:
  struct Event {
    char phase; // 'M' metadata, 'X' span, 's'/'f' flow start and end
    int64_t pid, tid;
    uint64_t ts = 0, dur = 0, id = 0;
    std::string category, name;
    Args args;
  };
  /// Whether `count` more events fit; the first refusal notes where
  /// recording stopped.
  bool room(unsigned count, int64_t pid, uint64_t ts);

  uint64_t limit, recorded = 0, nextFlow = 1;
  bool truncated = false;
  std::vector<Event> log;
  std::vector<std::pair<std::string, std::string>> notes;
  std::vector<std::string> processes;
};

} // namespace mlir::fa4::sim

#endif // FA4_LIB_SIMULATOR_TRACE_H

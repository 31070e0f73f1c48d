//===- Trace.cpp - a timeline in the Trace Event Format -------------------===//
//
// Events are kept in memory and written once, one event per line, through
// llvm::json::OStream, which escapes every string; text that is not UTF-8
// (a file name in a location, say) is repaired first, since JSON strings
// must be.
//
//===----------------------------------------------------------------------===//

#include "Trace.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::fa4::sim;

namespace {

std::string utf8(StringRef text) {
  return llvm::json::isUTF8(text) ? text.str() : llvm::json::fixUTF8(text);
}

} // namespace

bool Trace::room(unsigned count, int64_t pid, uint64_t ts) {
  if (truncated)
    return false;
  if (recorded + count <= limit) {
    recorded += count;
    return true;
  }
  truncated = true;
  note("truncated",
       llvm::formatv("recording stopped after {0} events (the limit, "
                     "--trace-limit), in {1} at step {2}",
                     recorded,
                     pid >= 0 && pid < static_cast<int64_t>(processes.size())
                         ? processes[pid]
                         : "process " + std::to_string(pid),
                     ts)
           .str());
  return false;
}

int64_t Trace::process(StringRef name) {
  int64_t pid = processes.size();
  processes.push_back(utf8(name));
  log.push_back(
      {'M', pid, 0, 0, 0, 0, "", "process_name", {{"name", utf8(name)}}});
  log.push_back(
      {'M', pid, 0, 0, 0, 0, "", "process_sort_index", {{"sort_index", pid}}});
  return pid;
}

void Trace::track(int64_t pid, int64_t tid, StringRef name) {
  log.push_back(
      {'M', pid, tid, 0, 0, 0, "", "thread_name", {{"name", utf8(name)}}});
  log.push_back(
      {'M', pid, tid, 0, 0, 0, "", "thread_sort_index", {{"sort_index", tid}}});
}

void Trace::span(int64_t pid, int64_t tid, StringRef category, StringRef name,
                 uint64_t begin, uint64_t end, Args args) {
  if (!room(1, pid, begin))
    return;
  for (auto &[key, value] : args)
    if (auto *text = std::get_if<std::string>(&value))
      *text = utf8(*text);
  log.push_back({'X', pid, tid, begin, end > begin ? end - begin : 1, 0,
                 category.str(), utf8(name), std::move(args)});
}

void Trace::flow(int64_t pid, int64_t fromTid, uint64_t from, int64_t toTid,
                 uint64_t to, StringRef name) {
  if (!room(2, pid, from))
    return;
  uint64_t id = nextFlow++;
  log.push_back({'s', pid, fromTid, from, 0, id, "flow", utf8(name), {}});
  log.push_back({'f', pid, toTid, to, 0, id, "flow", utf8(name), {}});
}

void Trace::note(StringRef key, StringRef value) {
  for (auto &[k, v] : notes)
    if (k == key) {
      v = utf8(value);
      return;
    }
  notes.emplace_back(key.str(), utf8(value));
}

void Trace::write(raw_ostream &os) const {
  os << "{\"traceEvents\": [\n";
  bool first = true;
  for (const Event &event : log) {
    if (!first)
      os << ",\n";
    first = false;
    llvm::json::OStream json(os);
    json.object([&] {
      json.attribute("ph", std::string(1, event.phase));
      json.attribute("pid", event.pid);
      json.attribute("tid", event.tid);
      json.attribute("name", event.name);
      if (event.phase != 'M')
        json.attribute("ts", static_cast<int64_t>(event.ts));
      if (!event.category.empty())
        json.attribute("cat", event.category);
      if (event.phase == 'X')
        json.attribute("dur", static_cast<int64_t>(event.dur));
      if (event.phase == 's' || event.phase == 'f') {
        json.attribute("id", static_cast<int64_t>(event.id));
        // Both ends bind to the span enclosing their time.
        json.attribute("bp", "e");
      }
      if (!event.args.empty())
        json.attributeObject("args", [&] {
          for (const auto &[key, value] : event.args) {
            if (auto *number = std::get_if<int64_t>(&value))
              json.attribute(key, *number);
            else
              json.attribute(key, std::get<std::string>(value));
          }
        });
    });
  }
  os << "\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": ";
  llvm::json::OStream json(os);
  json.object([&] {
    for (const auto &[key, value] : notes)
      json.attribute(key, value);
    json.attribute("events", static_cast<int64_t>(recorded));
    json.attribute("event_limit", static_cast<int64_t>(limit));
  });
  os << "\n}\n";
}

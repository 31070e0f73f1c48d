//===- Hardware.cpp - the simulator's model of one SM ---------------------===//

#include "Hardware.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::fa4::sim;

//===----------------------------------------------------------------------===//
// Number formats
//===----------------------------------------------------------------------===//

static uint32_t bitsOf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

static float floatOf(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

uint16_t mlir::fa4::sim::bf16Bits(float x) {
  uint32_t bits = bitsOf(x);
  if (std::isnan(x))
    return 0x7FC0;
  uint32_t roundingBias = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

float mlir::fa4::sim::bf16Value(uint16_t bits) {
  return floatOf(static_cast<uint32_t>(bits) << 16);
}

// _Float16 conversions round to nearest even, as cvt.rn.f16.f32 does.
uint16_t mlir::fa4::sim::f16Bits(float x) {
  _Float16 h = static_cast<_Float16>(x);
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof(bits));
  return bits;
}

float mlir::fa4::sim::f16Value(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, sizeof(h));
  return static_cast<float>(h);
}

// e4m3 (FN): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinity,
// S.1111.111 is NaN, subnormals step by 2^-9.
float mlir::fa4::sim::e4m3Value(uint8_t bits) {
  float sign = bits & 0x80 ? -1.0f : 1.0f;
  int exponent = (bits >> 3) & 0xF, mantissa = bits & 0x7;
  if (exponent == 0xF && mantissa == 0x7)
    return std::numeric_limits<float>::quiet_NaN();
  if (exponent == 0)
    return sign * std::ldexp(static_cast<float>(mantissa), -9);
  return sign * std::ldexp(1.0f + mantissa / 8.0f, exponent - 7);
}

uint8_t mlir::fa4::sim::e4m3Bits(float x) {
  if (std::isnan(x))
    return 0x7F;
  uint8_t sign = std::signbit(x) ? 0x80 : 0;
  float magnitude = std::fabs(x);
  if (magnitude >= 448.0f)
    return sign | 0x7E;
  // The spacing of e4m3 values at `magnitude`: 2^(e - 3) for normals of
  // exponent e >= -6, 2^-9 below; rint rounds half to even.
  int exponent;
  std::frexp(magnitude, &exponent); // magnitude in [2^(exponent-1), 2^exponent)
  int quantum = std::max(exponent - 1, -6) - 3;
  float rounded =
      std::ldexp(std::rint(std::ldexp(magnitude, -quantum)), quantum);
  if (rounded == 0.0f)
    return sign;
  int e;
  float fraction = std::frexp(rounded, &e); // rounded = fraction 2^e
  if (e - 1 < -6)                           // subnormal: m 2^-9
    return sign | static_cast<uint8_t>(std::ldexp(rounded, 9));
  int mantissa = static_cast<int>(std::ldexp(fraction, 4)) - 8;
  return sign | static_cast<uint8_t>(((e - 1 + 7) << 3) | mantissa);
}

//===----------------------------------------------------------------------===//
// Happens-before
//===----------------------------------------------------------------------===//

void VectorClock::join(const VectorClock &other) {
  if (other.clocks.size() > clocks.size())
    clocks.resize(other.clocks.size(), 0);
  for (size_t i = 0, e = other.clocks.size(); i < e; ++i)
    clocks[i] = std::max(clocks[i], other.clocks[i]);
}

bool VectorClock::covers(const VectorClock &other) const {
  for (size_t i = 0, e = other.clocks.size(); i < e; ++i)
    if (other.clocks[i] > get(i))
      return false;
  return true;
}

uint32_t RaceDetector::agent(Operation *op, std::string who) {
  agents.push_back({op, std::move(who)});
  return agents.size() - 1;
}

static std::string describeAgent(const Agent &agent) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << agent.who;
  if (agent.op) {
    os << " at ";
    agent.op->getLoc().print(os);
    os << " (" << agent.op->getName() << ")";
  }
  return text;
}

bool RaceDetector::access(Memory memory, int64_t begin, int64_t end, bool write,
                          Slot slot, uint32_t agentIndex,
                          const VectorClock &clock,
                          std::optional<uint32_t> epoch,
                          ArrayRef<Explanation> explanations) {
  std::vector<Cell> &cells = memory == Memory::shared ? shared : tensor;
  auto unordered = [&](const Access &earlier) {
    return earlier.valid() && earlier.slot != slot &&
           clock.get(earlier.slot) < earlier.clock;
  };
  // The first unordered earlier access, and how far its conflict extends.
  int64_t first = -1, last = -1;
  Access conflict;
  bool conflictWrote = false;
  Access self{slot, epoch.value_or(clock.get(slot)), agentIndex};
  for (int64_t i = begin; i < end; ++i) {
    Cell &cell = cells[i];
    const Access *hit = nullptr;
    bool hitWrote = false;
    if (unordered(cell.write)) {
      hit = &cell.write;
      hitWrote = true;
    } else if (write) {
      for (const Access &read : cell.reads)
        if (unordered(read)) {
          hit = &read;
          break;
        }
    }
    if (hit) {
      if (first < 0) {
        first = i;
        conflict = *hit;
        conflictWrote = hitWrote;
      }
      if (hit->agent == conflict.agent)
        last = i;
    }
    if (write) {
      cell.write = self;
      cell.reads.clear();
    } else {
      // Reads this one is ordered after can no longer race alone.
      llvm::erase_if(cell.reads, [&](const Access &read) {
        return read.slot == slot || clock.get(read.slot) >= read.clock;
      });
      cell.reads.push_back(self);
    }
  }
  if (first < 0)
    return true;
  auto identity = [&](uint32_t index) -> const void * {
    if (Operation *op = agents[index].op)
      return op;
    return &agents[index];
  };
  const void *a = identity(conflict.agent), *b = identity(agentIndex);
  auto key = std::make_pair(std::min(a, b), std::max(a, b));
  const char *why = "are not ordered by any barrier";
  for (const Explanation &explanation : explanations)
    if (explanation.clock->get(conflict.slot) >= conflict.clock) {
      why = explanation.text;
      break;
    }
  if (reported.insert(key).second)
    reports.push_back(
        {key, llvm::formatv("race on {0}: {1} by {2} and {3} by {4} {5}",
                            describe(memory, first, last),
                            conflictWrote ? "write" : "read",
                            describeAgent(agents[conflict.agent]),
                            write ? "write" : "read",
                            describeAgent(agents[agentIndex]), why)});
  return false;
}

void RaceDetector::proxyRace(int64_t first, int64_t last, uint32_t writer,
                             uint32_t reader, Operation *lateFence) {
  const void *a = agents[writer].op, *b = agents[reader].op;
  auto key = std::make_pair(std::min(a, b), std::max(a, b));
  if (!reported.insert(key).second)
    return;
  std::string late;
  if (lateFence) {
    llvm::raw_string_ostream os(late);
    os << " (its next fence.proxy.async, at ";
    lateFence->getLoc().print(os);
    os << ", comes after that barrier)";
  }
  reports.push_back(
      {key, llvm::formatv(
                "race on {0}: write by {1} and read by {2} through the async "
                "proxy are not ordered: the writing thread executed no "
                "fence.proxy.async between its ordinary stores and the "
                "barrier that orders them{3}",
                describe(Memory::shared, first, last),
                describeAgent(agents[writer]), describeAgent(agents[reader]),
                late)});
}

//===----------------------------------------------------------------------===//
// Barriers
//===----------------------------------------------------------------------===//

bool MBarrier::tryComplete() {
  if (pending != 0 || tx != 0)
    return false;
  ++phase;
  completed = arriving;
  arriving.clear();
  pending = expected;
  return true;
}

bool MBarrier::arrive(const VectorClock &clock) {
  arriving.join(clock);
  --pending;
  return tryComplete();
}

bool MBarrier::completeTx(int64_t bytes, const VectorClock &clock) {
  arriving.join(clock);
  tx -= bytes;
  return tryComplete();
}

//===----------------------------------------------------------------------===//
// Shared memory layout and the Tensor Core
//===----------------------------------------------------------------------===//

SmemDescriptor mlir::fa4::sim::decodeSmemDescriptor(uint64_t descriptor) {
  return {static_cast<int64_t>(descriptor & 0x3FFF) << 4,
          static_cast<int64_t>((descriptor >> 16) & 0x3FFF) << 4,
          static_cast<int64_t>((descriptor >> 32) & 0x3FFF) << 4,
          descriptor >> 61};
}

SmemDescriptor mlir::fa4::sim::decodeWgmmaDescriptor(uint64_t descriptor) {
  SmemDescriptor fields = decodeSmemDescriptor(descriptor);
  fields.swizzle = descriptor >> 62;
  return fields;
}

int64_t mlir::fa4::sim::operandAddress(const SmemDescriptor &d, bool mnMajor,
                                       int64_t mn, int64_t k,
                                       int64_t elementBytes) {
  if (!mnMajor)
    return d.start + elementBytes * k + 128 * (mn % 8) + d.stride * (mn / 8);
  return d.start + 2 * (mn % 64) + d.leading * (mn / 64) + 128 * (k % 8) +
         d.stride * (k / 8);
}

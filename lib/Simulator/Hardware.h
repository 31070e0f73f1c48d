//===- Hardware.h - the simulator's model of one SM -------------*- C++ -*-===//
//
// The state the simulated kernel touches and the rules it obeys: number
// formats, happens-before (vector clocks) and the race detector over shared
// and Tensor Memory, mbarriers with phases and transaction bytes, named
// barriers, the 128-byte swizzle, and the Tensor Core reading its operands
// through the descriptors the lowering encodes.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_LIB_SIMULATOR_HARDWARE_H
#define FA4_LIB_SIMULATOR_HARDWARE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir::fa4::sim {

//===----------------------------------------------------------------------===//
// Number formats
//===----------------------------------------------------------------------===//

/// Rounds `x` to the nearest bf16 (ties to even) and returns its bits.
uint16_t bf16Bits(float x);
float bf16Value(uint16_t bits);
/// Rounds `x` to the nearest f16 (ties to even) and returns its bits.
uint16_t f16Bits(float x);
float f16Value(uint16_t bits);

/// Rounds `x` to the nearest e4m3 (ties to even), saturating to the
/// largest finite value (+-448; cvt.rn.satfinite), and returns its bits;
/// NaN stays NaN.
uint8_t e4m3Bits(float x);
float e4m3Value(uint8_t bits);

/// The floating-point formats of the kernel's operands in memory.
enum class Format { bf16, f16, e4m3 };
inline Format formatOf(Type element) {
  return element.isBF16()  ? Format::bf16
         : element.isF16() ? Format::f16
                           : Format::e4m3;
}
inline int64_t formatBytes(Format f) { return f == Format::e4m3 ? 1 : 2; }
/// `x` rounded to `f`, as its bits (e4m3 in the low byte).
inline uint16_t encode(Format f, float x) {
  switch (f) {
  case Format::bf16:
    return bf16Bits(x);
  case Format::f16:
    return f16Bits(x);
  case Format::e4m3:
    return e4m3Bits(x);
  }
  return 0;
}
inline float decode(Format f, uint16_t bits) {
  switch (f) {
  case Format::bf16:
    return bf16Value(bits);
  case Format::f16:
    return f16Value(bits);
  case Format::e4m3:
    return e4m3Value(static_cast<uint8_t>(bits));
  }
  return 0.0f;
}
inline float roundTo(Format f, float x) { return decode(f, encode(f, x)); }
/// Element `i` of a row of `bits`-bit elements packed into 32-bit TMEM
/// columns (two 16-bit or four 8-bit per column, the first in the low
/// bits), from its column `cell`.
inline uint16_t packedElement(uint32_t cell, unsigned bits, int64_t i) {
  unsigned shift = bits * static_cast<unsigned>(i % (32 / bits));
  return static_cast<uint16_t>((cell >> shift) & ((1u << bits) - 1));
}

//===----------------------------------------------------------------------===//
// Happens-before
//===----------------------------------------------------------------------===//

/// An index into vector clocks: one per thread, one per asynchronous agent.
using Slot = uint32_t;

class VectorClock {
public:
  uint32_t get(Slot slot) const {
    return slot < clocks.size() ? clocks[slot] : 0;
  }
  void set(Slot slot, uint32_t value) {
    if (slot >= clocks.size())
      clocks.resize(slot + 1, 0);
    clocks[slot] = value;
  }
  void tick(Slot slot) { set(slot, get(slot) + 1); }
  void join(const VectorClock &other);
  /// Whether every entry of `other` is at most this clock's.
  bool covers(const VectorClock &other) const;
  void clear() { clocks.clear(); }

private:
  std::vector<uint32_t> clocks;
};

/// Who performed an access, for reports.
struct Agent {
  Operation *op;
  std::string who;
};

/// One remembered access of a memory cell.
struct Access {
  Slot slot = ~0u;
  uint32_t clock = 0;
  uint32_t agent = 0; // index into RaceDetector::agents
  bool valid() const { return slot != ~0u; }
};

enum class Memory { shared, tensor };

/// A race between two ops (or agents without one), as a report line.
struct RaceReport {
  std::pair<const void *, const void *> ops;
  std::string text;
};

/// Accesses of shared memory (bytes) and Tensor Memory (32-bit cells, lane
/// major) that no happens-before edge orders: two accesses of one cell, one
/// a write, where the later one's clock does not cover the earlier one.
class RaceDetector {
public:
  using Describe =
      std::function<std::string(Memory, int64_t first, int64_t last)>;
  RaceDetector(int64_t sharedBytes, int64_t tensorCells, Describe describe)
      : shared(sharedBytes), tensor(tensorCells),
        describe(std::move(describe)) {}

  uint32_t agent(Operation *op, std::string who);
  const std::string &agentName(uint32_t index) const {
    return agents[index].who;
  }
  /// Checks and records an access of cells [begin, end) by `agentIndex`
  /// running as `slot` at `clock`; returns false on a race (reported once
  /// per pair of agents).
  /// Why an unordered pair would have been ordered under another clock:
  /// the first explanation whose clock covers the earlier access replaces
  /// "are not ordered by any barrier" in the report.
  struct Explanation {
    const VectorClock *clock;
    const char *text;
  };

  /// `epoch` is the clock value the access is recorded at, if not
  /// `clock`'s own (an access checked against an earlier view).
  bool access(Memory memory, int64_t begin, int64_t end, bool write, Slot slot,
              uint32_t agentIndex, const VectorClock &clock,
              std::optional<uint32_t> epoch = std::nullopt,
              ArrayRef<Explanation> explanations = {});

  /// Reports that `reader`, reading shared memory [first, last] through the
  /// async proxy (TMA, tensor cores), sees bytes `writer` stored with
  /// ordinary stores that no fence.proxy.async of their thread ordered
  /// before the read; `lateFence` is the thread's first fence after the
  /// stores if it executed one (after the barrier that orders the read).
  void proxyRace(int64_t first, int64_t last, uint32_t writer, uint32_t reader,
                 Operation *lateFence);

  /// The races found, in discovery order, once per pair of ops.
  const std::vector<RaceReport> &races() const { return reports; }

private:
  struct Cell {
    Access write;
    llvm::SmallVector<Access, 1> reads;
  };
  std::vector<Cell> shared, tensor;
  Describe describe;
  std::deque<Agent> agents; // stable addresses: reports key on them
  /// Pairs of ops (or agents without one) already reported.
  llvm::DenseSet<std::pair<const void *, const void *>> reported;
  std::vector<RaceReport> reports;
};

//===----------------------------------------------------------------------===//
// Barriers
//===----------------------------------------------------------------------===//

/// An mbarrier: an expected arrival count, pending arrivals and transaction
/// bytes of the current phase; the phase completes when both reach zero.
struct MBarrier {
  std::string name;
  bool initialized = false;
  int64_t expected = 0, pending = 0, tx = 0;
  uint64_t phase = 0;
  VectorClock arriving, completed;

  /// try_wait.parity: true once the phase with parity `parity` completed,
  /// i.e. the current phase has the other parity. A waiter two phases
  /// behind sees its parity again and waits for the next phase.
  bool parityCompleted(bool parity) const { return (phase & 1) != parity; }
  /// Whether an arrival (or transaction) at `clock` is ordered after the
  /// completion of the previous phase. One that is not may land while that
  /// phase is still pending and count towards it.
  bool followsLastPhase(const VectorClock &clock) const {
    return phase == 0 || clock.covers(completed);
  }
  /// Returns whether the phase completed.
  bool arrive(const VectorClock &clock);
  bool completeTx(int64_t bytes, const VectorClock &clock);

private:
  bool tryComplete();
};

/// A hardware named barrier (bar.sync / bar.arrive with a thread count).
struct NamedBarrier {
  int64_t expected = 0, arrived = 0;
  uint64_t generation = 0;
  Operation *firstUse = nullptr;
  VectorClock arriving, completed;
};

//===----------------------------------------------------------------------===//
// Shared memory layout and the Tensor Core
//===----------------------------------------------------------------------===//

/// The shared-window address of dynamic shared memory byte 0: the static
/// block holding the mbarriers comes first and the region is 1024-aligned.
constexpr int64_t kDynamicSharedBase = 1024;

/// The 128-byte swizzle on shared-window addresses: bits [4, 7) XOR bits
/// [7, 10). TMA boxes and MMA operands in 128B mode are laid out by it.
inline int64_t swizzle128(int64_t address) {
  return address ^ ((address >> 3) & 0x70);
}

/// A tcgen05 shared-memory descriptor, decoded.
struct SmemDescriptor {
  int64_t start, leading, stride;
  uint64_t swizzle;
};
SmemDescriptor decodeSmemDescriptor(uint64_t descriptor);
/// The same fields of an sm_90 (wgmma) descriptor: the layout type in bits
/// 62-63.
SmemDescriptor decodeWgmmaDescriptor(uint64_t descriptor);

/// Address (shared window, before swizzling) of element (mn, k), k < one
/// K step (32 bytes), of an operand of `elementBytes`-byte elements in
/// 128-byte swizzle mode: K-major rows of 128 bytes, eight-row groups
/// `stride` apart; MN-major (16-bit only) rows of 64 elements along MN,
/// atoms `leading` apart along MN and eight-row groups `stride` along K.
int64_t operandAddress(const SmemDescriptor &d, bool mnMajor, int64_t mn,
                       int64_t k, int64_t elementBytes);

} // namespace mlir::fa4::sim

#endif // FA4_LIB_SIMULATOR_HARDWARE_H

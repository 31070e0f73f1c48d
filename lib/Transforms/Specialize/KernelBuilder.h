//===- KernelBuilder.h - the role-level kernel under construction -*- C++
//-*-===//
//
// KernelOps: the op-building shorthands every part of the kernel
// construction uses (index arithmetic, shared-memory and TMEM types,
// channels, loops, roles). KernelBuilder: the kernel itself: its signature
// and buffers, the kernel-wide values, the three components a kernel is
// built from (score stage, work schedule, role set), and the roles every
// family shares (TMA load and TMA store).
//
//===----------------------------------------------------------------------===//

#ifndef FA4_TRANSFORMS_SPECIALIZE_KERNELBUILDER_H
#define FA4_TRANSFORMS_SPECIALIZE_KERNELBUILDER_H

#include "TiledProgram.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/StringMap.h"

#include <memory>

namespace mlir::fa4::specialize {

class RoleSet;
class ScoreStage;

/// The tensors the kernel reads or writes through TMA.
enum class TmaOperand { query, key, value, output };
class WorkSchedule;
struct Tile;

/// Shorthands for the ops the kernel is made of, on one shared builder.
class KernelOps {
public:
  KernelOps(ImplicitLocOpBuilder &b, const KernelShape &shape)
      : b(b), shape(shape), ctx(b.getContext()) {}

protected:
  // Arithmetic on index values.
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value add(Value x, int64_t y) { return add(x, idx(y)); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value mul(Value x, int64_t y) { return mul(x, idx(y)); }
  Value div(Value x, int64_t y) { return arith::DivUIOp::create(b, x, idx(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, x, idx(y)); }
  /// `index` through a PTX move LLVM cannot look through or hoist: a
  /// value built from it again is not merged with the first.
  Value opaque(Value index);
  Value f32(float v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }
  /// 2^x of an f32 scalar (ex2.approx).
  Value exp2(Value x);
  /// The sum of the elements of f32 `vector` as a balanced tree of adds of
  /// its halves: log2(n) dependent vector adds, where vector.reduction adds
  /// in element order, one chain of n.
  Value treeSum(Value vector);
  /// P's rounding residual for P as hi + lo: `p` (f32) less its rounded
  /// operand `hi`, itself rounded to hi's type.
  Value roundingResidual(Value p, Value hi);

  // Types and views.
  MemRefType sharedType(ArrayRef<int64_t> shapeDims, Type element);
  /// A swizzled Q, K or V tile of `rows` rows and `atoms` atoms: [atoms,
  /// rows, atom columns].
  MemRefType tileType(int64_t rows, int64_t atoms) {
    return sharedType({atoms, rows, shape.atomColumns()}, shape.element);
  }
  /// A swizzled O tile of `rows` rows: [O atoms, rows, 64] of O's element.
  MemRefType outputTileType(int64_t rows) {
    return sharedType({shape.oAtoms(), rows, kAtom}, shape.outElement);
  }
  /// The TMA box of one atom of `operand`'s tile: [1, positions, heads,
  /// atom columns] for Q and O (packed query heads), [1, blockN, 1, atom
  /// columns] for K and V (a page's rows where pages are smaller than a
  /// block); a key-major V's [1, Dv, 1, blockN].
  MemRefType boxType(TmaOperand operand);
  nvgpu::TensorMapDescriptorType descriptorType(TmaOperand operand);
  TmemType tmemType(int64_t elements, Type element) {
    return TmemType::get(ctx, kRows, elements, element);
  }
  /// `elements` of `element` type from `column` of TMEM `region`.
  Value tmemView(Value region, int64_t column, int64_t elements, Type element) {
    return TmemViewOp::create(b, tmemType(elements, element), region, column);
  }
  /// A `type` view at byte `offset` of shared-memory `buffer`.
  Value smemView(Value buffer, Value offset, Type type) {
    return memref::ViewOp::create(b, type, buffer, offset, ValueRange{});
  }

  // Channels.
  Value channel(StringRef name, int64_t stages, EndpointAttr producer,
                EndpointAttr consumer,
                std::optional<uint32_t> namedBarrier = std::nullopt);
  EndpointAttr tma() { return EndpointAttr::get(ctx, EndpointKind::tma, 0); }
  EndpointAttr mma() { return EndpointAttr::get(ctx, EndpointKind::mma, 0); }
  EndpointAttr threads(int64_t n) {
    return EndpointAttr::get(ctx, EndpointKind::threads, n);
  }

  // Structure.
  /// A loop over [0, count) with the body built in place.
  void forRange(Value count, function_ref<void(Value)> body);
  /// Runs `body` in one elected thread of the warp.
  void elected(function_ref<void()> body);
  /// A role on warps [firstWarp, endWarp) whose body `body` builds.
  void role(StringRef name, int64_t firstWarp, int64_t endWarp,
            int64_t registers, function_ref<void()> body);

  // Synchronization within a thread or a warp (upstream NVVM ops).
  /// Waits for this thread's TMEM loads (`load`) or stores.
  void tmemWait(bool load) {
    NVVM::Tcgen05WaitOp::create(b, load ? NVVM::Tcgen05WaitKind::LOAD
                                        : NVVM::Tcgen05WaitKind::STORE);
  }
  /// Whether `predicate` holds in any lane of the warp.
  Value warpAny(Value predicate) {
    Value allLanes = arith::ConstantOp::create(b, b.getI32IntegerAttr(-1));
    return NVVM::VoteSyncOp::create(b, b.getI1Type(), allLanes, predicate,
                                    NVVM::VoteSyncKind::any);
  }
  /// Stores `packed` (16-bit, whole 16-byte pieces) into row `row` of a
  /// 128-byte-swizzled `tile` ([atoms, rows, 64]) from a column known at
  /// run time (a multiple of the piece count's width, so that they stay in
  /// one atom).
  void storeSwizzled(Value packed, Value firstColumn, Value tile, Value row);
  /// Orders this thread's shared-memory writes before later TMA reads.
  void fenceProxyAsync() {
    NVVM::FenceProxyOp::create(
        b, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  }

  ImplicitLocOpBuilder &b;
  const KernelShape &shape;
  MLIRContext *ctx;
};

/// What the epilogue needs of one row after its last KV block: the softmax's
/// max and sum with the row's sink joined (the loop's without sinks), the
/// factor that normalizes its O, and whether the row saw a key at all (its
/// O holds nothing otherwise: the factor is 0 then).
struct RowTotals {
  Value max, sum, factor, sawKey;
};

/// A shared-memory buffer of a role set, in bytes; fa4-allocate-smem places
/// it.
struct SharedBuffer {
  StringRef name;
  int64_t bytes, alignment;
};

/// Builds the role-level kernel of one attention op from its shape: the
/// signature, the buffers the role set asks for, the kernel-wide values,
/// then the role set's channels and roles in one fa4.warp_specialize.
class KernelBuilder : public KernelOps {
public:
  KernelBuilder(ImplicitLocOpBuilder &b, const KernelShape &shape);
  ~KernelBuilder();

  gpu::GPUFuncOp build(gpu::GPUModuleOp module, StringRef name);

  const KernelShape &getShape() const { return shape; }
  ImplicitLocOpBuilder &getBuilder() { return b; }
  ScoreStage &getScoreStage() { return *scoreStage; }
  /// Builds `body` once per work tile of this CTA, in the schedule's order.
  void forEachTile(function_ref<void(const Tile &)> body);
  /// The shared-memory buffer `name` of the role set.
  Value sharedBuffer(StringRef name) const {
    return sharedBuffers.lookup(name);
  }

  /// The TMA load role: per work tile, Q into its slot of channel `q`, then
  /// K and V of every block into the ring of channel `kv`. With
  /// `firstKeyBeforeQuery`, the tile's first K goes before its Q (ring slots
  /// free up while the consumers finish the previous tile, Q slots only once
  /// they have).
  void buildLoadRole(Value q, Value kv, bool firstKeyBeforeQuery);
  /// The TMA store role: writes O from the staging tile of hand-off `epi`,
  /// one per Q stage; with `stagingPerStage` each stage has its own tile.
  /// Dense batches: one elected thread; packed sequences: the whole warp,
  /// which copies the rows of a partial stage itself (the releasing side of
  /// `epi` is then its 32 threads: storeEndpoint).
  void buildStoreRole(Value epi, bool stagingPerStage);
  /// The threads of the store role that release the staging tile.
  EndpointAttr storeEndpoint() {
    return threads(shape.varlen || shape.splits() > 1 ? 32 : 1);
  }
  /// The TMA coordinates (row, batch) of row `row` of `tile`'s sequence in
  /// `operand` (Q and O share theirs, K and V theirs, but for a packed
  /// key-major V: valueStart).
  std::pair<Value, Value> tmaRows(const Tile &tile, TmaOperand operand,
                                  Value row);
  /// The first row of `tile`'s sequence in a packed key-major (FP8) V:
  /// align16(cu_seqlens_k[b]) + 16 b, so that every box starts 16-byte
  /// aligned, TMA's rule for its innermost coordinate.
  Value valueStart(const Tile &tile);
  /// Whether Q stage `stage` of `tile` reaches past its packed sequence
  /// (false for dense batches): the store role then copies its rows inside
  /// the sequence itself, since the TMA store would write the next
  /// sequence's.
  Value partialStage(const Tile &tile, int64_t stage);
  /// `tile` with its coordinates built again where the schedule can
  /// (Tile::recompute): for the epilogue, after the KV loop.
  Tile epilogueTile(const Tile &tile);
  /// The sink logit of row `row` of a Q tile of `tile` in log2 units (a
  /// global load: roles issue it early); null without sinks.
  Value sinkLogit(const Tile &tile, Value row);
  /// FP8 with descale factors: the factors of `tile`'s batch and K/V head
  /// (global loads: roles issue them early): q_descale * k_descale, which
  /// scales the raw scores, and v_descale, which scales O. Null without.
  std::pair<Value, Value> descaleFactors(const Tile &tile);
  /// A row's totals from the KV loop's final `rowMax` and `rowSum` (log2
  /// units) and its `sinkLogit` (null without sinks).
  RowTotals finishRow(Value sinkLogit, Value rowMax, Value rowSum);
  /// A row's LSE in the softmax's base-2, scale-folded units from its
  /// `rowMax` and `rowSum`: max + log2(sum), -inf where it saw no key.
  Value log2SumExp(Value rowMax, Value rowSum);
  /// Writes the natural-log LSE of row `row` of Q stage `stage`: (max +
  /// log2(sum)) * ln 2 in the base-2, scale-folded units of the softmax;
  /// -inf for a row that saw no key. Rows past Sq write nothing.
  void storeLse(const Tile &tile, int64_t stage, Value row, Value rowSum,
                Value rowMax);

  /// Whether row `row` of Q stage `stage` of `tile` is a query position
  /// inside the tile's sequence.
  Value rowInside(const Tile &tile, int64_t stage, Value row);

  // Split-KV (SplitKv.cpp). The splits of a work tile each write, per row,
  // their O normalized by their own sum and their LSE (log2 units) to the
  // workspace (a cluster split: to the CTA's exchange buffer); the store
  // role of the split that completes last (a cluster split: of every CTA,
  // a share of the rows each) combines them in split order and stores O
  // and LSE as an unsplit kernel does.
  /// The first f32 word of the record of row `row` of Q stage `stage` of
  /// `tile`: in the workspace (an i64 offset) or, for a cluster split, in
  /// the exchange buffer (an index).
  Value splitRecord(const Tile &tile, int64_t stage, Value row);
  /// The index of `tile` among the batch's work tiles (schedule-independent:
  /// its record's and its counters' place in the workspace).
  Value workTileIndex(const Tile &tile);
  /// Writes `values` (a vector of f32) as columns [column, ...) of split
  /// `split`'s partial row in `record`.
  void storePartialRow(Value record, Value split, Value column, Value values);
  /// Writes split `split`'s LSE of a row from the loop's `rowMax` and
  /// `rowSum` (-inf where it saw no key).
  void storePartialLse(Value record, Value split, Value rowMax, Value rowSum);

  // Rotary embedding (Rope.cpp).
  /// The cos and sin (f32 x 4 each) of the Q pieces this thread rotates in
  /// its first `rounds` rounds (zeros for pieces it skips), loaded before Q
  /// lands: their two dependent global loads (position, then table row)
  /// overlap the TMA load instead of following it. A decode tile's few
  /// rows (new tokens times packed heads) lie in the first rounds: 8 to 16
  /// rows a round at 128 threads; each round holds 8 registers.
  struct QueryAngles {
    SmallVector<Value> cos, sin;
  };
  static constexpr int64_t kEarlyAngleRounds = 2;
  QueryAngles loadQueryAngles(const Tile &tile, int64_t stage, Value thread,
                              int64_t threads,
                              int64_t rounds = kEarlyAngleRounds);
  /// Rotates the rotated columns of every row of Q stage `stage` of `tile`
  /// in shared memory (`qTile`, [atoms, rows, 64], as TMA wrote it) by
  /// `threads` threads, this one `thread`, with the angles of its first
  /// rounds from `early` (loadQueryAngles), then fences them for the async
  /// proxy; the caller makes them wait for one another before an MMA reads
  /// the tile.
  void rotateQueryTile(const Tile &tile, int64_t stage, Value qTile,
                       Value thread, int64_t threads, const QueryAngles &early);
  /// The f32 word (i64) where the cos_sin row of row `row` of Q stage
  /// `stage` of `tile` starts: its position clamped into the table.
  Value ropeTableRow(const Tile &tile, int64_t stage, Value row);
  /// Whether the table has rows (a run-time size; the kernel rotates
  /// nothing without).
  Value ropeTableHasRows();
  /// `values`, columns [column, column + n) of one row of O (f32), with
  /// the rotated columns among them rotated back by the angles of table
  /// row `tableRow` (ropeTableRow) where the table has rows.
  Value rotateRowBack(Value values, int64_t column, Value tableRow);
  /// rotateRowBack from a `column` known at run time (a multiple of 8):
  /// each 8-column piece of `values` inside the rotated columns, tested
  /// per piece.
  Value rotateRowBackAt(Value values, Value column, Value tableRow);
  /// `fragment` with its elements `lanes` (f32 (x, y) pairs, interleaved)
  /// rotated back by the angles of pairs [firstPair, ...) of table row
  /// `tableRow`.
  Value rotateLanesBack(Value fragment, ArrayRef<int64_t> lanes, Value tableRow,
                        Value firstPair);
  /// `pairs` (f32 (x, y) pairs, interleaved) rotated by the angles of
  /// pairs [firstPair, ...) of table row `tableRow` (ropeTableRow), or
  /// rotated back with `inverse`.
  Value rotatePairs(Value pairs, Value tableRow, Value firstPair, bool inverse);
  /// The cos and sin of `count` pairs [firstPair, ...) of table row
  /// `tableRow`.
  std::pair<Value, Value> loadAngles(Value tableRow, Value firstPair,
                                     int64_t count);
  /// `pairs` rotated by angles `cos` and `sin` (or back, `inverse`).
  Value rotateByAngles(Value pairs, Value cos, Value sin, bool inverse);

  /// Entry `offset` of i32 table `table` (a global pointer), as an index.
  Value loadTableEntry(Value table, Value offset);
  /// The keys a sequence (packed) or batch (a dense KV cache) uses: its
  /// seqused_k entry `index` clamped to [0, held], the keys it holds.
  Value usedKeys(Value index, Value held);

  /// Element `indices` of capture `capture` (a global load at its
  /// row-major offset, computed in 64 bits).
  Value loadCapture(unsigned capture, ValueRange indices);
  /// The size of dimension `dim` of capture `capture` (index).
  Value captureSize(unsigned capture, unsigned dim) const {
    return captures[capture].sizes[dim];
  }

  // The kernel's arguments.
  Value qDesc, kDesc, vDesc, oDesc, batch, seqQ, seqKv, scaleLog2;
  Value softcap; // the cap in raw-score units, with a softcap
  Value lseOut;
  Value sinks; // the sink logits [Hq], with sinks
  // FP8 descale factors [B, Hkv] (f32 pointers), with descale.
  Value qDescale, kDescale, vDescale;
  // Packed sequences: the tables (i32 pointers; seqused_k where given). The
  // batch is then the number of sequences, Sq and Skv the packed totals.
  // A dense KV cache: seqused_k, and paged the page table [B, maxPages]
  // (Skv is then maxPages pages).
  Value cuSeqlensQ, cuSeqlensK, sequsedK, pageTable, maxPages;
  // Split-KV: the workspace's partial rows (f32 records, splitRecord) and
  // its counters (i32, one per work tile and Q stage, 0 between launches).
  Value splitPartials, splitCounters;
  // Rotary embedding: the cos | sin table (f32 [P, R]), P, and the
  // positions (i32 [B, Sq]).
  Value ropeTable, ropeTableRows, ropePositions;
  // A cluster split: the exchange of the partial rows among the cluster's
  // CTAs (slot = Q stage of the `split_exchange` buffer).
  Value splitExchange;
  Value outputRows; // packed O [Tq, Hq, D] as a global pointer
  // Work tiles (batch x head blocks x tilesPerHead) and KV blocks of Skv
  // (dense batches only: a packed sequence's tiles have their own).
  Value tiles, tilesPerHead, kvBlocks;

private:
  /// The store role of split-KV (SplitKv.cpp): per Q stage of each unit,
  /// the whole warp counts the split done; where it is the last, it
  /// combines the splits' rows into the staging tile and stores it.
  void buildSplitStoreRole(Value epi, bool stagingPerStage);
  /// The store role of a cluster split (SplitKv.cpp): per Q stage of each
  /// tile, the warp publishes its CTA's partial rows, combines every n-th
  /// row from all n CTAs' rows into the staging tile of the cluster's
  /// first CTA, which stores it.
  void buildClusterStoreRole(Value epi, bool stagingPerStage);
  /// Where combineRow reads split `split`'s partial row (4 columns from
  /// `column`, a vector<4xf32>, or its LSE, an f32) and writes the combined
  /// row's 4 columns (a vector of the output element type) into the
  /// staging tile at (atom, row, column).
  struct CombineAccess {
    function_ref<Value(Value split, Value column)> partial;
    function_ref<Value(Value split)> lse;
    function_ref<void(Value value, ValueRange indices)> store;
  };
  /// The combine of row `row` of Q stage `stage` of `tile` by the store
  /// warp (`lane` its thread's lane), reading and writing through
  /// `access`, and its LSE.
  void combineRow(const Tile &tile, int64_t stage, Value row, Value lane,
                  const CombineAccess &access);
  /// A cluster split's exchange buffer as f32 words (splitRecord's).
  Value exchangeWords();
  /// The positions of Q stage `stage` of `tile` inside its sequence.
  Value stagePositions(const Tile &tile, int64_t stage);
  /// One thread's TMA store of the combined staging tile of Q stage
  /// `stage` of `tile`.
  void storeCombined(const Tile &tile, int64_t stage, bool stagingPerStage);
  /// The TMA stores of the staging tile of Q stage `stage` at row `row` of
  /// `tile`, then the wait until they have read it.
  void storeStaged(const Tile &tile, int64_t stage, Value row,
                   bool stagingPerStage);

  /// A tensor the score and mask regions read: a global pointer, and its
  /// sizes (constants, or kernel arguments where dynamic).
  struct Capture {
    MemRefType type;
    Value data;
    SmallVector<Value> sizes;
  };
  SmallVector<Capture> captures;
  std::unique_ptr<ScoreStage> scoreStage;
  std::unique_ptr<WorkSchedule> schedule;
  std::unique_ptr<RoleSet> roleSet;
  llvm::StringMap<Value> sharedBuffers;
};

} // namespace mlir::fa4::specialize

#endif // FA4_TRANSFORMS_SPECIALIZE_KERNELBUILDER_H

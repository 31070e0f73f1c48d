//===- TiledProgram.h - the tiled program fa4-specialize reads --*- C++ -*-===//
//
// The recognizer of the tiled single program fa4-tile writes, and
// KernelShape: everything the role-level kernel's shape depends on, read
// once from that program and its plan.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_TRANSFORMS_SPECIALIZE_TILEDPROGRAM_H
#define FA4_TRANSFORMS_SPECIALIZE_TILEDPROGRAM_H

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/Tcgen05Encoding.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::fa4::specialize {

constexpr int64_t kRows = 128;      // sm_100a: rows of a Q tile, TMEM lanes
constexpr int64_t kAtom = 64;       // 16-bit elements per swizzle atom row
constexpr int64_t kAtomRowBytes = 128; // bytes of a swizzle atom row
constexpr int64_t kChunk = 32;      // columns per softmax TMEM access
constexpr int64_t kWarpgroup = 128; // threads
constexpr int64_t kStatsPerRow = 2; // acc_scale or row_sum; row max

/// The FA4 forward program as fa4-tile writes it.
struct TiledProgram {
  TileCoordsOp coords;
  TileLoadOp query, key, value;
  TileMatmulOp scores, product;
  TileSoftcapOp softcap; // null without softcap
  TileMaskOp mask;
  TileSoftmaxOp softmax;
  TileRescaleOp rescale;
  TileNormalizeOp normalize;
  TileStoreOp store;
  TileStoreLseOp lse; // null without LSE
  TileSinkOp sink;    // null without attention sinks
  TileModifyOp modify; // null without score or mask regions
  TileSequenceOp sequence; // null without variable lengths
  TileKeysOp keys;         // null without a KV cache's lengths or pages
  TileDescaleOp descale;   // null without FP8 descale factors
  TileRopeOp queryRope;    // null without a rotary embedding
  TileRopeOp outputRope;   // null unless O is rotated back
  scf::ForOp stageLoop, kvLoop;
  int64_t kvHeadDivisor = 0; // query heads per KV head, as the program says
};

/// Everything the kernel's shape depends on, read once from the tiled program
/// and its plan.
struct KernelShape {
  PlanAttr plan;
  /// The element type of Q, K, V and P, and of O (16-bit; Q's but for
  /// FP8).
  Type element, outElement;
  /// FP8: the tile's descale factors scale Q K^T and P V (kernel
  /// arguments after LSE and the sinks), and V is read key-major (its keys
  /// contiguous: wgmma reads 8-bit B operands K-major only).
  bool descale = false, valueKeyMajor = false;
  /// Dqk (Q and K) and Dv (V and O).
  int64_t headDim, headDimV, queryHeads, groupSize, pack;
  bool causal, lse;
  /// Packed sequences of variable lengths (cu_seqlens tables), and whether
  /// a seqused_k table limits each sequence's keys.
  bool varlen = false, seqused = false;
  /// A paged KV cache's page size (keys per page; 0 without pages).
  int64_t pageSize = 0;
  /// Whether each query head's sink logit joins its rows' softmax.
  bool sink;
  /// The mask's window (left, right), -1 where unbounded, causal included.
  std::pair<int64_t, int64_t> window;
  Scheduler scheduler;
  double scaleLog2;
  /// The softcap in raw-score units (fa4.tile.softcap's cap), if any.
  std::optional<double> softcap;
  /// With a softcap: of every 16 scores, how many take the FMA polynomial
  /// tanh where the warp's scores lie within the cap.
  int64_t tanhOnFma = 0;
  /// With a softcap: the largest cap in log2 units at which the softmax
  /// takes it as the rows' reference (0: never; fa4.tile.softcap's
  /// ceiling).
  int64_t softcapCeiling = 0;
  int64_t rescaleThreshold, emulatedExp2;
  /// The tiled program's score and mask regions, inlined by the score
  /// stage (null without); the tensors they read, kernel arguments after
  /// LSE and the sinks.
  TileModifyOp modifier;
  SmallVector<MemRefType> captures;
  /// Rotary embedding: Q's columns [ropeStart, ropeStart + ropeColumns)
  /// rotated by each row's position (kernel arguments cos_sin and
  /// positions after the tables), and O's rotated back with ropeOutput.
  int64_t ropeStart = 0, ropeColumns = 0;
  bool ropeOutput = false;
  bool rope() const { return ropeColumns > 0; }

  bool hopper() const { return plan.getArch() == Arch::sm_90a; }
  /// Columns of one 128-byte swizzle atom row of a Q, K or V tile: 64
  /// 16-bit or 128 8-bit elements. O tiles are 16-bit: kAtom columns.
  int64_t atomColumns() const {
    return kAtomRowBytes * 8 / element.getIntOrFloatBitWidth();
  }
  /// Swizzle atoms of a Q or K tile (qkAtoms), of a V tile (vAtoms: along
  /// Dv, or key-major along its keys) and of an O tile (oAtoms); a head
  /// dim that is not a multiple of an atom fills the last in part (TMA
  /// zero-fills the columns past the tensor, the TMA store skips them).
  int64_t qkAtoms() const { return llvm::divideCeil(headDim, atomColumns()); }
  int64_t vAtoms() const {
    return llvm::divideCeil(valueKeyMajor ? kvRows() : headDimV, atomColumns());
  }
  int64_t oAtoms() const { return llvm::divideCeil(headDimV, kAtom); }
  /// Rows of a V tile: its keys, or key-major its Dv head-dim columns.
  int64_t vRows() const { return valueKeyMajor ? headDimV : kvRows(); }
  /// The contraction depth QK^T names when the last atom is partly filled
  /// (its MMAs read headDim columns rounded up to their K step, not the
  /// atoms' width: FP8's 32-element step reads zero-filled columns past a
  /// head dim of 80), else null.
  IntegerAttr depthAttr(Builder &b) const {
    int64_t depth = llvm::alignTo(
        headDim, tcgen05::stepElements(element.getIntOrFloatBitWidth()));
    return depth % atomColumns() ? b.getI64IntegerAttr(depth) : IntegerAttr();
  }
  int64_t qRows() const { return plan.getBlockM(); }
  int64_t kvRows() const { return plan.getBlockN(); }
  /// Rows of one K or V TMA box: a block, or a page where pages are
  /// smaller (a block then spans blockN / pageSize pages).
  int64_t kvBoxRows() const {
    return pageSize ? std::min(pageSize, kvRows()) : kvRows();
  }
  /// Query positions of one Q tile (pack heads share each position).
  int64_t positionsPerTile() const { return qRows() / pack; }
  /// Query positions of one work tile (its qStages Q tiles).
  int64_t positionsPerWorkTile() const {
    return plan.getQStages() * positionsPerTile();
  }
  /// Blocks of `pack` query heads.
  int64_t headBlocks() const { return queryHeads / pack; }
  int64_t qTileBytes() const { return qkAtoms() * atomBytes(qRows()); }
  int64_t oTileBytes() const { return oAtoms() * atomBytes(qRows()); }
  /// Shared keys: a Q stage's P tile, its rows of blockN 16-bit keys.
  int64_t pTileBytes() const {
    return plan.getBlockN() / kAtom * atomBytes(qRows());
  }
  /// Q slots: sm_90a double-buffers each consumer's Q where it fits, so
  /// that the next tile's loads before the consumer is done with this one.
  int64_t qSlots() const { return plan.getQSlots(); }
  /// A slot of the K/V ring holds a K or a V tile: the larger of the two.
  int64_t kvTileBytes() const {
    return std::max(qkAtoms() * atomBytes(kvRows()),
                    vAtoms() * atomBytes(vRows()));
  }
  /// Bytes of one swizzle atom of a `rows`-row tile.
  static int64_t atomBytes(int64_t rows) { return rows * kAtomRowBytes; }
  /// Split-KV: CTAs sharing a work tile's KV blocks (1: no split), and the
  /// f32 words of one row's workspace record: each split's normalized
  /// partial row (Dv), then each split's LSE, padded to 16 bytes.
  int64_t splits() const { return plan.getSplits(); }
  /// Split-KV through the global workspace (not a cluster split).
  bool workspaceSplit() const { return splits() > 1 && !plan.isClusterSplit(); }
  /// f32 words of a row in a cluster split's exchange: Dv partial columns
  /// and the LSE, padded to 16 bytes.
  int64_t exchangeRowWords() const { return headDimV + 4; }
  int64_t exchangeStageBytes() const {
    return qRows() * exchangeRowWords() * 4;
  }
  int64_t splitRecordWords() const {
    return splits() * headDimV + llvm::alignTo(splits(), 4);
  }
  int64_t statsBytes() const {
    return plan.getSoftmaxWarpgroups() * kStatsPerRow * kRows * 4;
  }
};

/// Finds the FA4 forward program in `kernel`, or reports at the first op
/// that differs.
FailureOr<TiledProgram> recognize(gpu::GPUFuncOp kernel);

/// Reads the kernel's shape from its program, checking it against the plan
/// and what fa4-specialize can build.
FailureOr<KernelShape> readShape(gpu::GPUFuncOp kernel, PlanAttr plan,
                                 TiledProgram program);

} // namespace mlir::fa4::specialize

#endif // FA4_TRANSFORMS_SPECIALIZE_TILEDPROGRAM_H

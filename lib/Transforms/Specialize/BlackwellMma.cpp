//===- BlackwellMma.cpp - the sm_100a MMA warp ---------------------------===//
//
// The MMA warp of the FA4 role set: S = Q K^T into each softmax
// warpgroup's S and O += P V from its P (or, P as hi + lo, from the parts
// in S's columns), one block ahead; with interleaved softmax warpgroups the
// blocks alternate between them.
//
//===----------------------------------------------------------------------===//

#include "BlackwellRoles.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

Value BlackwellPrefillRoles::valueTile(Value handoff) {
  Value offset =
      mul(rem(handoff, shape.plan.getKvStages()), shape.kvTileBytes());
  return smemView(kernel.sharedBuffer("kv"), offset,
                  tileType(shape.vRows(), shape.vAtoms()));
}

Value BlackwellPrefillRoles::valueKeys(Value vTile, int64_t first,
                                       int64_t keys) {
  // Row ranges of an MN-major V (keys x Dv), column ranges of a key-major
  // one (Dv x keys, FP8: one atom of 128 keys).
  SmallVector<int64_t> offsets{0, 0, 0},
      sizes{shape.vAtoms(), shape.vRows(), shape.atomColumns()};
  int64_t dim = shape.valueKeyMajor ? 2 : 1;
  offsets[dim] = first;
  sizes[dim] = keys;
  return memref::SubViewOp::create(b, vTile, offsets, sizes,
                                   ArrayRef<int64_t>{1, 1, 1});
}

std::pair<Value, Value> BlackwellPrefillRoles::valueParts(Value handoff) {
  int64_t blockN = shape.plan.getBlockN(), split = shape.plan.getPvSplit();
  Value v = valueTile(handoff);
  Value top = valueKeys(v, 0, split);
  return {top, valueKeys(v, split, blockN - split)};
}

std::pair<Value, Value> BlackwellPrefillRoles::pHalves(Value region) {
  // 16-bit P two per column, e4m3 four.
  int64_t blockN = shape.plan.getBlockN(), split = shape.plan.getPvSplit();
  int64_t bits = shape.element.getIntOrFloatBitWidth();
  return {tmemView(region, 0, split, shape.element),
          tmemView(region, split * bits / 32, blockN - split, shape.element)};
}

std::pair<Value, Value> BlackwellPrefillRoles::pParts(Value region, int64_t c) {
  // kChunk f32 columns of S hold the chunk's kChunk 16-bit hi and lo.
  return {tmemView(region, c * kChunk, kChunk, shape.element),
          tmemView(region, c * kChunk + kChunk / 2, kChunk, shape.element)};
}

void BlackwellPrefillRoles::issuePv(int64_t warpgroup, Value k, Value pTop,
                                    Value pBottom, Value vHandoff,
                                    Value accumulate) {
  // An FP8 V is read key-major (8-bit MMA operands are K-major).
  OperandMajor vMajor =
      shape.valueKeyMajor ? OperandMajor::k : OperandMajor::mn;
  if (shape.plan.isHiLo()) {
    // Per chunk: O += hi V_c + lo V_c, the chunks before pvSplit once the
    // softmax handed over the first part.
    Value always = arith::ConstantIntOp::create(b, 1, 1);
    int64_t chunks = shape.plan.getBlockN() / kChunk;
    int64_t firstPart = shape.plan.getPvSplit() / kChunk;
    Value vTile = valueTile(vHandoff);
    for (int64_t c = 0; c < chunks; ++c) {
      if (c == 0 || c == firstPart)
        ChannelWaitOp::create(
            b, c == 0 ? pFirst[warpgroup] : pSecond[warpgroup], k);
      auto [hi, lo] = pParts(sTmem[warpgroup], c);
      Value v = valueKeys(vTile, c * kChunk, kChunk);
      MmaOp::create(b, hi, v, oTmem[warpgroup], c == 0 ? accumulate : always,
                    vMajor, /*depth=*/IntegerAttr(), /*ws=*/IntegerAttr(),
                    /*aMajor=*/OperandMajorAttr());
      MmaOp::create(b, lo, v, oTmem[warpgroup], always, vMajor,
                    /*depth=*/IntegerAttr(), /*ws=*/IntegerAttr(),
                    /*aMajor=*/OperandMajorAttr());
    }
    return;
  }
  if (keyShares > 1) {
    // Shared keys: one weight-stationary PV MMA of P from shared memory.
    ChannelWaitOp::create(b, pFirst[warpgroup], k);
    MmaOp::create(b, pTile(warpgroup), valueTile(vHandoff), oTmem[warpgroup],
                  accumulate, vMajor, /*depth=*/IntegerAttr(), foldedRows(),
                  /*aMajor=*/OperandMajorAttr());
    return;
  }
  auto [vTop, vBottom] = valueParts(vHandoff);
  ChannelWaitOp::create(b, pFirst[warpgroup], k);
  MmaOp::create(b, pTop, vTop, oTmem[warpgroup], accumulate, vMajor,
                /*depth=*/IntegerAttr(), /*ws=*/IntegerAttr(),
                /*aMajor=*/OperandMajorAttr());
  ChannelWaitOp::create(b, pSecond[warpgroup], k);
  MmaOp::create(b, pBottom, vBottom, oTmem[warpgroup],
                arith::ConstantIntOp::create(b, 1, 1), vMajor,
                /*depth=*/IntegerAttr(), /*ws=*/IntegerAttr(),
                /*aMajor=*/OperandMajorAttr());
}

void BlackwellPrefillRoles::buildMma() {
  PlanAttr plan = shape.plan;
  int64_t stages = plan.getQStages(), kvStages = plan.getKvStages();
  Value falseValue = arith::ConstantIntOp::create(b, 0, 1);

  Value qSmem = kernel.sharedBuffer("q"), kvSmem = kernel.sharedBuffer("kv");
  elected([&] {
    kernel.forEachTile([&](const Tile &tile) {
      Value base = tile.kvBase, ordinal = tile.ordinal;
      SmallVector<Value> qHandoff, qTile, sRegion, pTop, pBottom;
      Value qIn = shape.rope() ? qRotated : q;
      for (int64_t stage = 0; stage < stages; ++stage) {
        qHandoff.push_back(add(mul(ordinal, stages), stage));
        ChannelWaitOp::create(b, qIn, qHandoff.back());
        qTile.push_back(smemView(qSmem, idx(stage * shape.qTileBytes()),
                                 tileType(shape.qRows(), shape.qkAtoms())));
        sRegion.push_back(sTmem[stage]);
        auto [top, bottom] =
            pTmem.empty() ? std::pair<Value, Value>() : pHalves(pTmem[stage]);
        pTop.push_back(top);
        pBottom.push_back(bottom);
      }
      // PV for `stage` of the block whose hand-off number is `k`, with the V
      // tile of hand-off `vHandoff`.
      auto pv = [&](int64_t stage, Value k, Value vHandoff, Value accumulate) {
        issuePv(stage, k, pTop[stage], pBottom[stage], vHandoff, accumulate);
      };

      // Per KV block: the previous block's PVs, then this block's QK^T, for
      // every Q stage. tcgen05 MMAs of one thread run in order, so S is
      // overwritten only after the PV that read P from it.
      forRange(tile.blocks, [&](Value n) {
        Value k = add(base, n);
        Value kHandoff = mul(k, 2);
        Value kOffset = mul(rem(kHandoff, kvStages), shape.kvTileBytes());
        Value kTile = smemView(kvSmem, kOffset,
                               tileType(shape.kvRows(), shape.qkAtoms()));
        ChannelWaitOp::create(b, kv, kHandoff);
        Value started =
            arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(0));
        Value accumulate =
            arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(1));
        for (int64_t stage = 0; stage < stages; ++stage) {
          auto ifOp = scf::IfOp::create(b, started);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(ifOp.thenBlock());
            Value previous = arith::SubIOp::create(b, k, idx(1));
            pv(stage, previous, arith::SubIOp::create(b, kHandoff, idx(1)),
               accumulate);
          }
          MmaOp::create(b, qTile[stage], kTile, sRegion[stage], falseValue,
                        OperandMajor::k, shape.depthAttr(b), foldedRows(),
                        /*aMajor=*/OperandMajorAttr());
          ChannelCommitOp::create(b, s[stage], k);
        }
        ChannelReleaseOp::create(b, kv, kHandoff);
        auto ifOp = scf::IfOp::create(b, started);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          ChannelReleaseOp::create(b, kv,
                                   arith::SubIOp::create(b, kHandoff, idx(1)));
        }
        ChannelWaitOp::create(b, kv, add(kHandoff, 1));
      });

      // The last block's PVs complete O (a tile with no block has none: its
      // rows saw no key).
      Value anyBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                             tile.blocks, idx(0));
      auto lastIf = scf::IfOp::create(b, anyBlock);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(lastIf.thenBlock());
        Value last = arith::SubIOp::create(b, add(base, tile.blocks), idx(1));
        Value lastV = add(mul(last, 2), 1);
        Value accumulate = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                                 tile.blocks, idx(1));
        for (int64_t stage = 0; stage < stages; ++stage)
          pv(stage, last, lastV, accumulate);
        ChannelReleaseOp::create(b, kv, lastV);
      }
      // A tile with blocks only gets here after the correction warps took
      // the previous O (its PVs waited for them), but one without blocks
      // would hand over O again before the previous hand-off was taken.
      for (int64_t stage = 0; stage < stages; ++stage) {
        ChannelAcquireOp::create(b, oReady[stage], ordinal);
        ChannelCommitOp::create(b, oReady[stage], ordinal);
      }
      for (Value handoff : qHandoff)
        ChannelReleaseOp::create(b, qIn, handoff);
    });
  });
}

void BlackwellPrefillRoles::buildInterleavedMma() {
  int64_t kvStages = shape.plan.getKvStages();
  Value falseValue = arith::ConstantIntOp::create(b, 0, 1);
  Value qSmem = kernel.sharedBuffer("q"), kvSmem = kernel.sharedBuffer("kv");
  Value qIn = shape.rope() ? qRotated : q;

  elected([&] {
    kernel.forEachTile([&](const Tile &tile) {
      // One Q tile for both warpgroups.
      Value qHandoff = tile.ordinal;
      ChannelWaitOp::create(b, qIn, qHandoff);
      Value qTile =
          smemView(qSmem, idx(0), tileType(shape.qRows(), shape.qkAtoms()));
      // Block n's QK^T into its warpgroup's S.
      auto scores = [&](int64_t warpgroup, Value n, Value kTile) {
        MmaOp::create(b, qTile, kTile, sTmem[warpgroup], falseValue,
                      OperandMajor::k, shape.depthAttr(b),
                      /*ws=*/IntegerAttr(),
                      /*aMajor=*/OperandMajorAttr());
        ChannelCommitOp::create(b, s[warpgroup], blockHandoff(tile, n));
      };
      // Block n's PV into its warpgroup's O (`accumulate`: O holds an
      // earlier block of the tile).
      auto pv = [&](int64_t warpgroup, Value n, Value accumulate) {
        auto [pTop, pBottom] = pTmem.empty() ? std::pair<Value, Value>()
                                             : pHalves(pTmem[warpgroup]);
        issuePv(warpgroup, blockHandoff(tile, n), pTop, pBottom,
                add(mul(add(tile.kvBase, n), 2), 1), accumulate);
      };
      // `build(w)` for the warpgroup of block n (a run-time choice).
      auto onWarpgroupOf = [&](Value n, function_ref<void(int64_t)> build) {
        Value second = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                             warpgroupOf(tile, n), idx(1));
        auto ifOp = scf::IfOp::create(b, second, /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        build(1);
        b.setInsertionPointToStart(ifOp.elseBlock());
        build(0);
      };

      // Per KV block: its QK^T into its warpgroup's S, then the previous
      // block's PV into the other warpgroup's O, which overlaps with this
      // block's softmax. A warpgroup's S is overwritten only after the PV
      // that read its P (issued a block earlier; tcgen05 MMAs of one thread
      // run in order).
      forRange(tile.blocks, [&](Value n) {
        Value kHandoff = mul(add(tile.kvBase, n), 2);
        Value kOffset = mul(rem(kHandoff, kvStages), shape.kvTileBytes());
        Value kTile = smemView(kvSmem, kOffset,
                               tileType(shape.kvRows(), shape.qkAtoms()));
        ChannelWaitOp::create(b, kv, kHandoff);
        onWarpgroupOf(n, [&](int64_t w) { scores(w, n, kTile); });
        ChannelReleaseOp::create(b, kv, kHandoff);
        Value started =
            arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(0));
        auto ifOp = scf::IfOp::create(b, started);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          Value previous = arith::SubIOp::create(b, n, idx(1));
          // The previous block is its warpgroup's first of the tile unless
          // n - 1 >= 2.
          Value accumulate =
              arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(2));
          onWarpgroupOf(previous,
                        [&](int64_t w) { pv(w, previous, accumulate); });
          ChannelReleaseOp::create(b, kv,
                                   arith::SubIOp::create(b, kHandoff, idx(1)));
        }
        ChannelWaitOp::create(b, kv, add(kHandoff, 1));
      });

      // The last block's PV (a tile with no block has none).
      Value anyBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                             tile.blocks, idx(0));
      auto lastIf = scf::IfOp::create(b, anyBlock);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(lastIf.thenBlock());
        Value last = arith::SubIOp::create(b, tile.blocks, idx(1));
        Value accumulate = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                                 tile.blocks, idx(2));
        onWarpgroupOf(last, [&](int64_t w) { pv(w, last, accumulate); });
        ChannelReleaseOp::create(b, kv, add(mul(add(tile.kvBase, last), 2), 1));
      }
      // Both Os, complete (or, for a warpgroup without blocks in the tile,
      // untouched: the epilogue leaves that one out) once the MMAs before
      // this commit are.
      for (int64_t warpgroup = 0; warpgroup < warpgroups; ++warpgroup) {
        ChannelAcquireOp::create(b, oReady[warpgroup], tile.ordinal);
        ChannelCommitOp::create(b, oReady[warpgroup], tile.ordinal);
      }
      ChannelReleaseOp::create(b, qIn, qHandoff);
    });
  });
}

//===- Rope.cpp - the rotary position embedding of Q and O ----------------===//
//
// fa4.tile.rope in the kernel: Q's rotated columns are rotated where the
// TMA load put them in shared memory, before the MMA reads them; O's are
// rotated back in registers in the epilogue. Pairs are GPT-J's (adjacent
// columns), so that a 16-byte piece of a Q row holds four whole pairs and
// an accumulator's column pair (c, c + 1) is one pair.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "WorkSchedule.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

Value KernelBuilder::ropeTableRow(const Tile &tile, int64_t stage, Value row) {
  Type i64Type = b.getI64Type();
  auto toI64 = [&](Value index) {
    return arith::IndexCastOp::create(b, i64Type, index);
  };
  // The row's query position; a row past Sq reads the last query's entry
  // (it is neither rotated usefully nor stored).
  Value position = add(add(tile.position, stage * shape.positionsPerTile()),
                       div(row, shape.pack));
  Value last = arith::SubIOp::create(b, tile.seqQ, idx(1));
  position = arith::MinUIOp::create(b, position, last);
  // positions[b, i] of a dense batch, the token's of packed sequences.
  Value entry = tile.queryStart ? add(tile.queryStart, position)
                                : add(mul(tile.batch, seqQ), position);
  Value address =
      LLVM::GEPOp::create(b, ropePositions.getType(), b.getI32Type(),
                          ropePositions, ValueRange{toI64(entry)});
  Value tokenPosition = arith::ExtSIOp::create(
      b, i64Type, LLVM::LoadOp::create(b, b.getI32Type(), address));
  // Clamped into the table's rows; 0 for a table without rows, which the
  // callers then do not read (ropeTableHasRows).
  Value zero = arith::ConstantIntOp::create(b, i64Type, 0);
  Value lastRow = arith::SubIOp::create(
      b, toI64(ropeTableRows), arith::ConstantIntOp::create(b, i64Type, 1));
  Value clamped = arith::MaxSIOp::create(
      b, arith::MinSIOp::create(b, tokenPosition, lastRow), zero);
  return arith::MulIOp::create(
      b, clamped, arith::ConstantIntOp::create(b, i64Type, shape.ropeColumns));
}

Value KernelBuilder::ropeTableHasRows() {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, ropeTableRows,
                               idx(0));
}

Value KernelBuilder::rotateRowBack(Value values, int64_t column,
                                   Value tableRow) {
  auto type = cast<VectorType>(values.getType());
  int64_t end = column + type.getNumElements();
  int64_t first = std::max(column, shape.ropeStart);
  int64_t last = std::min(end, shape.ropeStart + shape.ropeColumns);
  if (first >= last)
    return values;
  auto ifOp = scf::IfOp::create(b, TypeRange{type}, ropeTableHasRows(),
                                /*addThenBlock=*/true, /*addElseBlock=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  // Pieces of 8 columns (four pairs: 16-byte loads of the table), which
  // the rotated columns' multiples of 8 never split.
  Value rotated = values;
  for (int64_t piece = first; piece < last; piece += 8) {
    SmallVector<int64_t> lanes;
    for (int64_t e = 0; e < 8; ++e)
      lanes.push_back(piece - column + e);
    rotated = rotateLanesBack(rotated, lanes, tableRow,
                              idx((piece - shape.ropeStart) / 2));
  }
  scf::YieldOp::create(b, ValueRange{rotated});
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, ValueRange{values});
  return ifOp.getResult(0);
}

Value KernelBuilder::rotateRowBackAt(Value values, Value column,
                                     Value tableRow) {
  auto type = cast<VectorType>(values.getType());
  Value rotated = values;
  for (int64_t piece = 0; piece < type.getNumElements(); piece += 8) {
    Value pieceColumn = add(column, piece);
    Value inside = arith::AndIOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::uge, pieceColumn,
                              idx(shape.ropeStart)),
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, pieceColumn,
                              idx(shape.ropeStart + shape.ropeColumns)));
    auto ifOp =
        scf::IfOp::create(b, TypeRange{type},
                          arith::AndIOp::create(b, inside, ropeTableHasRows()),
                          /*addThenBlock=*/true, /*addElseBlock=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    SmallVector<int64_t> lanes;
    for (int64_t e = 0; e < 8; ++e)
      lanes.push_back(piece + e);
    Value firstPair =
        div(arith::SubIOp::create(b, pieceColumn, idx(shape.ropeStart)), 2);
    scf::YieldOp::create(
        b, ValueRange{rotateLanesBack(rotated, lanes, tableRow, firstPair)});
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, ValueRange{rotated});
    b.setInsertionPointAfter(ifOp);
    rotated = ifOp.getResult(0);
  }
  return rotated;
}

Value KernelBuilder::rotateLanesBack(Value fragment, ArrayRef<int64_t> lanes,
                                     Value tableRow, Value firstPair) {
  Value pairs = vector::ShuffleOp::create(b, fragment, fragment, lanes);
  Value back = rotatePairs(pairs, tableRow, firstPair, /*inverse=*/true);
  for (auto [k, lane] : llvm::enumerate(lanes))
    fragment = vector::InsertOp::create(
        b, vector::ExtractOp::create(b, back, ArrayRef<int64_t>{int64_t(k)}),
        fragment, ArrayRef<int64_t>{lane});
  return fragment;
}

Value KernelBuilder::rotatePairs(Value pairs, Value tableRow, Value firstPair,
                                 bool inverse) {
  int64_t count = cast<VectorType>(pairs.getType()).getNumElements() / 2;
  auto [cos, sin] = loadAngles(tableRow, firstPair, count);
  return rotateByAngles(pairs, cos, sin, inverse);
}

std::pair<Value, Value>
KernelBuilder::loadAngles(Value tableRow, Value firstPair, int64_t count) {
  Type f32Type = b.getF32Type(), i64Type = b.getI64Type();
  auto halfType = VectorType::get({count}, f32Type);
  // cos of pairs [firstPair, firstPair + count), then their sin R / 2
  // words later.
  Value first = arith::AddIOp::create(
      b, tableRow, arith::IndexCastOp::create(b, i64Type, firstPair));
  auto load = [&](Value offset) -> Value {
    Value address = LLVM::GEPOp::create(b, ropeTable.getType(), f32Type,
                                        ropeTable, ValueRange{offset});
    return LLVM::LoadOp::create(b, halfType, address,
                                /*alignment=*/std::min<int64_t>(4 * count, 16));
  };
  Value cos = load(first);
  Value sin = load(arith::AddIOp::create(
      b, first,
      arith::ConstantIntOp::create(b, i64Type, shape.ropeColumns / 2)));
  return {cos, sin};
}

Value KernelBuilder::rotateByAngles(Value pairs, Value cos, Value sin,
                                    bool inverse) {
  int64_t count = cast<VectorType>(pairs.getType()).getNumElements() / 2;
  SmallVector<int64_t> evens, odds, interleave;
  for (int64_t k = 0; k < count; ++k) {
    evens.push_back(2 * k);
    odds.push_back(2 * k + 1);
    interleave.push_back(k);
    interleave.push_back(count + k);
  }
  Value x = vector::ShuffleOp::create(b, pairs, pairs, evens);
  Value y = vector::ShuffleOp::create(b, pairs, pairs, odds);
  auto contract =
      arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::contract);
  auto mulf = [&](Value u, Value v) {
    return arith::MulFOp::create(b, u, v, contract);
  };
  // Forward: (x c - y s, y c + x s); inverse: (x c + y s, y c - x s).
  Value xc = mulf(x, cos), ys = mulf(y, sin), yc = mulf(y, cos),
        xs = mulf(x, sin);
  Value newX = inverse ? Value(arith::AddFOp::create(b, xc, ys, contract))
                       : Value(arith::SubFOp::create(b, xc, ys, contract));
  Value newY = inverse ? Value(arith::SubFOp::create(b, yc, xs, contract))
                       : Value(arith::AddFOp::create(b, yc, xs, contract));
  return vector::ShuffleOp::create(b, newX, newY, interleave);
}

// Q's rotated columns as pieces of 16 bytes (four pairs), rows x (R / 8),
// spread over the threads round by round; a row's pieces are consecutive,
// so a warp reads whole rows' runs of the table.

KernelBuilder::QueryAngles
KernelBuilder::loadQueryAngles(const Tile &tile, int64_t stage, Value thread,
                               int64_t threads, int64_t rounds) {
  int64_t piecesPerRow = shape.ropeColumns / 8;
  int64_t pieces = shape.qRows() * piecesPerRow;
  rounds = std::min<int64_t>(rounds, llvm::divideCeil(pieces, threads));
  auto quarterType = VectorType::get({4}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(
      b, quarterType, DenseElementsAttr::get(quarterType, 0.0f));
  QueryAngles angles;
  for (int64_t round = 0; round < rounds; ++round) {
    Value piece = add(thread, round * threads);
    Value row = div(piece, piecesPerRow);
    Value wanted = arith::AndIOp::create(
        b,
        arith::AndIOp::create(b, ropeTableHasRows(),
                              arith::CmpIOp::create(b,
                                                    arith::CmpIPredicate::ult,
                                                    piece, idx(pieces))),
        rowInside(tile, stage, row));
    auto ifOp = scf::IfOp::create(b, TypeRange{quarterType, quarterType},
                                  wanted, /*addThenBlock=*/true,
                                  /*addElseBlock=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto [cos, sin] = loadAngles(ropeTableRow(tile, stage, row),
                                 mul(rem(piece, piecesPerRow), 4), 4);
    scf::YieldOp::create(b, ValueRange{cos, sin});
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, ValueRange{zeros, zeros});
    angles.cos.push_back(ifOp.getResult(0));
    angles.sin.push_back(ifOp.getResult(1));
  }
  return angles;
}

void KernelBuilder::rotateQueryTile(const Tile &tile, int64_t stage,
                                    Value qTile, Value thread, int64_t threads,
                                    const QueryAngles &early) {
  int64_t piecesPerRow = shape.ropeColumns / 8;
  int64_t pieces = shape.qRows() * piecesPerRow;
  int64_t rounds = llvm::divideCeil(pieces, threads);
  int64_t earlyRounds = early.cos.size();
  auto hasRows = scf::IfOp::create(b, ropeTableHasRows());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(hasRows.thenBlock());
  auto pieceType = VectorType::get({8}, shape.element);
  auto wideType = VectorType::get({8}, b.getF32Type());
  // The piece of round `round` (this thread's), rotated by the angles
  // `angles` gives for its row and pairs.
  auto rotatePiece =
      [&](Value round,
          function_ref<std::pair<Value, Value>(Value row, Value pieceInRow)>
              angles) {
        Value piece = add(mul(round, threads), thread);
        Value inside = arith::AndIOp::create(
            b,
            arith::CmpIOp::create(b, arith::CmpIPredicate::ult, piece,
                                  idx(pieces)),
            rowInside(tile, stage, div(piece, piecesPerRow)));
        auto ifOp = scf::IfOp::create(b, inside);
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value row = div(piece, piecesPerRow);
        Value pieceInRow = rem(piece, piecesPerRow);
        // Column ropeStart + 8 piece of the 128-byte swizzle: 16-byte chunk
        // j of row r sits at chunk j xor (r mod 8) of its atom.
        Value column = add(mul(pieceInRow, 8), shape.ropeStart);
        Value atom = div(column, kAtom);
        Value chunk =
            arith::XOrIOp::create(b, div(rem(column, kAtom), 8), rem(row, 8));
        SmallVector<Value> at = {atom, row, mul(chunk, 8)};
        Value q = vector::LoadOp::create(b, pieceType, qTile, at);
        auto [cos, sin] = angles(row, pieceInRow);
        Value rotated = rotateByAngles(arith::ExtFOp::create(b, wideType, q),
                                       cos, sin, /*inverse=*/false);
        vector::StoreOp::create(
            b, arith::TruncFOp::create(b, pieceType, rotated), qTile, at);
      };
  for (int64_t round = 0; round < earlyRounds; ++round)
    rotatePiece(idx(round), [&](Value, Value) {
      return std::make_pair(early.cos[round], early.sin[round]);
    });
  if (rounds > earlyRounds)
    forRange(idx(rounds - earlyRounds), [&](Value later) {
      rotatePiece(add(later, earlyRounds), [&](Value row, Value pieceInRow) {
        return loadAngles(ropeTableRow(tile, stage, row), mul(pieceInRow, 4),
                          4);
      });
    });
  // The MMA reads Q through the async proxy.
  fenceProxyAsync();
}

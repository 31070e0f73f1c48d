//===- SharedMemory.cpp - shared memory and its ordinary accesses ---------===//
//
// The CTA's dynamic shared memory as bytes: views into it (memref.view and
// subview), the ordinary loads and stores of memref and vector, their
// bounds checks and race detection, and the async proxy's view of them: an
// ordinary store stays invisible to TMA stores and MMA operand reads unless
// a fence.proxy.async its thread executed after it happens before the read.
//
//===----------------------------------------------------------------------===//

#include "Cta.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

//===----------------------------------------------------------------------===//
// Addresses, elements and accesses
//===----------------------------------------------------------------------===//

std::optional<int64_t> Cta::sharedAddress(Operation *op, const Val &ref,
                                          MemRefType type,
                                          ArrayRef<int64_t> indices,
                                          int64_t count) {
  if (ref.kind != Val::Kind::memref) {
    fail(op, "accesses a memref the simulator does not place in shared memory");
    return std::nullopt;
  }
  int64_t element = ref.offset;
  for (auto [i, index] : llvm::enumerate(indices)) {
    int64_t size = type.getDimSize(i);
    int64_t extent = i + 1 == indices.size() ? index + count : index + 1;
    if (index < 0 || (!ShapedType::isDynamic(size) && extent > size)) {
      fail(op, llvm::formatv("index {0} of dimension {1} is out of bounds "
                             "(size {2})",
                             index, i, size));
      return std::nullopt;
    }
    element += index * ref.strides[i];
  }
  int64_t offset = ref.base + element * bytesOf(type.getElementType());
  if (!checkShared(op, offset, count * bytesOf(type.getElementType())))
    return std::nullopt;
  return offset;
}

std::optional<int64_t> Cta::elementsAccess(Actor &actor, Operation *op,
                                           Value memref, const Val &ref,
                                           ArrayRef<const Val *> indices,
                                           int64_t count) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t, 4> values;
  for (const Val *index : indices)
    values.push_back(index->ints[0]);
  std::optional<int64_t> address = sharedAddress(op, ref, type, values, count);
  if (!address ||
      !sharedAccess(actor, op, memref, *address,
                    count * bytesOf(type.getElementType())))
    return std::nullopt;
  return address;
}

bool Cta::checkShared(Operation *op, int64_t offset, int64_t bytes) {
  if (offset >= 0 && offset + bytes <= static_cast<int64_t>(shared.size()))
    return true;
  fail(op, llvm::formatv("accesses shared memory bytes [{0}, {1}) beyond the "
                         "{2} dynamic bytes of the launch",
                         offset, offset + bytes, shared.size()));
  return false;
}

float Cta::loadElement(Type element, int64_t offset) {
  if (element.isF32()) {
    float x;
    std::memcpy(&x, &shared[offset], 4);
    return x;
  }
  uint16_t bits;
  std::memcpy(&bits, &shared[offset], 2);
  if (element.isBF16())
    return bf16Value(bits);
  if (element.isF16())
    return f16Value(bits);
  int32_t i;
  std::memcpy(&i, &shared[offset], 4);
  return static_cast<float>(i);
}

void Cta::storeElement(Type element, int64_t offset, float real,
                       int64_t integer) {
  if (element.isF32()) {
    std::memcpy(&shared[offset], &real, 4);
  } else if (element.isBF16() || element.isF16()) {
    uint16_t bits = element.isBF16() ? bf16Bits(real) : f16Bits(real);
    std::memcpy(&shared[offset], &bits, 2);
  } else {
    int32_t i = static_cast<int32_t>(integer);
    std::memcpy(&shared[offset], &i, bytesOf(element));
  }
}

bool Cta::sharedAccess(Actor &actor, Operation *op, Value memref,
                       int64_t offset, int64_t bytes) {
  // Whether the access writes is the op's contract: its memory effects.
  bool write = hasEffect<MemoryEffects::Write>(op, memref);
  if (!write && !hasEffect<MemoryEffects::Read>(op, memref)) {
    fail(op, "accesses shared memory through an operand on which it declares "
             "no read or write effect");
    return false;
  }
  uint32_t agent = agentFor(op, actor);
  if (write)
    std::fill(ordinaryStores.begin() + offset,
              ordinaryStores.begin() + offset + bytes,
              OrdinaryStore{agent + 1, actor.tid,
                            static_cast<uint32_t>(actor.proxyFences.size())});
  races.access(Memory::shared, offset, offset + bytes, write, actor.slot, agent,
               actor.clock);
  return true;
}

void Cta::asyncProxyRead(int64_t offset, int64_t bytes, uint32_t reader,
                         const VectorClock &clock) {
  for (int64_t i = offset; i < offset + bytes; ++i) {
    if (!invisibleToAsyncProxy(i, clock))
      continue;
    uint32_t writer = ordinaryStores[i].agent;
    const Actor::ProxyFence *fence = publishingFence(i);
    int64_t last = i;
    while (last + 1 < offset + bytes &&
           invisibleToAsyncProxy(last + 1, clock) &&
           ordinaryStores[last + 1].agent == writer &&
           publishingFence(last + 1) == fence)
      ++last;
    races.proxyRace(i, last, writer - 1, reader, fence ? fence->op : nullptr);
    return;
  }
}

void Cta::asyncProxyWrite(int64_t offset, int64_t bytes) {
  std::fill(ordinaryStores.begin() + offset,
            ordinaryStores.begin() + offset + bytes, OrdinaryStore{});
}

//===----------------------------------------------------------------------===//
// memref and vector memory ops (the other vector ops are pure)
//===----------------------------------------------------------------------===//

Step Cta::memrefOp(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  return llvm::TypeSwitch<Operation *, Step>(op)
      .Case([&](memref::ViewOp view) {
        const Val &source = *in[0];
        if (source.kind != Val::Kind::memref)
          return fail(op, "views a memref outside shared memory");
        MemRefType type = view.getType();
        if (!type.hasStaticShape())
          return fail(op, "only views of static shape are supported");
        MemRefType sourceType = view.getSource().getType();
        int64_t shift = in[1]->ints[0];
        int64_t bytes = type.getNumElements() * bytesOf(type.getElementType());
        if (sourceType.hasStaticShape()) {
          int64_t available = sourceType.getNumElements() *
                              bytesOf(sourceType.getElementType());
          if (shift < 0 || shift + bytes > available)
            return fail(op,
                        llvm::formatv("views bytes [{0}, {1}) of a {2}-byte "
                                      "buffer",
                                      shift, shift + bytes, available));
        }
        Val out;
        out.kind = Val::Kind::memref;
        out.base = source.base +
                   source.offset * bytesOf(sourceType.getElementType()) + shift;
        if (!checkShared(op, out.base, bytes))
          return Step::error;
        out.strides.assign(type.getRank(), 1);
        for (int64_t i = type.getRank() - 2; i >= 0; --i)
          out.strides[i] = out.strides[i + 1] * type.getDimSize(i + 1);
        define(actor, view.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](memref::SubViewOp subview) {
        const Val &source = *in[0];
        Val out = source;
        auto valueOf = [&](OpFoldResult r) -> int64_t {
          if (auto attr = dyn_cast<Attribute>(r))
            return cast<IntegerAttr>(attr).getInt();
          return actor.env[cast<Value>(r)].ints[0];
        };
        SmallVector<OpFoldResult> offsets = subview.getMixedOffsets(),
                                  strides = subview.getMixedStrides();
        SmallVector<int64_t, 4> newStrides;
        llvm::SmallBitVector dropped = subview.getDroppedDims();
        for (size_t i = 0; i < offsets.size(); ++i) {
          out.offset += valueOf(offsets[i]) * source.strides[i];
          if (!dropped.test(i))
            newStrides.push_back(source.strides[i] * valueOf(strides[i]));
        }
        out.strides = newStrides;
        define(actor, subview.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](memref::LoadOp load) {
        std::optional<int64_t> address =
            elementsAccess(actor, op, load.getMemRef(), *in[0],
                           in.drop_front(1), 1);
        if (!address)
          return Step::error;
        Type element = load.getMemRefType().getElementType();
        Val out;
        if (isa<FloatType>(element)) {
          out.floats = {loadElement(element, *address)};
        } else {
          int32_t i;
          std::memcpy(&i, &shared[*address], 4);
          out.ints = {i};
        }
        define(actor, load.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](memref::StoreOp store) {
        std::optional<int64_t> address =
            elementsAccess(actor, op, store.getMemRef(), *in[1],
                           in.drop_front(2), 1);
        if (!address)
          return Step::error;
        storeElement(store.getMemRefType().getElementType(), *address,
                     in[0]->floats.empty() ? 0 : in[0]->floats[0],
                     in[0]->ints.empty() ? 0 : in[0]->ints[0]);
        return Step::next;
      })
      .Default([&](Operation *) {
        return fail(op, "the simulator cannot execute this op");
      });
}

Step Cta::vectorOp(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  return llvm::TypeSwitch<Operation *, Step>(op)
      .Case([&](vector::StoreOp store) {
        std::optional<int64_t> address = elementsAccess(
            actor, op, store.getBase(), *in[1], in.drop_front(2),
            store.getVectorType().getNumElements());
        if (!address)
          return Step::error;
        Type element = store.getMemRefType().getElementType();
        for (int64_t i = 0, e = store.getVectorType().getNumElements(); i < e;
             ++i)
          storeElement(element, *address + i * bytesOf(element),
                       in[0]->floats.empty() ? 0 : in[0]->floats[i],
                       in[0]->ints.empty() ? 0 : in[0]->ints[i]);
        return Step::next;
      })
      .Case([&](vector::LoadOp load) {
        int64_t n = load.getVectorType().getNumElements();
        std::optional<int64_t> address =
            elementsAccess(actor, op, load.getBase(), *in[0],
                           in.drop_front(1), n);
        if (!address)
          return Step::error;
        Type element = load.getMemRefType().getElementType();
        Val out;
        for (int64_t i = 0; i < n; ++i)
          out.floats.push_back(
              loadElement(element, *address + i * bytesOf(element)));
        define(actor, load.getResult()) = std::move(out);
        return Step::next;
      })
      .Default([&](Operation *) {
        // The others must be free of memory effects to be evaluated as
        // values (a transfer or masked access is not modeled).
        if (!isMemoryEffectFree(op))
          return fail(op, "accesses memory in a way the simulator does not "
                          "model");
        return pure(actor, op, in);
      });
}

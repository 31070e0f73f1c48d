//===- ControlFlow.cpp - scf, gpu and llvm ops ----------------------------===//
//
// Structured control flow on a thread's frame stack (scf.for, scf.if,
// scf.while and their terminators), the gpu ops (ids, dynamic shared
// memory, the CTA barrier, shuffles, return), and the few llvm ops of the
// LSE store.
//
//===----------------------------------------------------------------------===//

#include "Cta.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

//===----------------------------------------------------------------------===//
// scf
//===----------------------------------------------------------------------===//

Step Cta::scfOp(Actor &actor, Operation *op) {
  if (auto forOp = dyn_cast<scf::ForOp>(op)) {
    const Val *lower = use(actor, op, forOp.getLowerBound());
    const Val *upper = use(actor, op, forOp.getUpperBound());
    const Val *step = use(actor, op, forOp.getStep());
    if (!lower || !upper || !step)
      return Step::error;
    SmallVector<Val> inits;
    for (Value init : forOp.getInitArgs()) {
      const Val *v = use(actor, op, init);
      if (!v)
        return Step::error;
      inits.push_back(*v);
    }
    bool isSigned = forOp.getUnsignedCmp() == false;
    int64_t lb = lower->ints[0], ub = upper->ints[0], st = step->ints[0];
    if (st <= 0)
      return fail(op, "loop step must be positive");
    bool empty = isSigned ? lb >= ub : uint64_t(lb) >= uint64_t(ub);
    if (empty) {
      for (auto [result, init] : llvm::zip(forOp.getResults(), inits))
        define(actor, result) = init;
      return Step::next;
    }
    Block *body = forOp.getBody();
    Val iv;
    iv.ints = {lb};
    define(actor, forOp.getInductionVar()) = iv;
    for (auto [arg, init] : llvm::zip(forOp.getRegionIterArgs(), inits))
      define(actor, arg) = init;
    actor.stack.push_back({body, body->begin(), op, lb, ub, st});
    return Step::entered;
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    const Val *cond = use(actor, op, ifOp.getCondition());
    if (!cond)
      return Step::error;
    Region &region =
        cond->ints[0] != 0 ? ifOp.getThenRegion() : ifOp.getElseRegion();
    if (region.empty())
      return Step::next;
    actor.stack.push_back({&region.front(), region.front().begin(), op});
    return Step::entered;
  }
  if (auto whileOp = dyn_cast<scf::WhileOp>(op)) {
    SmallVector<Val> inits;
    for (Value init : whileOp.getInits()) {
      const Val *v = use(actor, op, init);
      if (!v)
        return Step::error;
      inits.push_back(*v);
    }
    Block *before = whileOp.getBeforeBody();
    for (auto [arg, init] : llvm::zip(before->getArguments(), inits))
      define(actor, arg) = init;
    actor.stack.push_back({before, before->begin(), op});
    return Step::entered;
  }
  if (auto condition = dyn_cast<scf::ConditionOp>(op)) {
    // The end of a while loop's before region: into the after region with
    // the forwarded values, or out of the loop with them as its results.
    const Val *cond = use(actor, op, condition.getCondition());
    if (!cond)
      return Step::error;
    SmallVector<Val> values;
    for (Value arg : condition.getArgs()) {
      const Val *v = use(actor, op, arg);
      if (!v)
        return Step::error;
      values.push_back(*v);
    }
    Frame &frame = actor.stack.back();
    auto whileOp = cast<scf::WhileOp>(frame.owner);
    if (cond->ints[0] != 0) {
      Block *after = whileOp.getAfterBody();
      for (auto [arg, v] : llvm::zip(after->getArguments(), values))
        define(actor, arg) = v;
      frame.block = after;
      frame.it = after->begin();
      return Step::entered;
    }
    for (auto [result, v] : llvm::zip(whileOp.getResults(), values))
      define(actor, result) = v;
    actor.stack.pop_back();
    ++actor.stack.back().it;
    return Step::entered;
  }
  if (isa<scf::YieldOp>(op))
    return yield(actor, op);
  return fail(op, "the simulator cannot execute this op");
}

Step Cta::yield(Actor &actor, Operation *op) {
  SmallVector<Val> values;
  for (Value operand : op->getOperands()) {
    const Val *v = use(actor, op, operand);
    if (!v)
      return Step::error;
    values.push_back(*v);
  }
  Frame &frame = actor.stack.back();
  Operation *owner = frame.owner;
  if (auto whileOp = dyn_cast<scf::WhileOp>(owner)) {
    // The end of the after region: the before region again.
    Block *before = whileOp.getBeforeBody();
    for (auto [arg, v] : llvm::zip(before->getArguments(), values))
      define(actor, arg) = v;
    frame.block = before;
    frame.it = before->begin();
    return Step::entered;
  }
  if (auto forOp = dyn_cast<scf::ForOp>(owner)) {
    int64_t next = frame.iv + frame.step;
    bool more = forOp.getUnsignedCmp() ? uint64_t(next) < uint64_t(frame.upper)
                                       : next < frame.upper;
    if (next > frame.iv && more) {
      frame.iv = next;
      Val iv;
      iv.ints = {next};
      define(actor, forOp.getInductionVar()) = iv;
      for (auto [arg, v] : llvm::zip(forOp.getRegionIterArgs(), values))
        define(actor, arg) = v;
      frame.it = frame.block->begin();
      return Step::entered;
    }
  }
  for (auto [result, v] : llvm::zip(owner->getResults(), values))
    define(actor, result) = v;
  actor.stack.pop_back();
  ++actor.stack.back().it;
  return Step::entered;
}

//===----------------------------------------------------------------------===//
// gpu
//===----------------------------------------------------------------------===//

Step Cta::gpuOp(Actor &actor, Operation *op) {
  auto number = [&](Value result, int64_t v) {
    Val out;
    out.ints = {v};
    define(actor, result) = std::move(out);
    return Step::next;
  };
  auto xOnly = [&](gpu::Dimension dimension, int64_t x) -> int64_t {
    return dimension == gpu::Dimension::x ? x : 0;
  };
  return llvm::TypeSwitch<Operation *, Step>(op)
      .Case([&](gpu::ThreadIdOp id) {
        return number(id, xOnly(id.getDimension(), actor.tid));
      })
      .Case([&](gpu::BlockIdOp id) {
        return number(id, xOnly(id.getDimension(), blockId));
      })
      .Case([&](gpu::ClusterBlockIdOp id) {
        return number(id, xOnly(id.getDimension(), rank));
      })
      .Case([&](gpu::ClusterDimBlocksOp dim) {
        return number(
            dim, dim.getDimension() == gpu::Dimension::x ? launch.cluster : 1);
      })
      .Case([&](gpu::GridDimOp dim) {
        return number(dim, dim.getDimension() == gpu::Dimension::x ? launch.grid
                                                                   : 1);
      })
      .Case([&](gpu::BlockDimOp dim) {
        return number(
            dim, dim.getDimension() == gpu::Dimension::x ? launch.block : 1);
      })
      .Case([&](gpu::DynamicSharedMemoryOp dynamic) {
        Val out;
        out.kind = Val::Kind::memref;
        out.strides = {1};
        define(actor, dynamic.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](gpu::BarrierOp) {
        // __syncthreads: barrier 0 over the whole block.
        return namedBarrier(actor, op, 0, launch.block, /*sync=*/true);
      })
      .Case([&](gpu::ShuffleOp op) { return shuffle(actor, op); })
      .Case([&](gpu::ReturnOp) { return Step::done; })
      .Default([&](Operation *) {
        return fail(op, "the simulator cannot execute this op");
      });
}

//===----------------------------------------------------------------------===//
// llvm (the LSE store, the sink loads, tanh and intrinsics)
//===----------------------------------------------------------------------===//

Step Cta::llvmOp(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  // The element of a kernel argument's tensor that `pointer` addresses as
  // `type` (the tensor's element type), or null after reporting why there
  // is none.
  auto globalElement = [&](Operation *op, const Val &pointer, Type type,
                           StringRef verb, StringRef to) -> float * {
    if (pointer.kind != Val::Kind::pointer) {
      fail(op, verb + " through a pointer that is not a kernel argument");
      return nullptr;
    }
    GlobalTensor &tensor = (*launch.tensors)[pointer.base];
    if (type != tensor.element) {
      std::string types;
      llvm::raw_string_ostream os(types);
      os << type << " of '" << tensor.name << "', a tensor of "
         << tensor.element;
      fail(op, verb + " " + types);
      return nullptr;
    }
    int64_t bytes = std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
    int64_t index = pointer.offset / bytes;
    if (pointer.offset % bytes != 0 || index < 0 ||
        index >= static_cast<int64_t>(tensor.data.size())) {
      fail(op, llvm::formatv("{0}{1} byte {2} of '{3}', outside its {4} bytes",
                             verb, to, pointer.offset, tensor.name,
                             tensor.data.size() * bytes));
      return nullptr;
    }
    return &tensor.data[index];
  };
  return llvm::TypeSwitch<Operation *, Step>(op)
      .Case([&](LLVM::GEPOp gep) {
        // One index, a value or a constant (canonicalization folds it).
        if (gep.getIndices().size() != 1 || in.size() > 2 ||
            !gep.getElemType().isIntOrFloat())
          return fail(op, "only one-index pointer arithmetic is supported");
        auto index = gep.getIndices()[0];
        int64_t elements = isa<IntegerAttr>(index)
                               ? cast<IntegerAttr>(index).getInt()
                               : in[1]->ints[0];
        Val out = *in[0];
        out.offset +=
            elements *
            static_cast<int64_t>(gep.getElemType().getIntOrFloatBitWidth() / 8);
        define(actor, gep.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](LLVM::LoadOp load) {
        // Tensors hold their values as floats; integer ones exactly (the
        // simulator draws them below 2^24).
        // Or a vector of f32 (split-KV's partial rows).
        Type type = load.getType();
        int64_t count = 1;
        if (auto vector = dyn_cast<VectorType>(type);
            vector && vector.getRank() == 1 &&
            vector.getElementType().isF32()) {
          count = vector.getNumElements();
          type = vector.getElementType();
        } else if (!type.isIntOrFloat()) {
          return fail(op, "only scalar and f32 vector loads from global "
                          "memory are supported");
        }
        // The last element first: the whole vector lies inside the tensor.
        Val last = *in[0];
        last.offset += (count - 1) * type.getIntOrFloatBitWidth() / 8;
        if (!globalElement(op, last, type, "loads", ""))
          return Step::error;
        float *element = globalElement(op, *in[0], type, "loads", "");
        if (!element)
          return Step::error;
        Val out;
        if (isa<FloatType>(type))
          out.floats.assign(element, element + count);
        else
          out.ints = {static_cast<int64_t>(*element)};
        define(actor, load.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](LLVM::StoreOp store) {
        // An f32 (the LSE), a vector of f32 (split-KV partial rows) or of
        // 16-bit floats (the rows of O a packed sequence's last Q stage
        // stores one by one).
        Type type = store.getValue().getType();
        int64_t count = 1;
        if (auto vector = dyn_cast<VectorType>(type);
            vector && vector.getRank() == 1 &&
            isa<FloatType>(vector.getElementType()) &&
            (vector.getElementType().getIntOrFloatBitWidth() == 16 ||
             vector.getElementType().isF32())) {
          count = vector.getNumElements();
          type = vector.getElementType();
        } else if (!type.isF32()) {
          return fail(op, "only f32 and float vector stores to global "
                          "memory are supported");
        }
        if (static_cast<int64_t>(in[0]->floats.size()) != count)
          return fail(op, "the stored value has the wrong number of elements");
        // The last element first: the whole vector lies inside the tensor.
        Val last = *in[1];
        last.offset += (count - 1) * type.getIntOrFloatBitWidth() / 8;
        if (!globalElement(op, last, type, "stores", " to"))
          return Step::error;
        float *element = globalElement(op, *in[1], type, "stores", " to");
        if (!element)
          return Step::error;
        std::copy(in[0]->floats.begin(), in[0]->floats.end(), element);
        return Step::next;
      })
      .Case([&](LLVM::AtomicRMWOp rmw) {
        // Split-KV's counters: i32 add and exchange. CTAs run one after
        // another, so every atomic is in order.
        if (!rmw.getVal().getType().isInteger(32) ||
            (rmw.getBinOp() != LLVM::AtomicBinOp::add &&
             rmw.getBinOp() != LLVM::AtomicBinOp::xchg))
          return fail(op, "only i32 atomic add and exchange are simulated");
        float *element =
            globalElement(op, *in[0], rmw.getVal().getType(), "updates", "");
        if (!element)
          return Step::error;
        Val out;
        out.ints = {static_cast<int64_t>(*element)};
        int64_t value = in[1]->ints[0];
        *element = static_cast<float>(rmw.getBinOp() == LLVM::AtomicBinOp::add
                                          ? out.ints[0] + value
                                          : value);
        define(actor, rmw.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](LLVM::FenceOp) {
        // The interleaved CTAs see global memory sequentially consistent
        // (each access takes effect as it runs): the fence orders nothing
        // more, and a missing one goes unnoticed.
        return Step::next;
      })
      .Case([&](LLVM::TanhOp tanh) {
        // The exact function: hardware's tanh.approx differs by about
        // 2^-11 relative, which the H200 checks measure.
        Val out = *in[0];
        for (float &x : out.floats)
          x = std::tanh(x);
        define(actor, tanh.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](LLVM::FMAOp fma) {
        // fma.rn.f32: one rounding.
        Val out = *in[0];
        for (size_t i = 0; i < out.floats.size(); ++i)
          out.floats[i] =
              std::fma(in[0]->floats[i], in[1]->floats[i], in[2]->floats[i]);
        define(actor, fma.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](LLVM::CallIntrinsicOp call) {
        StringRef name = call.getIntrin();
        Val out;
        if (name == "llvm.nvvm.lg2.approx.f" ||
            name == "llvm.nvvm.lg2.approx.ftz.f")
          out.floats = {std::log2(in[0]->floats[0])};
        else if (name == "llvm.nvvm.ex2.approx.ftz.f32" ||
                 name == "llvm.nvvm.ex2.approx.f")
          out.floats = {ftz(std::exp2(in[0]->floats[0]))};
        else
          return fail(op, "the simulator does not know intrinsic " + name);
        define(actor, call.getResult(0)) = std::move(out);
        return Step::next;
      })
      .Default([&](Operation *) {
        return fail(op, "the simulator cannot execute this op");
      });
}

//===- FA4Interfaces.td - what passes ask of kernel ops ----*- tablegen -*-===//
//
// The questions the storage passes, barrier insertion and the simulator ask
// of an op, answered by the op instead of by lists of op types. Upstream ops
// (nvgpu TMA) answer through external models (registerExternalModels).
//
//===----------------------------------------------------------------------===//

#ifndef FA4_DIALECT_FA4_IR_FA4INTERFACES_TD
#define FA4_DIALECT_FA4_IR_FA4INTERFACES_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaceBase.td"

// Tensor Memory: the 128 lanes x 512 columns next to each SM's Tensor Core.
// TMEM ops declare their effects on it, so a pass that reasons about memory
// never confuses TMEM traffic with shared or global memory.
def FA4_TensorMemory : Resource<"::mlir::fa4::TensorMemoryResource">;

def FA4_AsyncAccessOpInterface : OpInterface<"AsyncAccessOpInterface"> {
  let description = [{
    An op whose memory access is still in flight when the op returns. The
    access occupies its buffer until what `getAsyncCompletion` names
    completes it: a wait op of the same thread (`AsyncWaitOpInterface`), an
    mbarrier another thread waits on, or a tcgen05 commit.
  }];
  let cppNamespace = "::mlir::fa4";
  let methods = [
    InterfaceMethod<"What completes the access.",
      "::mlir::fa4::AsyncCompletion", "getAsyncCompletion">,
  ];
}

def FA4_AsyncWaitOpInterface : OpInterface<"AsyncWaitOpInterface"> {
  let description = [{
    An op that blocks its thread until earlier asynchronous accesses of the
    thread have completed.
  }];
  let cppNamespace = "::mlir::fa4";
  let methods = [
    InterfaceMethod<[{
        Whether, once the op returns, no access of kind `completion` that the
        thread issued before it is still in flight.
      }],
      "bool", "retires", (ins "::mlir::fa4::AsyncCompletion":$completion)>,
  ];
}

def FA4_BufferDefinitionOpInterface
    : OpInterface<"BufferDefinitionOpInterface"> {
  let description = [{
    An op that may replace the whole contents of a buffer operand without
    reading them, which ends the liveness of the value the buffer held.
  }];
  let cppNamespace = "::mlir::fa4";
  let methods = [
    InterfaceMethod<[{
        Whether the op overwrites every element of `buffer` (an operand) and
        reads none of its old contents through that operand.
      }],
      "bool", "overwritesAll", (ins "::mlir::Value":$buffer)>,
  ];
}

def FA4_ChannelStepOpInterface : OpInterface<"ChannelStepOpInterface"> {
  let description = [{
    One step of a hand-off on a `fa4.channel`: hand-off number `iteration`
    uses slot `iteration mod stages`. The producer acquires (waits until the
    slot is empty) and commits (marks it full); the consumer waits (until it
    is full) and releases (marks it empty).
  }];
  let cppNamespace = "::mlir::fa4";
  let methods = [
    InterfaceMethod<"The channel.", "::mlir::TypedValue<::mlir::fa4::ChannelType>",
      "getChannel", (ins), [{}], [{ return $_op.getChannel(); }]>,
    InterfaceMethod<"The hand-off number.", "::mlir::Value", "getIteration",
      (ins), [{}], [{ return $_op.getIteration(); }]>,
    InterfaceMethod<"Whether the producer side takes the step.", "bool",
      "isProducerStep">,
    InterfaceMethod<[{
        Whether the step blocks until the other side's signal (acquire and
        wait) rather than signalling (commit and release).
      }], "bool", "isBlocking">,
    InterfaceMethod<[{
        Whether the step concerns the slot being full (commit and wait)
        rather than empty (acquire and release).
      }], "bool", "concernsFull", (ins), [{}],
      [{ return $_op.isProducerStep() != $_op.isBlocking(); }]>,
  ];
}

#endif // FA4_DIALECT_FA4_IR_FA4INTERFACES_TD

//===- Manifest.h - the launch manifest of a role-level kernel --*- C++ -*-===//

#ifndef FA4_TRANSFORMS_SPECIALIZE_MANIFEST_H
#define FA4_TRANSFORMS_SPECIALIZE_MANIFEST_H

#include "TiledProgram.h"

namespace mlir::fa4::specialize {

/// The launch manifest of `kernel`, built from `shape`: everything a runtime
/// needs to run it on the operands of its fa4.launch, as plain data (written
/// out as JSON). The roles and named barriers are read from the kernel's
/// fa4.role and fa4.channel ops.
DictionaryAttr buildManifest(const KernelShape &shape, gpu::GPUFuncOp kernel);

/// What a launch's operands must be, for runtimes choosing a kernel: name,
/// element type and shape (-1 where dynamic) of each.
ArrayAttr operandsEntry(LaunchOp launch);

} // namespace mlir::fa4::specialize

#endif // FA4_TRANSFORMS_SPECIALIZE_MANIFEST_H

//===- Manifest.cpp - the launch manifest of a role-level kernel ----------===//

#include "Manifest.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

DictionaryAttr specialize::buildManifest(const KernelShape &shape,
                                         gpu::GPUFuncOp kernel) {
  MLIRContext *ctx = kernel.getContext();
  Builder b(ctx);
  PlanAttr plan = shape.plan;
  auto named = [&](StringRef key, Attribute value) {
    return b.getNamedAttr(key, value);
  };
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  auto ints = [&](ArrayRef<int64_t> v) { return b.getI64ArrayAttr(v); };
  auto dict = [&](ArrayRef<NamedAttribute> entries) {
    return b.getDictionaryAttr(entries);
  };
  // The tensor maps' element names (the runtime's; e4m3 for f8E4M3FN).
  auto elementName = [](Type type) -> StringRef {
    if (type.isBF16())
      return "bf16";
    if (type.isF16())
      return "f16";
    return "e4m3";
  };

  int64_t stages = plan.getQStages();
  int64_t warps = 4 * plan.getNumWarpgroups();
  // TMA boxes, innermost dimension first as cuTensorMapEncodeTiled takes
  // them: (atom columns, heads, rows, 1) over the operand's [B, S, H, D]
  // (64 16-bit or 128 8-bit columns); a key-major V's (128 keys, 1, Dv, 1)
  // over its dimensions (S, H, D, B): one atom of keys, a whole 128-key
  // block or a 64-key block and the next one's keys.
  auto tensorMap = [&](StringRef operand, int64_t index, bool packed) {
    bool output = operand == "output";
    bool keyMajor = operand == "value" && shape.valueKeyMajor;
    int64_t heads = packed ? shape.pack : 1;
    int64_t rows = packed ? shape.positionsPerTile() : shape.kvBoxRows();
    int64_t columns = output ? kAtom : shape.atomColumns();
    SmallVector<int64_t> box = {columns, heads, rows, 1};
    if (keyMajor)
      box = {shape.atomColumns(), 1, shape.headDimV, 1};
    SmallVector<NamedAttribute> entries = {
        named("operand", b.getStringAttr(operand)),
        named("operand_index", i64(index)),
        named("element", b.getStringAttr(elementName(output ? shape.outElement
                                                            : shape.element))),
        named("box", ints(box)),
        named("swizzle", b.getStringAttr("128B")),
        named("oob_fill", b.getStringAttr("zero"))};
    if (keyMajor)
      entries.push_back(named("key_major", b.getBoolAttr(true)));
    // Packed [T, H, D]: the map is (64-column atoms, H, T rows, 1) from the
    // tensor's first row; a sequence's rows are addressed from its start
    // (KernelBuilder::tmaRows). A paged K or V is the cache's map.
    if (shape.varlen && (packed || !shape.pageSize))
      entries.push_back(named("varlen", b.getBoolAttr(true)));
    return dict(entries);
  };
  auto param = [&](StringRef name, StringRef kind, StringRef source) {
    return dict({named("name", b.getStringAttr(name)),
                 named("kind", b.getStringAttr(kind)),
                 named("source", b.getStringAttr(source))});
  };
  double scaleLog2 = shape.scaleLog2;
  SmallVector<Attribute> params = {
      param("query_map", "tensor_map", "tensor_maps[0]"),
      param("key_map", "tensor_map", "tensor_maps[1]"),
      param("value_map", "tensor_map", "tensor_maps[2]"),
      param("output_map", "tensor_map", "tensor_maps[3]"),
      shape.varlen ? param("sequence_bounds", "i32", "cu_seqlens_q.shape[0]")
                   : param("batch", "i32", "query.shape[0]"),
      shape.varlen ? param("total_q", "i32", "query.shape[0]")
                   : param("seq_q", "i32", "query.shape[1]"),
      shape.varlen && !shape.pageSize ? param("total_kv", "i32", "key.shape[0]")
                                      : param("seq_kv", "i32", "key.shape[1]"),
      param("scale_log2", "f32", "scale_log2")};
  if (shape.softcap)
    params.push_back(param("score_cap", "f32", "score_cap"));
  if (shape.lse)
    params.push_back(param("lse", "pointer", "lse.data"));
  if (shape.sink)
    params.push_back(param("sink", "pointer", "sink.data"));
  if (shape.descale)
    for (StringRef name : {"q_descale", "k_descale", "v_descale"})
      params.push_back(param(name, "pointer", (name + ".data").str()));
  if (shape.varlen) {
    params.push_back(param("cu_seqlens_q", "pointer", "cu_seqlens_q.data"));
    params.push_back(param("cu_seqlens_k", "pointer", "cu_seqlens_k.data"));
    if (shape.seqused)
      params.push_back(param("seqused_k", "pointer", "seqused_k.data"));
    // The rows of a sequence's last Q stage are stored one by one.
    params.push_back(param("output_rows", "pointer", "output.data"));
  }
  // A dense KV cache: each batch's keys, and the page table (K and V are
  // then [pages, P, Hkv, D]: seq_kv is the page size).
  if (!shape.varlen && shape.seqused)
    params.push_back(param("seqused_k", "pointer", "seqused_k.data"));
  if (shape.pageSize) {
    params.push_back(param("page_table", "pointer", "page_table.data"));
    params.push_back(param("max_pages", "i32", "page_table.shape[1]"));
  }
  // Split-KV: the workspace the runtime allocates (split_kv below).
  if (shape.workspaceSplit()) {
    params.push_back(param("split_partials", "pointer", "workspace.partials"));
    params.push_back(param("split_counters", "pointer", "workspace.counters"));
  }
  if (shape.rope()) {
    params.push_back(param("cos_sin", "pointer", "cos_sin.data"));
    params.push_back(param("rope_positions", "i32", "cos_sin.shape[0]"));
    params.push_back(param("positions", "pointer", "positions.data"));
  }
  for (auto [index, capture] : llvm::enumerate(shape.captures)) {
    std::string name = "capture" + std::to_string(index);
    params.push_back(param(name, "pointer", name + ".data"));
    for (int64_t dim = 0; dim < capture.getRank(); ++dim)
      if (capture.isDynamicDim(dim))
        params.push_back(param(name + "_size" + std::to_string(dim), "i32",
                               name + ".shape[" + std::to_string(dim) + "]"));
  }

  SmallVector<NamedAttribute> masking;
  auto [left, right] = shape.window;
  if (left >= 0 || (right >= 0 && !shape.causal))
    masking.push_back(named("window", ints({left, right})));
  if (shape.softcap) {
    // The cap in the op's units (times the scale) and in the raw-score
    // units the kernel takes.
    masking.push_back(
        named("softcap", b.getF64FloatAttr(*shape.softcap * scaleLog2 /
                                           M_LOG2E)));
    masking.push_back(named("score_cap", b.getF64FloatAttr(*shape.softcap)));
  }
  SmallVector<NamedAttribute> entries = {
      named("kernel", kernel.getNameAttr()),
      named("arch", b.getStringAttr(stringifyArch(plan.getArch()))),
      named("block", ints({warps * 32, 1, 1})),
      // A cluster split: a tile's splits are one cluster's CTAs.
      named("cluster",
            ints({shape.plan.isClusterSplit() ? shape.splits() : 1, 1, 1})),
      // The kernel waits for its prerequisite grid (griddepcontrol): a
      // runtime may launch it with programmatic stream serialization.
      named("programmatic_launch", b.getBoolAttr(true)),
      // Persistent CTAs: min(tiles, SMs), tiles = batch * head_blocks *
      // ceil(seq_q / query_rows_per_cta) (times split_kv.splits); packed
      // sequences (the rule persistent_varlen) have at most head_blocks *
      // (ceil(total_q / query_rows_per_cta) + batch).
      named(
          "grid",
          dict({named("rule", b.getStringAttr(shape.varlen ? "persistent_varlen"
                                                           : "persistent")),
                named("head_blocks", i64(shape.queryHeads / shape.pack)),
                named("query_rows_per_cta",
                      i64(stages * shape.positionsPerTile()))})),
      named("params", b.getArrayAttr(params)),
      named("tensor_maps",
            b.getArrayAttr(
                {tensorMap("query", 0, true), tensorMap("key", 1, false),
                 tensorMap("value", 2, false), tensorMap("output", 3, true)})),
      named("causal", b.getBoolAttr(shape.causal)),
      named("scale", b.getF64FloatAttr(scaleLog2 / M_LOG2E)),
      named("scale_log2", b.getF64FloatAttr(scaleLog2)),
      named("plan", plan),
  };
  entries.append(masking.begin(), masking.end());
  // Split-KV: the grid's units are (tile, split), splits x tiles of them;
  // per work tile the workspace holds partial_words_per_tile f32 words
  // (uninitialized) and counters_per_tile i32 counters that must be 0 at
  // the first launch (each launch leaves them 0).
  // A cluster split needs no workspace: both are 0.
  if (int64_t splits = shape.splits(); splits > 1) {
    int64_t rows = stages * shape.qRows();
    bool workspace = shape.workspaceSplit();
    entries.push_back(
        named("split_kv",
              dict({named("splits", i64(splits)),
                    named("partial_words_per_tile",
                          i64(workspace ? rows * shape.splitRecordWords() : 0)),
                    named("counters_per_tile", i64(workspace ? stages : 0))})));
  }
  // The rotary embedding: Q's rotated columns, and whether O's are
  // rotated back (a runtime must not take the kernel for another).
  if (shape.rope())
    entries.push_back(named(
        "rope", dict({named("start", i64(shape.ropeStart)),
                      named("columns", i64(shape.ropeColumns)),
                      named("output", b.getBoolAttr(shape.ropeOutput))})));
  // Which regions the kernel inlines: a runtime must not take it for a
  // problem without them.
  if (TileModifyOp modifier = shape.modifier) {
    SmallVector<Attribute> regions;
    if (!modifier.getScoreMod().empty())
      regions.push_back(b.getStringAttr("score"));
    if (!modifier.getMaskMod().empty())
      regions.push_back(b.getStringAttr("mask"));
    entries.push_back(named("regions", b.getArrayAttr(regions)));
  }
  return dict(entries);
}

ArrayAttr specialize::operandsEntry(LaunchOp launch) {
  Builder b(launch.getContext());
  SmallVector<Attribute> operands;
  for (auto [index, operand] : llvm::enumerate(launch->getOperands())) {
    auto type = cast<MemRefType>(operand.getType());
    SmallVector<int64_t> shape;
    for (int64_t size : type.getShape())
      shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
    std::string element;
    llvm::raw_string_ostream os(element);
    type.getElementType().print(os);
    operands.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("name",
                        b.getStringAttr(launch.getOperandName(index))),
         b.getNamedAttr("element", b.getStringAttr(element)),
         b.getNamedAttr("shape", b.getI64ArrayAttr(shape))}));
  }
  return b.getArrayAttr(operands);
}

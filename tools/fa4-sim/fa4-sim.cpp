//===- fa4-sim.cpp - the fa4 kernel simulator driver ----------------------===//
//
// Reads a module at the synchronization level (fa4-opt ... through
// fa4-insert-barriers) and simulates each fa4.launch for a problem shape
// and a range of seeds; prints a verdict line per seed. Exits 1 when any
// seed fails (wrong numbers, a deadlock, a data race, an op the kernel may
// not execute), 2 when the input cannot be simulated at all.
//
//===----------------------------------------------------------------------===//

#include "fa4/InitAll.h"
#include "fa4/Simulator/Simulator.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

/// fa4-sim's own options: --help lists only these, not the LLVM options
/// linked in with the dialects.
static cl::OptionCategory simCategory("fa4-sim options");

static cl::opt<std::string> input(cl::Positional, cl::desc("<input .mlir>"),
                                  cl::init("-"), cl::cat(simCategory));
static cl::opt<int64_t> batch("batch", cl::desc("Batch size (B)"),
                              cl::cat(simCategory));
static cl::opt<int64_t> seqQ("seq-q", cl::desc("Query sequence length (Sq)"),
                             cl::cat(simCategory));
static cl::opt<int64_t> seqKv("seq-kv",
                              cl::desc("Key/value sequence length (Skv; a "
                                       "paged cache's keys per batch)"),
                              cl::cat(simCategory));
static cl::opt<int64_t> headsQ("heads-q", cl::desc("Query heads (Hq)"),
                               cl::cat(simCategory));
static cl::opt<int64_t> headsKv("heads-kv", cl::desc("Key/value heads (Hkv)"),
                                cl::cat(simCategory));
static cl::opt<int64_t> headDim("head-dim", cl::desc("Head dimension (D)"),
                                cl::cat(simCategory));
static cl::opt<bool> causal("causal", cl::desc("The kernel is causal"),
                            cl::cat(simCategory));
static cl::opt<std::string> dtype("dtype", cl::desc("bf16, f16 or e4m3"),
                                  cl::cat(simCategory));
static cl::list<int64_t>
    seqlensQ("seqlens-q",
             cl::desc("Packed sequences: the query length of each (the "
                      "batch of a kernel with cu_seqlens tables)"),
             cl::CommaSeparated, cl::cat(simCategory));
static cl::list<int64_t>
    seqlensKv("seqlens-kv",
              cl::desc("Packed sequences: the key/value length of each"),
              cl::CommaSeparated, cl::cat(simCategory));
static cl::list<int64_t>
    sequsedK("seqused-k",
             cl::desc("The keys each sequence (packed) or batch (a KV "
                      "cache) uses, for kernels that take seqused_k"),
             cl::CommaSeparated, cl::cat(simCategory));
static cl::list<int64_t> captureSizes(
    "capture-sizes",
    cl::desc("The dynamic sizes of the captured operands the score and mask "
             "regions read, in operand then dimension order"),
    cl::CommaSeparated, cl::cat(simCategory));
static cl::opt<int64_t> captureIntBound(
    "capture-int-bound",
    cl::desc("Integer captures are drawn from [0, N) (float ones from "
             "N(0, 1))"),
    cl::init(4), cl::cat(simCategory));
static cl::opt<uint64_t> seed("seed", cl::desc("First seed"), cl::init(1),
                              cl::cat(simCategory));
static cl::opt<unsigned> seeds("seeds", cl::desc("Number of seeds"),
                               cl::init(1), cl::cat(simCategory));
static cl::opt<unsigned> ctas("ctas", cl::desc("CTAs of the persistent grid"),
                              cl::init(2), cl::cat(simCategory));
static cl::opt<uint64_t> maxSteps("max-steps",
                                  cl::desc("Ops one CTA may execute"),
                                  cl::init(200000000), cl::cat(simCategory));
static cl::opt<std::string>
    traceFile("trace",
              cl::desc("Write the first seed's run as a protocol timeline to "
                       "this file (Trace Event Format JSON: open it in "
                       "https://ui.perfetto.dev or chrome://tracing)"),
              cl::value_desc("file"), cl::cat(simCategory));
static cl::opt<uint64_t>
    traceLimit("trace-limit",
               cl::desc("Events the trace records at most (then recording "
                        "stops, noted in the trace's metadata)"),
               cl::init(200000), cl::cat(simCategory));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(simCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "fa4-sim: simulate fa4 kernels at the synchronization level\n");

  DialectRegistry registry;
  ::fa4::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  std::string error;
  auto file = openInputFile(input, &error);
  if (!file) {
    llvm::errs() << "fa4-sim: " << error << "\n";
    return 2;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 2;

  mlir::fa4::sim::Problem problem;
  auto given = [](auto &option) {
    using T = std::decay_t<decltype(option.getValue())>;
    return option.getNumOccurrences() ? std::optional<T>(option.getValue())
                                      : std::nullopt;
  };
  problem.batch = given(batch);
  problem.seqQ = given(seqQ);
  problem.seqKv = given(seqKv);
  problem.headsQ = given(headsQ);
  problem.headsKv = given(headsKv);
  problem.headDim = given(headDim);
  problem.causal = given(causal);
  problem.dtype = given(dtype);
  problem.seqlensQ.assign(seqlensQ.begin(), seqlensQ.end());
  problem.seqlensKv.assign(seqlensKv.begin(), seqlensKv.end());
  problem.sequsedK.assign(sequsedK.begin(), sequsedK.end());
  problem.captureSizes.assign(captureSizes.begin(), captureSizes.end());
  problem.captureIntBound = captureIntBound;

  mlir::fa4::sim::Options options;
  options.seed = seed;
  options.seeds = seeds;
  options.ctas = ctas;
  options.maxSteps = maxSteps;
  options.traceFile = traceFile;
  options.traceLimit = traceLimit;
  if (failed(mlir::fa4::sim::simulate(*module, problem, options, llvm::outs())))
    return 1;
  return 0;
}

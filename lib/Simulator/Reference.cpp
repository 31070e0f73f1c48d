//===- Reference.cpp - the float64 reference and the verdict --------------===//
//
// A row at a time: the keys its window and the regions leave, the softmax
// with the sink in its denominator, O and the natural-log LSE.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"
#include "Hardware.h"
#include "Modifiers.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

Reference sim::reference(const std::vector<GlobalTensor> &t, const Shape &s,
                         double scale) {
  Reference ref;
  int64_t rows = s.varlen ? s.seqQ : s.batch * s.seqQ;
  ref.output.assign(rows * s.headsQ * s.headDimV, 0.0);
  ref.lse.assign(rows * s.headsQ, -std::numeric_limits<double>::infinity());
  ref.owned.assign(rows, !s.varlen);
  int64_t group = s.headsQ / s.headsKv;
  const GlobalTensor *sinks = tensorNamed(t, "sink");
  // FP8: the descale factors [B, Hkv] (scores by q and k's, O by v's), and
  // the per-element bounds.
  const GlobalTensor *qDescale = tensorNamed(t, "q_descale"),
                     *kDescale = tensorNamed(t, "k_descale"),
                     *vDescale = tensorNamed(t, "v_descale");
  bool fp8 = s.dtype == "e4m3";
  if (fp8)
    ref.bound.assign(ref.output.size(), 0.0);
  double outputRounding =
      tensorNamed(t, "output")->element.isBF16() ? 0x1p-8 : 0x1p-11;
  SmallVector<const GlobalTensor *> captures;
  for (size_t c = 0; c < s.captureShapes.size(); ++c)
    captures.push_back(tensorNamed(t, "capture" + std::to_string(c)));
  std::vector<double> scores(s.seqKv);
  // The rotary embedding: a row's (cos, sin) of pair k at its position
  // (clamped into the table); Q's rotated row rounded to Q's element type,
  // as the kernel rounds it.
  const GlobalTensor *table = tensorNamed(t, "cos_sin");
  const GlobalTensor *positions = tensorNamed(t, "positions");
  std::vector<float> rotatedQuery(s.headDim);
  Format queryFormat = formatOf(t[0].element);
  auto angle = [&](int64_t b, int64_t i, int64_t k) {
    auto p = static_cast<int64_t>(positions->data[s.queryRow(b, i)]);
    p = std::clamp<int64_t>(p, 0, s.ropeRows - 1);
    const float *row = &table->data[p * s.ropeColumns];
    return std::pair<double, double>{row[k], row[s.ropeColumns / 2 + k]};
  };
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.headsQ; ++h)
      for (int64_t i = 0, seqQ = s.sequenceQ(b), seqKv = s.sequenceKv(b);
           i < seqQ; ++i) {
        ref.owned[s.queryRow(b, i)] = true;
        int64_t kvHead = h / group;
        // Row i sees keys [d - left, d + right] of [0, Skv) around its
        // bottom-right diagonal d = i + Skv - Sq (per packed sequence).
        int64_t diagonal = i + seqKv - seqQ;
        int64_t first =
            s.windowLeft < 0
                ? 0
                : std::clamp<int64_t>(diagonal - s.windowLeft, 0, seqKv);
        int64_t keys =
            s.windowRight < 0
                ? seqKv
                : std::clamp<int64_t>(diagonal + s.windowRight + 1, 0, seqKv);
        // The sink joins the denominator: a row without keys outputs 0 with
        // the sink as its LSE.
        double sink = sinks ? sinks->data[h]
                            : -std::numeric_limits<double>::infinity();
        if (keys <= first) {
          ref.lse[s.lseIndex(b, h, i)] = sink;
          continue;
        }
        const float *q =
            &t[0].data[(s.queryRow(b, i) * s.headsQ + h) * s.headDim];
        if (table) {
          std::copy(q, q + s.headDim, rotatedQuery.begin());
          for (int64_t k = 0; k < s.ropeColumns / 2; ++k) {
            auto [c, sn] = angle(b, i, k);
            int64_t d = s.ropeStart + 2 * k;
            double x = q[d], y = q[d + 1];
            rotatedQuery[d] = roundTo(queryFormat, float(x * c - y * sn));
            rotatedQuery[d + 1] = roundTo(queryFormat, float(y * c + x * sn));
          }
          q = rotatedQuery.data();
        }
        int64_t factor = b * s.headsKv + kvHead;
        double scoreDescale =
            qDescale ? double(qDescale->data[factor]) * kDescale->data[factor]
                     : 1.0;
        double valueDescale = vDescale ? vDescale->data[factor] : 1.0;
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t j = first; j < keys; ++j) {
          const float *k =
              &t[1].data[(s.keyRow(b, j) * s.headsKv + kvHead) * s.headDim];
          double dot = 0;
          for (int64_t d = 0; d < s.headDim; ++d)
            dot += static_cast<double>(q[d]) * k[d];
          scores[j] = dot * scale * scoreDescale;
          if (s.softcap)
            scores[j] = *s.softcap * std::tanh(scores[j] / *s.softcap);
          // The regions compute in f32, as the kernel's inlined copies do;
          // both see the capped score.
          auto capped = static_cast<float>(scores[j]);
          ElementCoords at{b, h, i, j};
          for (Region *region : {s.score, s.mask}) {
            if (!region)
              continue;
            std::optional<Val> value =
                evaluateModifier(*region, capped, at, captures, ref.error);
            if (!value)
              return ref;
            if (region == s.score)
              scores[j] = value->floats[0];
            else if (value->ints[0] == 0)
              scores[j] = -std::numeric_limits<double>::infinity();
          }
          max = std::max(max, scores[j]);
        }
        max = std::max(max, sink);
        // Every key masked and no sink: O = 0, LSE = -inf.
        if (max == -std::numeric_limits<double>::infinity())
          continue;
        double sum = std::exp(sink - max);
        for (int64_t j = first; j < keys; ++j)
          sum += (scores[j] = std::exp(scores[j] - max));
        int64_t row = (s.queryRow(b, i) * s.headsQ + h) * s.headDimV;
        double *o = &ref.output[row];
        // FP8: P is rounded to e4m3 for P V, the sum is not: relative 2^-4
        // per normal probability, 2^-10 absolute below 2^-6 (subnormals, in
        // units at least the final ones: the kernel's reference is at most
        // the row's maximum, sum >= 1); then O to its 16-bit type, and
        // 2^-16 for f32 arithmetic.
        double *bound = fp8 ? &ref.bound[row] : nullptr;
        for (int64_t j = first; j < keys; ++j) {
          const float *v =
              &t[2].data[(s.valueRow(b, j) * s.headsKv + kvHead) * s.headDimV];
          for (int64_t d = 0; d < s.headDimV; ++d)
            o[d] += scores[j] / sum * v[d] * valueDescale;
          if (!bound)
            continue;
          double weight = (0x1p-4 + 0x1p-16) * scores[j] +
                          (scores[j] < 0x1p-6 ? 0x1p-10 : 0.0);
          for (int64_t d = 0; d < s.headDimV; ++d)
            bound[d] += weight / sum * std::fabs(v[d]) * valueDescale;
        }
        ref.lse[s.lseIndex(b, h, i)] = max + std::log(sum);
        if (table && s.ropeOutput)
          for (int64_t k = 0; k < s.ropeColumns / 2; ++k) {
            auto [c, sn] = angle(b, i, k);
            double *pair = &o[s.ropeStart + 2 * k];
            double x = pair[0], y = pair[1];
            pair[0] = x * c + y * sn;
            pair[1] = y * c - x * sn;
          }
        if (!bound)
          continue;
        for (int64_t d = 0; d < s.headDimV; ++d)
          bound[d] += outputRounding * (std::fabs(o[d]) + bound[d]);
      }
  return ref;
}

std::string sim::compareWithReference(const std::vector<GlobalTensor> &tensors,
                                      const Shape &s, const Reference &ref,
                                      double bound,
                                      std::vector<std::string> &errors) {
  std::string numbers;
  const std::vector<float> &o = tensors[3].data;
  double diff = 0, norm = 0;
  int64_t unwritten = -1, stray = -1;
  int64_t rowElements = s.headsQ * s.headDimV;
  for (size_t i = 0; i < o.size(); ++i) {
    if (!ref.owned[i / rowElements]) {
      if (!std::isnan(o[i])) {
        stray = i;
        break;
      }
      continue;
    }
    if (std::isnan(o[i])) {
      unwritten = i;
      break;
    }
    diff += (o[i] - ref.output[i]) * (o[i] - ref.output[i]);
    norm += ref.output[i] * ref.output[i];
  }
  if (unwritten >= 0 || stray >= 0) {
    int64_t at = unwritten >= 0 ? unwritten : stray;
    int64_t d = at % s.headDimV,
            h = at / s.headDimV % s.headsQ,
            row = at / rowElements;
    std::string element =
        s.varlen
            ? llvm::formatv("O[{0}, {1}, {2}]", row, h, d).str()
            : llvm::formatv("O[{0}, {1}, {2}, {3}]", row / s.seqQ,
                            row % s.seqQ, h, d)
                  .str();
    errors.push_back(unwritten >= 0
                         ? element + " was never written (or is NaN)"
                         : element + " lies in no sequence but was "
                                     "written");
  } else if (!ref.bound.empty()) {
    // FP8: every element within its bound.
    double worst = 0, ratio = 0;
    int64_t at = -1;
    for (size_t i = 0; i < o.size(); ++i) {
      if (!ref.owned[i / rowElements])
        continue;
      double error = std::fabs(o[i] - ref.output[i]);
      worst = std::max(worst, error);
      double share = error / std::max(ref.bound[i], 1e-30);
      if (share > ratio) {
        ratio = share;
        at = i;
      }
    }
    numbers = llvm::formatv("O max-err {0:e2}, at most {1:f2} of the e4m3 "
                            "bound",
                            worst, ratio);
    if (!(ratio <= 1.0))
      errors.push_back(llvm::formatv(
          "O differs from the float64 reference beyond the e4m3 bound at "
          "element {0}: {1}",
          at, numbers));
  } else {
    double relative = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
    numbers =
        llvm::formatv("O rel-err {0:e2} (bound {1:e2})", relative, bound);
    if (!(relative <= bound))
      errors.push_back("O differs from the float64 reference: " +
                       numbers);
  }
  const GlobalTensor *lseTensor = tensorNamed(tensors, "lse");
  if (lseTensor && errors.empty()) {
    const std::vector<float> &lse = lseTensor->data;
    double worst = 0;
    for (size_t i = 0; i < lse.size(); ++i) {
      // Packed: [Hq, Tq], whose padding columns stay unwritten.
      if (s.varlen && !ref.owned[i % s.seqQ]) {
        if (!std::isnan(lse[i])) {
          errors.push_back(llvm::formatv(
              "LSE[{0}, {1}] lies in no sequence but was written",
              i / s.seqQ, i % s.seqQ));
          break;
        }
        continue;
      }
      bool noKeys = std::isinf(ref.lse[i]);
      bool bad = noKeys ? !(std::isinf(lse[i]) && lse[i] < 0)
                        : std::isnan(lse[i]) || std::isinf(lse[i]);
      if (bad) {
        errors.push_back(llvm::formatv("LSE[{0}] is {1}, expected {2}", i,
                                       lse[i], ref.lse[i]));
        break;
      }
      if (!noKeys)
        worst = std::max(worst, std::fabs(lse[i] - ref.lse[i]));
    }
    // A softcap's tanh (MUFU tanh.approx or the FMA polynomial) may be off
    // by 2^-11 relative, so a capped score by softcap 2^-11.
    double lseBound = kLseErrorBound + (s.softcap ? *s.softcap * 0x1p-11 : 0.0);
    numbers +=
        llvm::formatv(", LSE max-err {0:e2} (bound {1:e2})", worst, lseBound);
    if (worst > lseBound)
      errors.push_back(llvm::formatv(
          "LSE differs from the float64 reference by {0:e2}", worst));
  }
  return numbers;
}

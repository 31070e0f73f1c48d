//===- Arithmetic.cpp - arith and vector ops on runtime values ------------===//
//
// f32 arithmetic in f32, conversions to bf16/f16 rounding to nearest even,
// integers at their bit width, reductions in element order (as
// llvm.vector.reduce.* without reassociation evaluates them).
//
//===----------------------------------------------------------------------===//

#include "Values.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fa4::sim;

namespace {

/// The value of a constant attribute of type `type`.
std::optional<Val> constantValue(Attribute attr, Type type) {
  Val v;
  Type element = elementOf(type);
  int64_t count = 1;
  if (auto vector = dyn_cast<VectorType>(type))
    count = vector.getNumElements();
  auto push = [&](Attribute a) {
    if (auto i = dyn_cast<IntegerAttr>(a))
      v.ints.push_back(
          signExtend(i.getValue().getZExtValue(), widthOf(element)));
    else if (auto f = dyn_cast<FloatAttr>(a))
      v.floats.push_back(roundTo(element, f.getValueAsDouble()));
    else
      return false;
    return true;
  };
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.isSplat()) {
      Attribute splat = dense.getSplatValue<Attribute>();
      for (int64_t i = 0; i < count; ++i)
        if (!push(splat))
          return std::nullopt;
    } else {
      for (Attribute a : dense.getValues<Attribute>())
        if (!push(a))
          return std::nullopt;
    }
    return v;
  }
  if (!push(attr))
    return std::nullopt;
  return v;
}

bool compareInts(arith::CmpIPredicate p, int64_t a, int64_t b, unsigned width) {
  uint64_t ua = zeroExtend(a, width), ub = zeroExtend(b, width);
  switch (p) {
  case arith::CmpIPredicate::eq:
    return a == b;
  case arith::CmpIPredicate::ne:
    return a != b;
  case arith::CmpIPredicate::slt:
    return a < b;
  case arith::CmpIPredicate::sle:
    return a <= b;
  case arith::CmpIPredicate::sgt:
    return a > b;
  case arith::CmpIPredicate::sge:
    return a >= b;
  case arith::CmpIPredicate::ult:
    return ua < ub;
  case arith::CmpIPredicate::ule:
    return ua <= ub;
  case arith::CmpIPredicate::ugt:
    return ua > ub;
  case arith::CmpIPredicate::uge:
    return ua >= ub;
  }
  return false;
}

bool compareFloats(arith::CmpFPredicate p, float a, float b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  using P = arith::CmpFPredicate;
  switch (p) {
  case P::AlwaysFalse:
    return false;
  case P::AlwaysTrue:
    return true;
  case P::OEQ:
    return !unordered && a == b;
  case P::OGT:
    return !unordered && a > b;
  case P::OGE:
    return !unordered && a >= b;
  case P::OLT:
    return !unordered && a < b;
  case P::OLE:
    return !unordered && a <= b;
  case P::ONE:
    return !unordered && a != b;
  case P::ORD:
    return !unordered;
  case P::UEQ:
    return unordered || a == b;
  case P::UGT:
    return unordered || a > b;
  case P::UGE:
    return unordered || a >= b;
  case P::ULT:
    return unordered || a < b;
  case P::ULE:
    return unordered || a <= b;
  case P::UNE:
    return unordered || a != b;
  case P::UNO:
    return unordered;
  }
  return false;
}

/// IEEE maximum / minimum with NaN propagation and -0 < +0.
float maximumOf(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::nanf("");
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
float minimumOf(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::nanf("");
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

bool evaluateArith(Operation *op, ArrayRef<const Val *> in, Val &out,
                   std::string &error) {
  auto unsupported = [&](const Twine &message) {
    error = message.str();
    return false;
  };
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    std::optional<Val> v =
        constantValue(constant.getValue(), constant.getType());
    if (!v)
      return unsupported("unsupported constant");
    out = std::move(*v);
    return true;
  }
  Type resultType = op->getResult(0).getType();
  Type inType = op->getOperand(0).getType();
  unsigned inWidth = isa<FloatType>(elementOf(inType)) ? 0 : widthOf(inType);
  unsigned outWidth =
      isa<FloatType>(elementOf(resultType)) ? 0 : widthOf(resultType);

  auto intBinary = [&](auto f) {
    size_t n = in[0]->ints.size();
    out.ints.resize(n);
    for (size_t i = 0; i < n; ++i)
      out.ints[i] = signExtend(
          static_cast<uint64_t>(f(in[0]->ints[i], in[1]->ints[i])), outWidth);
    return true;
  };
  auto floatBinary = [&](auto f) {
    size_t n = in[0]->floats.size();
    out.floats.resize(n);
    for (size_t i = 0; i < n; ++i)
      out.floats[i] =
          roundTo(resultType, f(in[0]->floats[i], in[1]->floats[i]));
    return true;
  };
  // Division and remainder, `f` seeing the sign-extended operands; a zero
  // divisor is an error.
  auto division = [&](auto f) {
    size_t n = in[0]->ints.size();
    out.ints.resize(n);
    for (size_t i = 0; i < n; ++i) {
      if (in[1]->ints[i] == 0)
        return unsupported("division by zero");
      out.ints[i] = signExtend(
          static_cast<uint64_t>(f(in[0]->ints[i], in[1]->ints[i])), outWidth);
    }
    return true;
  };
  auto unsignedOf = [&](int64_t v) { return zeroExtend(v, inWidth); };
  auto intUnary = [&](auto f) {
    size_t n = in[0]->ints.size();
    out.ints.resize(n);
    for (size_t i = 0; i < n; ++i)
      out.ints[i] = f(in[0]->ints[i]);
    return true;
  };

  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](arith::AddIOp) { return intBinary(std::plus<uint64_t>()); })
      .Case([&](arith::SubIOp) { return intBinary(std::minus<uint64_t>()); })
      .Case(
          [&](arith::MulIOp) { return intBinary(std::multiplies<uint64_t>()); })
      .Case([&](arith::AndIOp) { return intBinary(std::bit_and<int64_t>()); })
      .Case([&](arith::OrIOp) { return intBinary(std::bit_or<int64_t>()); })
      .Case([&](arith::XOrIOp) { return intBinary(std::bit_xor<int64_t>()); })
      .Case([&](arith::ShLIOp) {
        return intBinary([&](int64_t a, int64_t b) {
          return b >= static_cast<int64_t>(outWidth) ? 0 : uint64_t(a) << b;
        });
      })
      .Case([&](arith::ShRUIOp) {
        return intBinary([&](int64_t a, int64_t b) {
          return b >= static_cast<int64_t>(outWidth)
                     ? 0
                     : zeroExtend(a, outWidth) >> b;
        });
      })
      .Case([&](arith::DivUIOp) {
        return division([&](int64_t a, int64_t b) {
          return unsignedOf(a) / unsignedOf(b);
        });
      })
      .Case([&](arith::RemUIOp) {
        return division([&](int64_t a, int64_t b) {
          return unsignedOf(a) % unsignedOf(b);
        });
      })
      .Case([&](arith::CeilDivUIOp) {
        return division([&](int64_t a, int64_t b) {
          return (unsignedOf(a) + unsignedOf(b) - 1) / unsignedOf(b);
        });
      })
      .Case([&](arith::DivSIOp) {
        return division([](int64_t a, int64_t b) { return a / b; });
      })
      .Case([&](arith::RemSIOp) {
        return division([](int64_t a, int64_t b) { return a % b; });
      })
      .Case([&](arith::FloorDivSIOp) {
        return division([](int64_t a, int64_t b) {
          int64_t q = a / b;
          return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
        });
      })
      .Case([&](arith::CeilDivSIOp) {
        return division([](int64_t a, int64_t b) {
          int64_t q = a / b;
          return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
        });
      })
      .Case([&](arith::ShRSIOp) {
        return intBinary([&](int64_t a, int64_t b) {
          return b >= static_cast<int64_t>(outWidth) ? (a < 0 ? -1 : 0)
                                                     : a >> b;
        });
      })
      .Case([&](arith::RemFOp) {
        return floatBinary([](float a, float b) { return std::fmod(a, b); });
      })
      .Case([&](arith::FPToUIOp) {
        for (float a : in[0]->floats)
          out.ints.push_back(
              signExtend(static_cast<uint64_t>(a), outWidth));
        return true;
      })
      .Case([&](arith::MinSIOp) {
        return intBinary([](int64_t a, int64_t b) { return std::min(a, b); });
      })
      .Case([&](arith::MaxSIOp) {
        return intBinary([](int64_t a, int64_t b) { return std::max(a, b); });
      })
      .Case([&](arith::MinUIOp) {
        return intBinary([&](int64_t a, int64_t b) {
          return zeroExtend(a, inWidth) < zeroExtend(b, inWidth) ? a : b;
        });
      })
      .Case([&](arith::MaxUIOp) {
        return intBinary([&](int64_t a, int64_t b) {
          return zeroExtend(a, inWidth) > zeroExtend(b, inWidth) ? a : b;
        });
      })
      .Case([&](arith::CmpIOp cmp) {
        return intBinary([&](int64_t a, int64_t b) -> int64_t {
          return compareInts(cmp.getPredicate(), a, b, inWidth) ? -1 : 0;
        });
      })
      .Case([&](arith::IndexCastOp) {
        return intUnary([&](int64_t a) {
          return signExtend(static_cast<uint64_t>(a), outWidth);
        });
      })
      .Case([&](arith::IndexCastUIOp) {
        return intUnary([&](int64_t a) {
          return signExtend(zeroExtend(a, inWidth), outWidth);
        });
      })
      .Case([&](arith::TruncIOp) {
        return intUnary([&](int64_t a) {
          return signExtend(static_cast<uint64_t>(a), outWidth);
        });
      })
      .Case([&](arith::ExtUIOp) {
        return intUnary([&](int64_t a) {
          return signExtend(zeroExtend(a, inWidth), outWidth);
        });
      })
      .Case(
          [&](arith::ExtSIOp) { return intUnary([](int64_t a) { return a; }); })
      .Case([&](arith::AddFOp) { return floatBinary(std::plus<float>()); })
      .Case([&](arith::SubFOp) { return floatBinary(std::minus<float>()); })
      .Case(
          [&](arith::MulFOp) { return floatBinary(std::multiplies<float>()); })
      .Case([&](arith::DivFOp) { return floatBinary(std::divides<float>()); })
      .Case([&](arith::MaximumFOp) { return floatBinary(maximumOf); })
      .Case([&](arith::MinimumFOp) { return floatBinary(minimumOf); })
      .Case([&](arith::MaxNumFOp) {
        return floatBinary([](float a, float b) { return std::fmax(a, b); });
      })
      .Case([&](arith::MinNumFOp) {
        return floatBinary([](float a, float b) { return std::fmin(a, b); });
      })
      .Case([&](arith::NegFOp) {
        out.floats.assign(in[0]->floats.begin(), in[0]->floats.end());
        for (float &x : out.floats)
          x = -x;
        return true;
      })
      .Case([&](arith::CmpFOp cmp) {
        size_t n = in[0]->floats.size();
        out.ints.resize(n);
        for (size_t i = 0; i < n; ++i)
          out.ints[i] = compareFloats(cmp.getPredicate(), in[0]->floats[i],
                                      in[1]->floats[i])
                            ? -1
                            : 0;
        return true;
      })
      .Case([&](arith::TruncFOp) {
        out.floats.resize(in[0]->floats.size());
        for (size_t i = 0; i < out.floats.size(); ++i)
          out.floats[i] = roundTo(resultType, in[0]->floats[i]);
        return true;
      })
      .Case([&](arith::ExtFOp) {
        out.floats.assign(in[0]->floats.begin(), in[0]->floats.end());
        return true;
      })
      .Case([&](arith::SIToFPOp) {
        for (int64_t a : in[0]->ints)
          out.floats.push_back(roundTo(resultType, static_cast<float>(a)));
        return true;
      })
      .Case([&](arith::UIToFPOp) {
        for (int64_t a : in[0]->ints)
          out.floats.push_back(
              roundTo(resultType, static_cast<float>(zeroExtend(a, inWidth))));
        return true;
      })
      .Case([&](arith::FPToSIOp) {
        for (float a : in[0]->floats)
          out.ints.push_back(signExtend(static_cast<int64_t>(a), outWidth));
        return true;
      })
      .Case([&](arith::SelectOp select) {
        const Val &cond = *in[0], &t = *in[1], &f = *in[2];
        bool vectorCond = cond.ints.size() > 1;
        out = t;
        out.pendingLoad = nullptr;
        size_t n = std::max(t.ints.size(), t.floats.size());
        for (size_t i = 0; i < n; ++i) {
          bool c = cond.ints[vectorCond ? i : 0] != 0;
          if (c)
            continue;
          if (!t.floats.empty())
            out.floats[i] = f.floats[i];
          else if (!t.ints.empty())
            out.ints[i] = f.ints[i];
        }
        if (t.kind != Val::Kind::number && cond.ints[0] == 0)
          out = f;
        return true;
      })
      .Default([&](Operation *) {
        return unsupported("the simulator cannot execute this op");
      });
}

/// The math ops score and mask regions use, element by element in f32 (or
/// rounded to the result type): the exact functions, where the GPU's
/// libdevice and approximate forms differ by a few ulp.
bool evaluateMath(Operation *op, ArrayRef<const Val *> in, Val &out,
                  std::string &error) {
  Type resultType = op->getResult(0).getType();
  auto unary = [&](auto f) {
    for (float x : in[0]->floats)
      out.floats.push_back(roundTo(resultType, f(x)));
    return true;
  };
  auto binary = [&](auto f) {
    for (size_t i = 0; i < in[0]->floats.size(); ++i)
      out.floats.push_back(
          roundTo(resultType, f(in[0]->floats[i], in[1]->floats[i])));
    return true;
  };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](math::AbsFOp) { return unary([](float x) { return std::fabs(x); }); })
      .Case([&](math::CeilOp) { return unary([](float x) { return std::ceil(x); }); })
      .Case([&](math::FloorOp) { return unary([](float x) { return std::floor(x); }); })
      .Case([&](math::RoundOp) { return unary([](float x) { return std::round(x); }); })
      .Case([&](math::ExpOp) { return unary([](float x) { return std::exp(x); }); })
      .Case([&](math::Exp2Op) { return unary([](float x) { return std::exp2(x); }); })
      .Case([&](math::ExpM1Op) { return unary([](float x) { return std::expm1(x); }); })
      .Case([&](math::LogOp) { return unary([](float x) { return std::log(x); }); })
      .Case([&](math::Log2Op) { return unary([](float x) { return std::log2(x); }); })
      .Case([&](math::Log10Op) { return unary([](float x) { return std::log10(x); }); })
      .Case([&](math::Log1pOp) { return unary([](float x) { return std::log1p(x); }); })
      .Case([&](math::SqrtOp) { return unary([](float x) { return std::sqrt(x); }); })
      .Case([&](math::RsqrtOp) {
        return unary([](float x) { return 1.0f / std::sqrt(x); });
      })
      .Case([&](math::TanhOp) { return unary([](float x) { return std::tanh(x); }); })
      .Case([&](math::SinOp) { return unary([](float x) { return std::sin(x); }); })
      .Case([&](math::CosOp) { return unary([](float x) { return std::cos(x); }); })
      .Case([&](math::ErfOp) { return unary([](float x) { return std::erf(x); }); })
      .Case([&](math::CopySignOp) {
        return binary([](float x, float y) { return std::copysign(x, y); });
      })
      .Case([&](math::PowFOp) {
        return binary([](float x, float y) { return std::pow(x, y); });
      })
      .Case([&](math::FmaOp) {
        for (size_t i = 0; i < in[0]->floats.size(); ++i)
          out.floats.push_back(roundTo(
              resultType, std::fma(in[0]->floats[i], in[1]->floats[i],
                                   in[2]->floats[i])));
        return true;
      })
      .Case([&](math::AbsIOp) {
        for (int64_t x : in[0]->ints)
          out.ints.push_back(x < 0 ? -x : x);
        return true;
      })
      .Default([&](Operation *) {
        error = "the simulator cannot execute this op";
        return false;
      });
}

bool evaluateVector(Operation *op, ArrayRef<const Val *> in, Val &out,
                    std::string &error) {
  auto unsupported = [&](const Twine &message) {
    error = message.str();
    return false;
  };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](vector::BroadcastOp broadcast) {
        auto type = dyn_cast<VectorType>(broadcast.getType());
        if (!type || in[0]->ints.size() + in[0]->floats.size() != 1)
          return unsupported("only scalar-to-vector broadcasts are supported");
        int64_t n = type.getNumElements();
        if (!in[0]->floats.empty())
          out.floats.assign(n, in[0]->floats[0]);
        else
          out.ints.assign(n, in[0]->ints[0]);
        return true;
      })
      .Case([&](vector::ReductionOp reduction) {
        const Val &v = *in[0];
        if (v.floats.empty())
          return unsupported("only floating-point reductions are supported");
        // In element order, as llvm.vector.reduce.fadd without reassociation
        // evaluates it.
        bool hasAcc = reduction.getAcc() != nullptr;
        float acc = hasAcc ? in[1]->floats[0] : 0.0f;
        size_t first = 0;
        if (!hasAcc) {
          acc = v.floats[0];
          first = 1;
        }
        for (size_t i = first; i < v.floats.size(); ++i) {
          float x = v.floats[i];
          switch (reduction.getKind()) {
          case vector::CombiningKind::ADD:
            acc = acc + x;
            break;
          case vector::CombiningKind::MUL:
            acc = acc * x;
            break;
          case vector::CombiningKind::MAXIMUMF:
            acc = maximumOf(acc, x);
            break;
          case vector::CombiningKind::MINIMUMF:
            acc = minimumOf(acc, x);
            break;
          case vector::CombiningKind::MAXNUMF:
            acc = std::fmax(acc, x);
            break;
          case vector::CombiningKind::MINNUMF:
            acc = std::fmin(acc, x);
            break;
          default:
            return unsupported("unsupported reduction kind");
          }
        }
        out.floats = {acc};
        return true;
      })
      .Case([&](vector::ShuffleOp shuffle) {
        const Val &a = *in[0], &b = *in[1];
        size_t n = std::max(a.floats.size(), a.ints.size());
        for (int64_t index : shuffle.getMask()) {
          const Val &from = static_cast<size_t>(index) < n ? a : b;
          size_t i = static_cast<size_t>(index) < n ? index : index - n;
          if (!from.floats.empty())
            out.floats.push_back(from.floats[i]);
          else
            out.ints.push_back(from.ints[i]);
        }
        return true;
      })
      .Case([&](vector::InterleaveOp) {
        // (a0, b0, a1, b1, ...): canonicalization's form of the shuffle
        // that zips two vectors.
        const Val &a = *in[0], &b = *in[1];
        for (size_t i = 0; i < a.floats.size(); ++i)
          out.floats.append({a.floats[i], b.floats[i]});
        for (size_t i = 0; i < a.ints.size(); ++i)
          out.ints.append({a.ints[i], b.ints[i]});
        return true;
      })
      .Case([&](vector::ExtractOp extract) {
        if (!extract.getDynamicPosition().empty() ||
            extract.getStaticPosition().size() != 1)
          return unsupported(
              "only static one-dimensional extracts are supported");
        int64_t i = extract.getStaticPosition()[0];
        if (!in[0]->floats.empty())
          out.floats = {in[0]->floats[i]};
        else
          out.ints = {in[0]->ints[i]};
        return true;
      })
      .Case([&](vector::FromElementsOp) {
        for (const Val *element : in) {
          out.floats.append(element->floats.begin(), element->floats.end());
          out.ints.append(element->ints.begin(), element->ints.end());
        }
        return true;
      })
      .Case([&](vector::InsertOp insert) {
        if (!insert.getDynamicPosition().empty() ||
            insert.getStaticPosition().size() != 1)
          return unsupported(
              "only static one-dimensional inserts are supported");
        int64_t i = insert.getStaticPosition()[0];
        out = *in[1];
        if (!out.floats.empty())
          out.floats[i] = in[0]->floats[0];
        else
          out.ints[i] = in[0]->ints[0];
        return true;
      })
      .Default([&](Operation *) {
        return unsupported("the simulator cannot execute this op");
      });
}

} // namespace

bool mlir::fa4::sim::evaluate(Operation *op, ArrayRef<const Val *> in, Val &out,
                              std::string &error) {
  if (isa<arith::ArithDialect>(op->getDialect()))
    return evaluateArith(op, in, out, error);
  if (isa<vector::VectorDialect>(op->getDialect()))
    return evaluateVector(op, in, out, error);
  if (isa<math::MathDialect>(op->getDialect()))
    return evaluateMath(op, in, out, error);
  error = "the simulator cannot execute this op";
  return false;
}

// The elementwise kernel family in Ascend C (design notes: elementwise.h). Per core: a range of
// tiles; per tile: GM -> VECIN (DataCopyPad, one block per row), convert to the compute type, the op's
// instruction sequence, convert to the output dtype, VECOUT -> GM (DataCopyPad).
#include "elementwise.h"

#include <climits>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "elementwise_copy.h"
#include "vec_math.h"
#include "kernel_operator.h"

using namespace AscendC;

namespace npu_kernels {

namespace {
constexpr uint32_t kTileAlign = 256;      // elements: Compare's 256-byte rule holds for every dtype
constexpr uint32_t kUbReserve = 9 * 1024; // Select (tensor modes) reserves 8 KB of UB; 1 KB slack
constexpr uint64_t kMinElemsPerCore = 16384;  // a block's set-up is not free: small tensors use few cores
constexpr uint32_t kMaxRowsPerTile = 4095;  // DataCopyPad blockCount

bool IsIntCompute(const ElementwiseTiling& t) { return t.int_compute != 0; }
EwDType ComputeDType(const ElementwiseTiling& t) { return IsIntCompute(t) ? EwDType::I32 : EwDType::F32; }
EwMode ModeOf(const ElementwiseTiling& t, int i) { return EwMode(t.in[i].mode); }
bool UsesQueue(const ElementwiseTiling& t, int i) {
  return ModeOf(t, i) == EwMode::FULL || (ModeOf(t, i) == EwMode::ROW && t.rows_per_tile == 0);
}
bool IsPersistentRow(const ElementwiseTiling& t, int i) {
  return ModeOf(t, i) == EwMode::ROW && t.rows_per_tile != 0;
}
bool NeedsComputeCopy(const ElementwiseTiling& t, int i) {
  const EwMode m = ModeOf(t, i);
  if (m == EwMode::COL || m == EwMode::SCALAR || m == EwMode::IMM) return true;
  return EwDType(t.in[i].dtype) != ComputeDType(t);
}
bool OutNeedsComputeCopy(const ElementwiseTiling& t, const EwOpInfo& info) {
  return !info.bool_out && EwDType(t.out_dtype) != ComputeDType(t);
}
// A half tile: bool outputs and the 8-bit loads and stores go through half; int16 stores through int16.
bool NeedsHalfTileK(const ElementwiseTiling& t, const EwOpInfo& info) {
  const EwDType od = EwDType(t.out_dtype);
  if (info.bool_out || od == EwDType::BOOL || EwIsSmallInt(od)) return true;
  for (int i = 0; i < info.n_in; ++i) {
    const EwDType d = EwDType(t.in[i].dtype);
    if ((d == EwDType::BOOL || d == EwDType::U8 || d == EwDType::I8) && ModeOf(t, i) != EwMode::IMM) return true;
  }
  return false;
}
// uint8 / int8 / int16 results are wrapped to their width with a constant lane mask.
bool NeedsWrapMaskK(const ElementwiseTiling& t, const EwOpInfo& info) {
  return !info.bool_out && EwIsSmallInt(EwDType(t.out_dtype));
}
}  // namespace

EwOpInfo GetEwOpInfo(EwOp op) {
  // {inputs, temps, consts, bool_out, int_ok}
  switch (op) {
    case EwOp::kAdd: return {2, 1, 0, false, true};
    case EwOp::kMul: return {2, 0, 0, false, true};
    case EwOp::kDiv: return {2, 0, 0, false, false};
    case EwOp::kDivFloor: case EwOp::kRemainder: case EwOp::kFmod: return {2, 6, 0, false, false};
    case EwOp::kDivTrunc: return {2, 1, 0, false, false};
    case EwOp::kMaximum: case EwOp::kMinimum: return {2, 0, 0, false, true};
    case EwOp::kPow: return {2, 6, 0, false, false};
    case EwOp::kEq: case EwOp::kNe: case EwOp::kLt: case EwOp::kLe: case EwOp::kGt: case EwOp::kGe:
      return {2, 4, 0, true, true};  // int32 ordering compares need 4 scratch tiles
    case EwOp::kLogicalAnd: case EwOp::kLogicalOr: case EwOp::kLogicalXor: return {2, 0, 0, true, false};
    case EwOp::kWhere: return {3, 0, 0, false, true};
    case EwOp::kClampT: return {3, 0, 0, false, true};
    case EwOp::kClampMinT: case EwOp::kClampMaxT: return {2, 0, 0, false, true};
    case EwOp::kLerp: return {3, 3, 0, false, false};
    case EwOp::kLerpS: return {2, 1, 0, false, false};
    case EwOp::kAddcmul: case EwOp::kAddcdiv: return {3, 1, 0, false, false};
    case EwOp::kNeg: return {1, 0, 0, false, true};
    case EwOp::kAbs: return {1, 1, 0, false, true};
    case EwOp::kExp: case EwOp::kLog: case EwOp::kSqrt: return {1, 0, 0, false, false};
    case EwOp::kRsqrt: return {1, 1, 1, false, false};
    case EwOp::kReciprocal: return {1, 0, 1, false, false};
    case EwOp::kSigmoid: return {1, 1, 0, false, false};
    case EwOp::kTanh: return {1, 1, 0, false, false};
    case EwOp::kRelu: return {1, 0, 0, false, true};
    case EwOp::kClamp: return {1, 1, 0, false, true};
    case EwOp::kLeakyRelu: return {1, 0, 0, false, false};
    case EwOp::kGelu: return {1, 2, 0, false, false};
    case EwOp::kErf: case EwOp::kErfc: return {1, 1, 0, false, false};
    case EwOp::kSin: case EwOp::kCos: return {1, 5, 0, false, false};
    case EwOp::kGeluTanh: case EwOp::kSilu: return {1, 1, 0, false, false};
    case EwOp::kHardswish: return {1, 1, 1, false, false};
    case EwOp::kHardsigmoid: case EwOp::kThreshold: return {1, 0, 1, false, false};
    case EwOp::kLogicalNot: return {1, 0, 0, true, false};
    case EwOp::kSign: return {1, 1, 0, false, true};
    case EwOp::kPowScalar: return {1, 6, 2, false, true};
    case EwOp::kScalarPow: return {1, 6, 0, false, false};
    case EwOp::kRound: return {1, 0, 0, false, true};
    case EwOp::kThresholdBackward: return {2, 0, 1, false, false};
    case EwOp::kSigmoidBackward: case EwOp::kTanhBackward: return {2, 1, 0, false, false};
    case EwOp::kGeluBackward: return {2, 2, 0, false, false};
    case EwOp::kGeluTanhBackward: return {2, 3, 1, false, false};
    case EwOp::kSiluBackward: return {2, 2, 0, false, false};
    case EwOp::kHardtanhBackward: return {2, 0, 1, false, false};
    case EwOp::kLeakyReluBackward: case EwOp::kHardsigmoidBackward: return {2, 1, 0, false, false};
    case EwOp::kHardswishBackward: return {2, 1, 2, false, false};
    case EwOp::kIsNan: return {1, 0, 0, true, false};
    case EwOp::kNanToNum: return {1, 0, 0, false, false};
    case EwOp::kLog1p: case EwOp::kExpm1: return {1, 2, 0, false, false};
    case EwOp::kElu: case EwOp::kSoftplus: case EwOp::kMish: return {1, 4, 0, false, false};
    case EwOp::kFrac: return {1, 1, 0, false, false};
    case EwOp::kHardshrink: return {1, 1, 1, false, false};
    case EwOp::kSoftshrink: return {1, 2, 1, false, false};
    case EwOp::kEluBackward: case EwOp::kSoftplusBackward: return {2, 2, 0, false, false};
    case EwOp::kShrinkBackward: return {2, 1, 1, false, false};
    case EwOp::kBitAnd: case EwOp::kBitOr: return {2, 0, 0, false, true};
    case EwOp::kBitXor: return {2, 1, 0, false, true};
    case EwOp::kBitNot: return {1, 0, 0, false, true};
    case EwOp::kShiftLeft: case EwOp::kShiftRight: return {2, 3, 0, false, true};
    case EwOp::kErfinv: return {1, 4, 0, false, false};
    case EwOp::kLgamma: case EwOp::kDigamma: return {1, 5, 1, false, false};
    default: return {0, 0, 0, false, false};
  }
}

const char* EwOpName(EwOp op) {
  static const char* names[] = {
      "add", "mul", "div", "div_trunc", "div_floor", "maximum", "minimum", "pow", "eq", "ne", "lt", "le", "gt", "ge",
      "logical_and", "logical_or", "logical_xor", "where", "clamp_tensor", "clamp_min_tensor", "clamp_max_tensor",
      "lerp", "lerp_scalar", "addcmul", "addcdiv", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal",
      "sigmoid", "tanh", "relu", "clamp", "leaky_relu", "gelu", "gelu_tanh", "silu", "hardswish", "hardsigmoid",
      "threshold", "logical_not", "sign", "pow_scalar", "scalar_pow", "round", "threshold_backward",
      "sigmoid_backward", "tanh_backward", "gelu_backward", "gelu_tanh_backward", "silu_backward",
      "hardtanh_backward", "leaky_relu_backward", "hardswish_backward", "hardsigmoid_backward", "isnan",
      "nan_to_num", "log1p", "expm1", "elu", "softplus", "mish", "frac", "hardshrink", "softshrink",
      "elu_backward", "softplus_backward", "shrink_backward", "remainder", "fmod", "erf", "sin", "cos", "erfc",
      "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left", "shift_right",
      "erfinv", "lgamma", "digamma"};
  static_assert(sizeof(names) / sizeof(names[0]) == size_t(EwOp::kNumOps), "EwOpName table");
  return uint32_t(op) < uint32_t(EwOp::kNumOps) ? names[uint32_t(op)] : "?";
}

uint64_t elementwise_ub_bytes(const ElementwiseTiling& t, uint32_t tile) {
  const EwOpInfo info = GetEwOpInfo(EwOp(t.op));
  uint64_t b = 0;
  for (int i = 0; i < info.n_in; ++i) {
    const uint64_t sz = EwDTypeSize(EwDType(t.in[i].dtype));
    if (UsesQueue(t, i)) b += 2 * tile * sz;
    if (IsPersistentRow(t, i)) b += tile * sz;
    if (NeedsComputeCopy(t, i)) b += uint64_t(tile) * 4;
  }
  b += 2 * uint64_t(tile) * EwDTypeSize(EwDType(t.out_dtype));
  if (OutNeedsComputeCopy(t, info)) b += uint64_t(tile) * 4;
  b += uint64_t(info.n_temps + info.n_consts) * tile * 4;
  b += 3 * uint64_t(tile) / 8;  // mask bits
  if (NeedsHalfTileK(t, info)) b += uint64_t(tile) * 2;
  if (NeedsWrapMaskK(t, info)) b += uint64_t(tile) * 4;
  return b;
}

void elementwise_tiling(ElementwiseTiling& t, const SocInfo& soc) {
  const EwOpInfo info = GetEwOpInfo(EwOp(t.op));
  t.no_pad = soc.npu_arch == 2002 ? 1 : 0;
  const uint64_t total = t.rows * t.width;
  // Size the tile with every ROW input double-buffered (the chunked case: the most UB).
  t.rows_per_tile = 0;
  const uint64_t per256 = elementwise_ub_bytes(t, kTileAlign);
  const uint64_t budget = soc.ub_bytes > kUbReserve + per256 ? soc.ub_bytes - kUbReserve : per256;
  uint64_t tile = budget / per256 * kTileAlign;
  const uint64_t host_tile = HostCacheTile(per256 * 8 / kTileAlign, kTileAlign);
  if (tile > host_tile) tile = host_tile;
  if (tile < kTileAlign) tile = kTileAlign;
  t.tile = static_cast<uint32_t>(tile);

  // Elements per row stride: every operand's rows must start 32-byte aligned at the same element.
  uint32_t min_size = EwDTypeSize(EwDType(t.out_dtype));
  for (int i = 0; i < info.n_in; ++i)
    if (UsesQueue(t, i) || ModeOf(t, i) == EwMode::ROW) {
      const uint32_t s = EwDTypeSize(EwDType(t.in[i].dtype));
      if (s < min_size) min_size = s;
    }
  const uint64_t stride = AlignUp<uint64_t>(t.width == 0 ? 1 : t.width, kBlockBytes / min_size);

  uint64_t cores = CeilDivU<uint64_t>(total == 0 ? 1 : total, kMinElemsPerCore);
  if (cores > static_cast<uint64_t>(soc.vector_cores)) cores = static_cast<uint64_t>(soc.vector_cores);
  if (cores < 1) cores = 1;
  if (stride <= tile && t.rows > 0) {
    uint64_t r = tile / stride;
    if (r > kMaxRowsPerTile) r = kMaxRowsPerTile;
    const uint64_t balance = CeilDivU<uint64_t>(t.rows, cores);  // enough tiles for the cores
    if (r > balance) r = balance;
    if (r < 1) r = 1;
    t.rows_per_tile = static_cast<uint32_t>(r);
    t.row_stride = static_cast<uint32_t>(stride);
    t.chunks_per_row = 1;
    t.units = CeilDivU<uint64_t>(t.rows, r);
    // Small problems get small tiles: a core's UB use (and its per-block set-up) follows the work.
    const uint64_t need = AlignUp<uint64_t>(r * stride, kTileAlign);
    if (need < t.tile) t.tile = static_cast<uint32_t>(need);
  } else {
    t.rows_per_tile = 0;
    t.row_stride = 0;
    t.chunks_per_row = CeilDivU<uint64_t>(t.width, tile);
    t.units = t.rows * t.chunks_per_row;
  }
  if (cores > t.units) cores = t.units == 0 ? 1 : t.units;
  t.units_per_core = CeilDivU<uint64_t>(t.units, cores);
  t.block_dim = t.units == 0 ? 1 : static_cast<uint32_t>(CeilDivU<uint64_t>(t.units, t.units_per_core));
}

}  // namespace npu_kernels

namespace {

using npu_kernels::ElementwiseTiling;
using npu_kernels::EwDType;
using npu_kernels::EwMode;
using npu_kernels::EwOp;
using npu_kernels::EwOpInfo;

constexpr float kSqrt1_2 = 0.70710678118654752440f;
constexpr float kSqrt2OverPi = 0.79788456080286535588f;    // sqrt(2/pi)
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;     // 1/sqrt(2*pi)
constexpr float kGeluKappa = 0.044715f;

// Calls f(S{}) with S the storage type of `dt`.
template <class F>
__aicore__ inline void WithStorage(EwDType dt, F&& f) {
  switch (dt) {
    case EwDType::F32: f(float{}); break;
    case EwDType::F16: f(half{}); break;
    case EwDType::BF16: f(bfloat16_t{}); break;
    case EwDType::I32: f(int32_t{}); break;
    case EwDType::I64: f(int64_t{}); break;
    case EwDType::BOOL: f(uint8_t{}); break;
    case EwDType::U8: f(uint8_t{}); break;
    case EwDType::I8: f(int8_t{}); break;
    case EwDType::I16: f(int16_t{}); break;
  }
}

// The operands of one tile's compute stage (all UB tensors of at least L elements).
template <typename CT>
struct Operands {
  LocalTensor<CT> x[3], y, T[6], K[2];
  LocalTensor<uint8_t> B[3];  // masks, one bit per element
  uint32_t L = 0;
};

inline LocalTensor<uint16_t> Bits16(const LocalTensor<uint8_t>& b) { return b.ReinterpretCast<uint16_t>(); }

// y = x where x is NaN (max/min/clamp propagate NaN like PyTorch).
__aicore__ inline void PropagateNaN(const LocalTensor<float>& y, const LocalTensor<float>& x,
                                    const LocalTensor<uint8_t>& bits, uint32_t L) {
  Compare(bits, x, x, CMPMODE::EQ, L);  // 1 where x is not NaN
  Select(y, bits, y, x, SELMODE::VSEL_TENSOR_TENSOR_MODE, L);
}

// log1p and expm1 by Kahan's method: with u = 1 + x (resp. exp(x)) rounded, ln(u) * x / (u - 1)
// (resp. (u - 1) * x / ln(u)) cancels u's rounding error, so small |x| keep full relative precision.
// A, B are scratch; out must not alias x.
__aicore__ inline void Log1p(const LocalTensor<float>& out, const LocalTensor<float>& x, const LocalTensor<float>& A,
                             const LocalTensor<float>& B, const LocalTensor<uint8_t>& bits, uint32_t L) {
  Adds(A, x, 1.0f, L);    // u
  Ln(out, A, L);
  Adds(B, A, -1.0f, L);   // u - 1
  Div(out, out, B, L);
  Mul(out, out, x, L);
  CompareScalar(bits, B, 0.0f, CMPMODE::NE, L);  // u == 1: x itself
  Select(out, bits, out, x, SELMODE::VSEL_TENSOR_TENSOR_MODE, L);
  CompareScalar(bits, x, __builtin_inff(), CMPMODE::NE, L);  // inf / inf
  Select(out, bits, out, __builtin_inff(), SELMODE::VSEL_TENSOR_SCALAR_MODE, L);
}
__aicore__ inline void Expm1(const LocalTensor<float>& out, const LocalTensor<float>& x, const LocalTensor<float>& A,
                             const LocalTensor<float>& B, const LocalTensor<uint8_t>& bits, uint32_t L) {
  Exp(A, x, L);           // u
  Adds(B, A, -1.0f, L);   // u - 1
  Ln(out, A, L);
  Div(out, B, out, L);
  Mul(out, out, x, L);
  CompareScalar(bits, B, 0.0f, CMPMODE::NE, L);   // u == 1: x itself
  Select(out, bits, out, x, SELMODE::VSEL_TENSOR_TENSOR_MODE, L);
  CompareScalar(bits, B, -1.0f, CMPMODE::NE, L);  // u == 0: -1
  Select(out, bits, out, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, L);
  CompareScalar(bits, A, __builtin_inff(), CMPMODE::NE, L);  // u == inf: inf
  Select(out, bits, out, __builtin_inff(), SELMODE::VSEL_TENSOR_SCALAR_MODE, L);
}

// The sharedTmpBuffer of an advanced math API (Tanh / Erf / Erfc): a whole float scratch tile (>= 256
// floats, so >= 1 KB: every API's float minimum).
__aicore__ inline LocalTensor<uint8_t> MathTmp(const LocalTensor<float>& scratch) { return scratch.ReinterpretCast<uint8_t>(); }

// p = c[0] x^(n-1) + ... + c[n-1] by Horner's rule.
template <int N>
__aicore__ inline void Horner(const LocalTensor<float>& p, const LocalTensor<float>& x, const float (&c)[N],
                              uint32_t L) {
  Muls(p, x, c[0], L);
  Adds(p, p, c[1], L);
  for (int k = 2; k < N; ++k) {
    Mul(p, p, x, L);
    Adds(p, p, c[k], L);
  }
}

// out = erfinv(x) by M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), the
// single-precision form: w = -ln((1 - x)(1 + x)), a degree-8 polynomial in w - 2.5 where w < 5 and
// in sqrt(w) - 3 beyond, times x. |x| = 1 gives +-inf, |x| > 1 NaN (the log of a negative number).
__aicore__ inline void Erfinv(const LocalTensor<float>& out, const LocalTensor<float>& x, const LocalTensor<float>& A,
                              const LocalTensor<float>& B, const LocalTensor<float>& C, const LocalTensor<float>& D,
                              const LocalTensor<uint8_t>& bits, uint32_t L) {
  static const float central[] = {2.81022636e-08f, 3.43273939e-07f, -3.5233877e-06f, -4.39150654e-06f,
                                  0.00021858087f,  -0.00125372503f, -0.00417768164f, 0.246640727f, 1.50140941f};
  static const float tail[] = {-0.000200214257f, 0.000100950558f, 0.00134934322f, -0.00367342844f, 0.00573950773f,
                               -0.0076224613f,   0.00943887047f,   1.00167406f,    2.83297682f};
  Abs(A, x, L);
  Muls(B, A, -1.0f, L);
  Adds(B, B, 1.0f, L);             // 1 - |x| (exact for |x| >= 0.5)
  Adds(C, A, 1.0f, L);
  Mul(B, B, C, L);
  Ln(B, B, L);
  Muls(B, B, -1.0f, L);            // w
  Adds(C, B, -2.5f, L);
  Horner(D, C, central, L);
  Sqrt(C, B, L);
  Adds(C, C, -3.0f, L);
  Horner(out, C, tail, L);
  CompareScalar(bits, B, 5.0f, CMPMODE::LT, L);
  Select(out, bits, D, out, SELMODE::VSEL_TENSOR_TENSOR_MODE, L);
  Mul(out, out, x, L);
  CompareScalar(bits, A, 1.0f, CMPMODE::EQ, L);  // erfinv(+-1) = +-inf
  Muls(C, x, __builtin_inff(), L);
  Select(out, bits, C, out, SELMODE::VSEL_TENSOR_TENSOR_MODE, L);
}

// s = sin(pi |f|) and, with c non-null, c = cos(pi f), for f = x - rint(x) in [-1/2, 1/2]: Taylor
// polynomials of sin and cos in t = pi |f| <= pi/2 (remainders below 8e-8). f is left in F.
__aicore__ inline void SinCosPiFrac(const LocalTensor<float>& s, const LocalTensor<float>* c,
                                    const LocalTensor<float>& F, const LocalTensor<float>& x,
                                    const LocalTensor<float>& T, uint32_t L) {
  static const float sin_c[] = {-2.5052108e-08f, 2.7557319e-06f, -1.9841270e-04f, 8.3333333e-03f,
                                -1.6666667e-01f, 1.0f};   // in t^2, times t
  static const float cos_c[] = {2.0876757e-09f, -2.7557319e-07f, 2.4801587e-05f, -1.3888889e-03f,
                                4.1666667e-02f, -0.5f,  1.0f};  // in t^2
  Cast(F, x, RoundMode::CAST_RINT, L);
  Sub(F, x, F, L);                  // f
  Abs(T, F, L);
  Muls(T, T, 3.14159265358979f, L); // t
  Mul(T, T, T, L);                  // t^2
  if (c != nullptr) Horner(*c, T, cos_c, L);
  Horner(s, T, sin_c, L);
  Abs(T, F, L);
  Muls(T, T, 3.14159265358979f, L);
  Mul(s, s, T, L);                  // t P(t^2)
}

// out = ln|Gamma(x)|. For 0 <= x < 7.5: n = rint(x - 2), y = x - n in [1.5, 2.5], lgamma(y) by its
// Taylor series at 2, (1 - euler) t + sum_k (-1)^k (zeta(k) - 1) / k t^k with t = y - 2 (|t| <= 1/2:
// 14 terms), then the recurrence: + ln((x - 1) ... (x - n)) for n > 0, - ln(x (x + 1)) or - ln(x)
// for n < 0 (no cancellation against a large shifted value, so lgamma(1) = lgamma(2) = 0 and the
// results near them keep their absolute precision). x >= 7.5: Stirling's series
// (x - 1/2) ln x - x + ln(2 pi)/2 + 1/(12 x) - 1/(360 x^3) + 1/(1260 x^5) - 1/(1680 x^7).
// x < 0: ln(pi / |sin(pi x)|) - lgamma(1 - x); poles (0, negative integers) and +-inf give +inf.
__aicore__ inline void Lgamma(const LocalTensor<float>& out, const LocalTensor<float>& x, const LocalTensor<float>& Z,
                              const LocalTensor<float>& N, const LocalTensor<float>& A, const LocalTensor<float>& B,
                              const LocalTensor<float>& Q, const LocalTensor<float>& one,
                              const LocalTensor<uint8_t>& neg, const LocalTensor<uint8_t>& bits, uint32_t L) {
  static const float at2[] = {4.3748667899e-06f, -9.4394882753e-06f, 2.0507212776e-05f, -4.4926236738e-05f,
                              9.9457512782e-05f, -2.2315475845e-04f, 5.0966952474e-04f, -1.1927539117e-03f,
                              2.8905103307e-03f, -7.3855510287e-03f, 2.0580808428e-02f, -6.7352301053e-02f,
                              3.2246703342e-01f, 4.2278433510e-01f, 0.0f};
  static const float stirling[] = {-5.9523809524e-04f, 7.9365079365e-04f, -2.7777777778e-03f, 8.3333333333e-02f};
  const SELMODE TT = SELMODE::VSEL_TENSOR_TENSOR_MODE;
  CompareScalar(neg, x, 0.0f, CMPMODE::LT, L);
  Muls(Z, x, -1.0f, L);
  Adds(Z, Z, 1.0f, L);
  Select(Z, neg, Z, x, TT, L);      // xr = x < 0 ? 1 - x : x
  // ---- xr < 7.5: the series at 2 and the recurrence
  Mins(N, Z, 7.5f, L);
  Adds(N, N, -2.0f, L);
  Cast(N, N, RoundMode::CAST_RINT, L);  // n in [-2, 5]
  Adds(A, Z, -2.0f, L);             // exact for xr >= 1 (below, dropping xr's low bits costs nothing)
  Sub(A, A, N, L);                  // t
  Horner(out, A, at2, L);           // lgamma(2 + t)
  Duplicate(Q, 1.0f, L);            // + ln((x - 1) ... (x - n)) for n > 0
  for (int k = 1; k <= 5; ++k) {
    Adds(A, Z, -float(k), L);
    CompareScalar(bits, N, float(k), CMPMODE::GE, L);
    Select(A, bits, A, one, TT, L);
    Mul(Q, Q, A, L);
  }
  Ln(Q, Q, L);
  Add(out, out, Q, L);
  CompareScalar(bits, N, -1.0f, CMPMODE::LE, L);  // - ln|x| - ln(x + 1) for n < 0 (each logged:
  Select(A, bits, Z, one, TT, L);                 // 1 / (x (x + 1)) overflows for denormal x)
  Abs(A, A, L);
  Ln(A, A, L);
  Sub(out, out, A, L);
  Adds(A, Z, 1.0f, L);
  CompareScalar(bits, N, -2.0f, CMPMODE::LE, L);
  Select(A, bits, A, one, TT, L);
  Ln(A, A, L);
  Sub(out, out, A, L);
  // ---- xr >= 7.5: Stirling's series
  Ln(A, Z, L);
  Adds(B, Z, -0.5f, L);
  Mul(B, B, A, L);
  Sub(B, B, Z, L);
  Adds(B, B, 0.91893853320467274f, L);
  Div(A, one, Z, L);                // 1/x
  Mul(Q, A, A, L);
  Horner(N, Q, stirling, L);
  Mul(N, N, A, L);
  Add(B, B, N, L);
  CompareScalar(bits, Z, 7.5f, CMPMODE::LT, L);
  Select(out, bits, out, B, TT, L); // lgamma(xr)
  // ---- reflection: ln(pi / sin(pi |f|)) - lgamma(1 - x)
  SinCosPiFrac(A, nullptr, B, x, Q, L);
  Div(A, one, A, L);
  Muls(A, A, 3.14159265358979f, L);
  Ln(A, A, L);
  Sub(A, A, out, L);
  Select(out, neg, A, out, TT, L);
  // poles below 0 (f == 0; the difference above is inf - inf for large ones) and +-inf: +inf
  CompareScalar(bits, B, 0.0f, CMPMODE::EQ, L);
  And(Bits16(bits), Bits16(bits), Bits16(neg), L / 16);
  Duplicate(A, __builtin_inff(), L);
  Select(out, bits, A, out, TT, L);
  Abs(B, x, L);
  CompareScalar(bits, B, __builtin_inff(), CMPMODE::EQ, L);
  Select(out, bits, A, out, TT, L);
}

// out = digamma(x). For x >= 0: psi(z) at z = x + 6 by ln z - 1/(2z) - 1/(12 z^2) + 1/(120 z^4)
// - 1/(252 z^6) + 1/(240 z^8) - 1/(132 z^10), minus 1/x + ... + 1/(x + 5) for the shift.
// x < 0: psi(1 - x) - pi cos(pi f) / sin(pi f) with f = x - rint(x) (tan has period pi, and the
// fraction keeps pi x's rounding out); negative integers give NaN, +-0 give -+inf.
__aicore__ inline void Digamma(const LocalTensor<float>& out, const LocalTensor<float>& x, const LocalTensor<float>& Z,
                               const LocalTensor<float>& S, const LocalTensor<float>& A, const LocalTensor<float>& B,
                               const LocalTensor<float>& C, const LocalTensor<float>& one,
                               const LocalTensor<uint8_t>& neg, const LocalTensor<uint8_t>& bits, uint32_t L) {
  static const float series[] = {-7.5757575758e-03f, 4.1666666667e-03f, -3.9682539683e-03f, 8.3333333333e-03f,
                                 -8.3333333333e-02f};
  const SELMODE TT = SELMODE::VSEL_TENSOR_TENSOR_MODE;
  CompareScalar(neg, x, 0.0f, CMPMODE::LT, L);
  Muls(Z, x, -1.0f, L);
  Adds(Z, Z, 1.0f, L);
  Select(Z, neg, Z, x, TT, L);      // xr
  Div(S, one, Z, L);                // the shift's sum 1/xr + ... + 1/(xr + 5)
  for (int k = 1; k < 6; ++k) {
    Adds(A, Z, float(k), L);
    Div(A, one, A, L);
    Add(S, S, A, L);
  }
  Adds(Z, Z, 6.0f, L);
  Div(A, one, Z, L);                // 1/z
  Mul(B, A, A, L);                  // 1/z^2
  Horner(C, B, series, L);
  Mul(C, C, B, L);
  Ln(out, Z, L);
  Muls(A, A, -0.5f, L);
  Add(out, out, A, L);
  Add(out, out, C, L);
  Sub(out, out, S, L);              // psi(xr)
  // reflection: psi(1 - x) - pi cos(pi f) / sin(pi f) (sin(pi |f|) carries f's sign back)
  SinCosPiFrac(A, &C, B, x, S, L);
  CompareScalar(bits, B, 0.0f, CMPMODE::LT, L);
  Muls(S, A, -1.0f, L);
  Select(A, bits, S, A, TT, L);     // sin(pi f)
  Div(C, C, A, L);
  Muls(C, C, 3.14159265358979f, L);
  Sub(C, out, C, L);
  Select(out, neg, C, out, TT, L);
  // poles: negative integers NaN (f == 0 there), +-0 -> -+inf
  CompareScalar(bits, B, 0.0f, CMPMODE::EQ, L);
  And(Bits16(bits), Bits16(bits), Bits16(neg), L / 16);
  Not(Bits16(bits), Bits16(bits), L / 16);
  Select(out, bits, out, __builtin_nanf(""), SELMODE::VSEL_TENSOR_SCALAR_MODE, L);
  CompareScalar(bits, x, 0.0f, CMPMODE::EQ, L);
  Div(A, one, x, L);                // +-inf for +-0
  Muls(A, A, -1.0f, L);
  Select(out, bits, A, out, TT, L);
}

CMPMODE CmpModeOf(EwOp op) {
  switch (op) {
    case EwOp::kEq: return CMPMODE::EQ;
    case EwOp::kNe: return CMPMODE::NE;
    case EwOp::kLt: return CMPMODE::LT;
    case EwOp::kLe: return CMPMODE::LE;
    case EwOp::kGt: return CMPMODE::GT;
    default: return CMPMODE::GE;
  }
}
// a OP b == b SWAP(OP) a
CMPMODE Swapped(CMPMODE m) {
  switch (m) {
    case CMPMODE::LT: return CMPMODE::GT;
    case CMPMODE::GT: return CMPMODE::LT;
    case CMPMODE::LE: return CMPMODE::GE;
    case CMPMODE::GE: return CMPMODE::LE;
    default: return m;
  }
}

// Exact remainders for floor division, remainder and fmod. With n an integer-valued float near
// a / b, r = fl(a - n * b) rounded once from the exact value: p = fl(n * b) and e with p + e = n * b
// exactly (Dekker's product: n and b split into 12-bit halves by clearing their low 12 mantissa
// bits, so each partial product is exact and nothing overflows), then r = (a - p) - e, where a - p is
// exact (Sterbenz). No fused multiply-add is needed. Uses T[1..5] of `o`; n, a, b are not written.
// v & 0xFFFFF000 (the upper 12 mantissa bits: products of two such halves are exact).
__aicore__ inline void HighHalf(const LocalTensor<float>& dst, const LocalTensor<float>& v,
                                const LocalTensor<float>& mask, uint32_t L) {
  And(dst.ReinterpretCast<uint16_t>(), v.ReinterpretCast<uint16_t>(), mask.ReinterpretCast<uint16_t>(), 2 * L);
}

// Dekker's product: p = fl(x y) and e with p + e = x y exactly, from x and y split into 12-bit halves
// (the low 12 mantissa bits cleared: each partial product is exact, and nothing overflows that x y
// does not). xh, xl, yh, yl, mask: scratch; p may be mask, e may be y or mask (written after their
// last read); x and y are not written otherwise.
__aicore__ inline void TwoProduct(const LocalTensor<float>& p, const LocalTensor<float>& e, const LocalTensor<float>& x,
                                  const LocalTensor<float>& y, const LocalTensor<float>& xh,
                                  const LocalTensor<float>& xl, const LocalTensor<float>& yh,
                                  const LocalTensor<float>& yl, const LocalTensor<float>& mask, uint32_t L) {
  Duplicate(mask.ReinterpretCast<int32_t>(), int32_t(-4096), L);  // 0xFFFFF000
  HighHalf(xh, x, mask, L);
  Sub(xl, x, xh, L);
  HighHalf(yh, y, mask, L);
  Sub(yl, y, yh, L);
  Mul(p, x, y, L);
  Mul(e, xh, yh, L);
  Sub(e, e, p, L);
  Mul(xh, xh, yl, L);
  Add(e, e, xh, L);
  Mul(xh, xl, yh, L);
  Add(e, e, xh, L);
  Mul(xh, xl, yl, L);
  Add(e, e, xh, L);
}

__aicore__ inline void ExactRemainder(const LocalTensor<float>& r, const LocalTensor<float>& a,
                                      const LocalTensor<float>& n, const LocalTensor<float>& b,
                                      Operands<float>& o, uint32_t L) {
  const auto& T1 = o.T[1];
  const auto& T5 = o.T[5];
  TwoProduct(r, T5, n, b, T1, o.T[2], o.T[3], o.T[4], T5, L);  // r = p, T5 = e
  Sub(T1, a, r, L);
  Sub(r, T1, T5, L);                              // r = (a - p) - e
}

// ---- pow to an ulp or two: exp(b ln a) in float loses |b ln a| ulps (b ln a is rounded to 24 bits,
// then exp scales its absolute error into the result: 30-90 ulps where b ln a nears +-88). Here ln a
// is a double-float H + Lo (about 2^-32 relative), b (H + Lo) a double-float p + e by Dekker's exact
// product, and exp(p + e) = 2^n exp(r) with r = p - n ln2 + e reduced exactly (Cody and Waite's two
// parts of ln 2), so only exp(r) and the final scaling round. Plain float operations and bit masks:
// no fused multiply-add, no tables.
constexpr float kLn2Hi = 0.693145751953125f;         // 16 significant bits: n * kLn2Hi is exact
constexpr float kLn2Lo = 1.42860682030941723212e-6f;  // ln 2 - kLn2Hi


// ln A = H + Lo for finite A > 0 (T0 = A on entry, scaled by 2^24 where B1 is set: a subnormal A).
// Out: H in T3, Lo in y. Uses T0..T5, y, B0.
// A = m 2^k with m in [sqrt(1/2), sqrt(2)) from the bits; ln m = 2 atanh(s), s = (m - 1) / (m + 1) as
// s12 + s_lo (s12: s to 12 bits, so s12 (m + 1) is exact in two products; s_lo = the exact residual
// / (m + 1)); 2 atanh(s) = 2 s + 2 s^3 (1/3 + s^2/5 + ... + s^10/13) (|s| <= 0.1716: 2^-36 left out).
__aicore__ inline void LnDoubleFloat(Operands<float>& o, uint32_t L) {
  const auto &T0 = o.T[0], &T1 = o.T[1], &T2 = o.T[2], &T3 = o.T[3], &T4 = o.T[4], &T5 = o.T[5];
  const auto& y = o.y;
  const auto& B0 = o.B[0];
  constexpr auto TT = SELMODE::VSEL_TENSOR_TENSOR_MODE;
  auto bits = [](const LocalTensor<float>& t) { return t.ReinterpretCast<uint16_t>(); };
  Duplicate(T1.ReinterpretCast<int32_t>(), int32_t(0x7F800000), L);
  And(bits(y), bits(T0), bits(T1), 2 * L);                    // biased exponent << 23
  Cast(T2, y.ReinterpretCast<int32_t>(), RoundMode::CAST_NONE, L);
  Muls(T2, T2, 1.0f / 8388608.0f, L);
  Adds(T2, T2, -127.0f, L);                                   // k
  Adds(T1, T2, -24.0f, L);
  Select(T2, o.B[1], T1, T2, TT, L);                          // subnormal A came in scaled by 2^24
  Duplicate(T1.ReinterpretCast<int32_t>(), int32_t(0x007FFFFF), L);
  And(bits(T3), bits(T0), bits(T1), 2 * L);
  Duplicate(T1.ReinterpretCast<int32_t>(), int32_t(0x3F800000), L);
  Or(bits(T3), bits(T3), bits(T1), 2 * L);                    // m in [1, 2)
  CompareScalar(B0, T3, 1.41421356f, CMPMODE::GT, L);
  Muls(T1, T3, 0.5f, L);
  Select(T3, B0, T1, T3, TT, L);
  Adds(T1, T2, 1.0f, L);
  Select(T2, B0, T1, T2, TT, L);                              // A = m 2^k, m in [0.707, 1.414]
  Adds(T0, T3, -1.0f, L);                                     // u = m - 1 (exact)
  Adds(T1, T3, 1.0f, L);                                      // v = fl(m + 1)
  Adds(T3, T1, -2.0f, L);
  Sub(T3, T0, T3, L);                                         // vl: v + vl = m + 1 exactly
  Div(T4, T0, T1, L);
  Duplicate(T5.ReinterpretCast<int32_t>(), int32_t(-4096), L);
  HighHalf(T4, T4, T5, L);                                    // s12
  HighHalf(y, T1, T5, L);                                     // v_hi
  Sub(T5, T1, y, L);                                          // v_lo
  Mul(y, T4, y, L);
  Sub(y, T0, y, L);                                           // u - s12 v_hi (exact)
  Mul(T5, T4, T5, L);
  Sub(y, y, T5, L);
  Mul(T5, T4, T3, L);
  Sub(y, y, T5, L);                                           // r = u - s12 (m + 1)
  Div(T0, y, T1, L);                                          // s_lo = r / (m + 1)
  Add(T1, T4, T0, L);                                         // s
  Mul(T3, T1, T1, L);                                         // z = s^2
  Muls(y, T3, 1.0f / 13.0f, L);
  Adds(y, y, 1.0f / 11.0f, L);
  Mul(y, y, T3, L);
  Adds(y, y, 1.0f / 9.0f, L);
  Mul(y, y, T3, L);
  Adds(y, y, 1.0f / 7.0f, L);
  Mul(y, y, T3, L);
  Adds(y, y, 1.0f / 5.0f, L);
  Mul(y, y, T3, L);
  Adds(y, y, 1.0f / 3.0f, L);
  Mul(y, y, T3, L);
  Mul(y, y, T1, L);
  Muls(y, y, 2.0f, L);                                        // 2 s^3 (1/3 + ...)
  Muls(T0, T0, 2.0f, L);
  Add(T0, T0, y, L);                                          // ln m = 2 s12 + T0
  Muls(T4, T4, 2.0f, L);
  // H + err = k kLn2Hi + 2 s12 exactly (two-sum), Lo = err + k kLn2Lo + T0.
  Muls(T1, T2, kLn2Hi, L);
  Add(T3, T1, T4, L);                                         // H
  Sub(T5, T3, T1, L);
  Sub(y, T3, T5, L);
  Sub(y, T1, y, L);
  Sub(T5, T4, T5, L);
  Add(y, y, T5, L);
  Muls(T5, T2, kLn2Lo, L);
  Add(y, y, T5, L);
  Add(y, y, T0, L);                                           // Lo
}

// exp(b (H + Lo)) for finite b (H in T3, Lo in y); the result in T1. Uses T0..T5, y, B0.
__aicore__ inline void ExpOfProduct(const LocalTensor<float>& b, Operands<float>& o, uint32_t L) {
  const auto &T0 = o.T[0], &T1 = o.T[1], &T2 = o.T[2], &T3 = o.T[3], &T4 = o.T[4], &T5 = o.T[5];
  const auto& y = o.y;
  const auto& B0 = o.B[0];
  TwoProduct(T5, T3, b, T3, T0, T1, T2, T4, T5, L);         // p = fl(b H) in T5, b H - p in T3
  Mul(T0, b, y, L);
  Add(T3, T3, T0, L);                                         // e
  // Beyond +-100 the result is inf or 0 whatever e is (and e may be NaN from an inf p).
  Abs(T0, T5, L);
  CompareScalar(B0, T0, 100.0f, CMPMODE::LE, L);
  Select(T3, B0, T3, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, L);
  Mins(T5, T5, 100.0f, L);
  Maxs(T5, T5, -110.0f, L);
  Muls(T0, T5, 1.44269504f, L);
  Cast(T0, T0, RoundMode::CAST_RINT, L);                      // n
  Muls(T1, T0, kLn2Hi, L);
  Sub(T1, T5, T1, L);                                         // p - n kLn2Hi (exact)
  Muls(T2, T0, kLn2Lo, L);
  Sub(T1, T1, T2, L);
  Add(T1, T1, T3, L);                                         // r, |r| <= 0.35
  Exp(T1, T1, L);
  // 2^n = 2^n1 2^n2 (n1 = floor(n / 2)): each a normal float built from its exponent bits, and the
  // product rounds once (subnormal results included).
  Muls(T2, T0, 0.5f, L);
  Cast(T2, T2, RoundMode::CAST_FLOOR, L);                     // n1
  Sub(T4, T0, T2, L);                                         // n2
  for (const LocalTensor<float>* ni : {&T2, &T4}) {
    Adds(*ni, *ni, 127.0f, L);
    Muls(*ni, *ni, 8388608.0f, L);
    Cast(T5.ReinterpretCast<int32_t>(), *ni, RoundMode::CAST_RINT, L);
    Mul(T1, T1, T5, L);
  }
}

// Whether exp(p) of the plain p (in T0) is accurate enough for the whole tile: every finite |p| <=
// kPlainPowLimit, where the rounding of p costs at most a ulp or so of the result (most tiles of
// everyday pow: squares of activations, roots of [0.5, 2]); otherwise the double-float path. One
// max over the tile read by the scalar unit. Uses T1..T3, B0.
constexpr float kPlainPowLimit = 2.0f;
__aicore__ inline bool PlainExpSuffices(const LocalTensor<float>& p, Operands<float>& o, uint32_t L) {
  const auto &T1 = o.T[1], &T2 = o.T[2], &T3 = o.T[3];
  Abs(T1, p, L);
  CompareScalar(o.B[0], T1, 3.40282347e38f, CMPMODE::LE, L);  // inf / NaN lanes: special values
  Select(T1, o.B[0], T1, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, L);
  ReduceMax(T2, T1, T3, int32_t(L));
  SetFlag<HardEvent::V_S>(0);
  WaitFlag<HardEvent::V_S>(0);
  return T2.GetValue(0) <= kPlainPowLimit;
}

// B = the sign bit of x (-0.0 and -inf included): the sign of x on 1.0, compared with 0. Uses T.
__aicore__ inline void SignBitMask(const LocalTensor<uint8_t>& B, const LocalTensor<float>& x,
                                   const LocalTensor<float>& T, const LocalTensor<float>& U, uint32_t L) {
  Duplicate(U.ReinterpretCast<int32_t>(), int32_t(0x80000000u), L);
  And(T.ReinterpretCast<uint16_t>(), x.ReinterpretCast<uint16_t>(), U.ReinterpretCast<uint16_t>(), 2 * L);
  Duplicate(U.ReinterpretCast<int32_t>(), int32_t(0x3F800000), L);
  Or(T.ReinterpretCast<uint16_t>(), T.ReinterpretCast<uint16_t>(), U.ReinterpretCast<uint16_t>(), 2 * L);
  CompareScalar(B, T, 0.0f, CMPMODE::LT, L);
}

// |a|^b for float a (any) and b (a tensor): the accurate path where |a| is finite and nonzero and b
// finite, the plain exp(b ln |a|) elsewhere (zeros, infinities, NaN: the special values the callers
// fix up after). Result in y. Uses T0..T5, B0..B2.
__aicore__ inline void PowAbs(const LocalTensor<float>& a, const LocalTensor<float>& b, Operands<float>& o,
                              uint32_t L) {
  const auto& T0 = o.T[0];
  const auto& y = o.y;
  const auto &B1 = o.B[1], &B2 = o.B[2];
  Abs(T0, a, L);
  Ln(T0, T0, L);
  Mul(T0, T0, b, L);                                          // plain p = b ln|a|
  if (PlainExpSuffices(T0, o, L)) {
    Exp(y, T0, L);
    return;
  }
  Abs(T0, a, L);
  Abs(y, b, L);
  CompareScalar(B2, y, 3.40282347e38f, CMPMODE::LE, L);     // b finite
  CompareScalar(B1, T0, 0.0f, CMPMODE::GT, L);              // |a| finite, nonzero
  And(Bits16(B2), Bits16(B2), Bits16(B1), L / 16);
  CompareScalar(B1, T0, 3.40282347e38f, CMPMODE::LE, L);
  And(Bits16(B2), Bits16(B2), Bits16(B1), L / 16);
  CompareScalar(B1, T0, 1.17549435e-38f, CMPMODE::LT, L);   // subnormal: scaled into the normal range
  Muls(y, T0, 16777216.0f, L);
  Select(T0, B1, y, T0, SELMODE::VSEL_TENSOR_TENSOR_MODE, L);
  LnDoubleFloat(o, L);
  ExpOfProduct(b, o, L);
  Abs(T0, a, L);
  Ln(T0, T0, L);
  Mul(T0, T0, b, L);
  Exp(T0, T0, L);
  Select(y, B2, o.T[1], T0, SELMODE::VSEL_TENSOR_TENSOR_MODE, L);
}

// n -= 1 where sign(r) is the opposite of sign(s) (r != 0): n was one step past the exact quotient.
// `step` is +-1 per element (T[2] is free after ExactRemainder). Uses T[1], T[2], B[1].
__aicore__ inline void StepBackWhereOpposite(const LocalTensor<float>& n, const LocalTensor<float>& r,
                                             const LocalTensor<float>& s, float step, Operands<float>& o,
                                             uint32_t L) {
  constexpr auto TS = SELMODE::VSEL_TENSOR_SCALAR_MODE;
  constexpr auto TT = SELMODE::VSEL_TENSOR_TENSOR_MODE;
  const auto& T1 = o.T[1];
  const auto& T2 = o.T[2];
  const auto& B1 = o.B[1];
  CompareScalar(B1, s, 0.0f, CMPMODE::LT, L);
  Duplicate(T2, -1.0f, L);
  Select(T2, B1, T2, 1.0f, TS, L);                // sign(s)
  Mul(T1, r, T2, L);
  CompareScalar(B1, T1, 0.0f, CMPMODE::LT, L);    // opposite signs (false for NaN)
  Adds(T2, n, -step, L);
  Select(n, B1, T2, n, TT, L);
}

// sin / cos of one float with |x| >= 8192 (finite), on the scalar unit: an exact reduction by pi/2
// (Payne and Hanek's method). |x| = m 2^(e-23) with m a 24-bit integer; |x| 2/pi mod 4 needs only the
// bits of 2/pi from 2^-(e-24) on (earlier ones add multiples of 4), so a 96-bit window W of them times
// m (a 120-bit integer, built from 32-bit products) holds the quadrant and 60+ exact bits of the
// fraction. The fraction times pi/2 (in two float parts) is the reduced argument, then the vector
// path's polynomials.
constexpr uint32_t kTwoOverPi[8] = {0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0,  // 2/pi, bits 1..256
                                    0xDB629599, 0x3C439041, 0xFE5163AB, 0xDEBBC561};  // (mpmath)
__aicore__ inline float SinCosLargeArg(float x, bool is_sin) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  const bool neg = bits >> 31;
  const int32_t e = int32_t((bits >> 23) & 0xFF) - 127;   // >= 13 here
  const uint64_t m = (bits & 0x7FFFFF) | 0x800000;
  const int32_t i0 = e - 24 > 1 ? e - 24 : 1;             // first bit of 2/pi that matters
  const uint32_t off = uint32_t(i0 - 1), wi = off / 32, sh = off % 32;
  uint64_t w[3];
  for (int j = 0; j < 3; ++j)
    w[j] = sh ? ((kTwoOverPi[wi + j] << sh) | (kTwoOverPi[wi + j + 1] >> (32 - sh))) & 0xFFFFFFFFu
              : kTwoOverPi[wi + j];
  // P = m * W = hi * 2^64 + lo; |x| 2/pi = P / 2^s.
  const uint64_t a = m * w[2], b = m * w[1], c = m * w[0];
  const uint64_t lo = a + (b << 32);
  const uint64_t hi = c + (b >> 32) + (lo < a ? 1 : 0);
  const int32_t s = i0 + 118 - e;                          // 94 .. 106
  uint32_t q = uint32_t(hi >> (s - 64)) & 3;
  const uint64_t frac = (hi << (128 - s)) | (lo >> (s - 64));  // the fraction, 64 bits
  q = (q + uint32_t(frac >> 63)) & 3;                      // round to the nearest quadrant
  const int64_t f = int64_t(frac) >> 1;                   // r / (pi/2) in [-1/2, 1/2), times 2^63
  const float fh = float(f);
  const float fl = float(f - int64_t(fh));
  constexpr float kScale = 1.0f / 9223372036854775808.0f;  // 2^-63
  constexpr float kPio2Hi = 1.57079637050628662109375f, kPio2Lo = -4.371138828673793e-8f;
  const float u = fh * kScale, v = fl * kScale;
  const float r = u * kPio2Hi + (u * kPio2Lo + v * kPio2Hi);
  const float z = r * r;
  const float sr = r + r * z * (-1.6666654611e-1f + z * (8.3321608736e-3f + z * -1.9515295891e-4f));
  const float cr = 1.0f - 0.5f * z + z * z * (4.166664568298827e-2f + z * (-1.388731625493765e-3f + z * 2.443315711809948e-5f));
  // x = q pi/2 + r: sin -> sin r, cos r, -sin r, -cos r; cos -> cos r, -sin r, -cos r, sin r.
  float y;
  if (is_sin) {
    y = (q & 1) ? cr : sr;
    if (q & 2) y = -y;
    if (neg) y = -y;
  } else {
    y = (q & 1) ? sr : cr;
    if (q == 1 || q == 2) y = -y;
  }
  return y;
}

// fmod(a, b) exactly, for finite a and finite nonzero b, on the scalar unit (used where the quotient
// reaches 2^24 and the vector path's float quotient is no longer an exact integer): with |a| = ma 2^ea
// and |b| = mb 2^eb (24-bit integer mantissas, exponents of their last bits), |a| mod |b| =
// ((ma 2^(ea - eb)) mod mb) 2^eb, the power of two shifted in 39 bits at a time; the result is exact
// and keeps a's sign. remainder (Python's %) adds b where the signs differ, as PyTorch does.
__aicore__ inline void SplitFloat(float v, uint64_t& mant, int32_t& exp2) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  const uint32_t field = (bits >> 23) & 0xFF;
  mant = field ? ((bits & 0x7FFFFF) | 0x800000) : (bits & 0x7FFFFF);
  exp2 = (field ? int32_t(field) : 1) - 150;
}
__aicore__ inline float Pow2Float(int32_t e) {  // 2^e, e in [-149, 127]
  const uint32_t bits = e >= -126 ? uint32_t(e + 127) << 23 : uint32_t(1) << (e + 149);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
__aicore__ inline float FmodExactScalar(float a, float b) {
  uint64_t ma, mb;
  int32_t ea, eb;
  SplitFloat(a, ma, ea);
  SplitFloat(b, mb, eb);
  const bool neg = std::signbit(a);
  if (std::fabs(a) < std::fabs(b)) return a;
  uint64_t r = ma % mb;
  for (int32_t d = ea - eb; d > 0;) {
    const int32_t k = d < 39 ? d : 39;
    r = (r << k) % mb;
    d -= k;
  }
  const float mag = float(r) * Pow2Float(eb);  // exact: a multiple of 2^eb below |b|
  return neg ? -mag : mag;
}
__aicore__ inline float RemainderExactScalar(float a, float b) {
  const float m = FmodExactScalar(a, b);
  return (m != 0.0f && (b < 0.0f) != (m < 0.0f)) ? m + b : m;
}

// Lanes the vector sequence cannot compute exactly (rare) are redone on the scalar unit: `mask` marks
// them (one bit per lane, least-significant bit first) and fix(i) gives lane i's value. A tile without
// any costs a Select and a max. flag, red, work: float scratch tiles of L lanes.
template <class Fix>
__aicore__ inline void RedoMarkedLanes(const LocalTensor<float>& y, const LocalTensor<uint8_t>& mask,
                                       const LocalTensor<float>& flag, const LocalTensor<float>& red,
                                       const LocalTensor<float>& work, uint32_t L, Fix&& fix) {
  Duplicate(flag, 1.0f, L);
  Select(flag, mask, flag, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, L);
  ReduceMax(red, flag, work, int32_t(L));
  SetFlag<HardEvent::V_S>(0);
  WaitFlag<HardEvent::V_S>(0);
  if (!(red.GetValue(0) > 0.0f)) return;
  for (uint32_t i = 0; i < L; ++i)
    if ((mask.GetValue(i / 8) >> (i % 8)) & 1) y.SetValue(i, fix(i));
  SetFlag<HardEvent::S_V>(0);  // the lanes are written before the vector unit or MTE3 reads y
  WaitFlag<HardEvent::S_V>(0);
  SetFlag<HardEvent::S_MTE3>(0);
  WaitFlag<HardEvent::S_MTE3>(0);
}

void ComputeFloat(const ElementwiseTiling& t, Operands<float>& o) {
  const uint32_t L = o.L;
  const auto& x0 = o.x[0];
  const auto& x1 = o.x[1];
  const auto& x2 = o.x[2];
  const auto& y = o.y;
  const auto& T0 = o.T[0];
  const auto& T1 = o.T[1];
  const auto& T2 = o.T[2];
  const auto& K0 = o.K[0];
  const auto& B0 = o.B[0];
  const auto& B1 = o.B[1];
  const auto& B2 = o.B[2];
  const float* sf = t.sf;
  const bool imm0 = EwMode(t.in[0].mode) == EwMode::IMM, imm1 = EwMode(t.in[1].mode) == EwMode::IMM;
  constexpr auto TT = SELMODE::VSEL_TENSOR_TENSOR_MODE;
  constexpr auto TS = SELMODE::VSEL_TENSOR_SCALAR_MODE;
  const EwOp op = EwOp(t.op);
  switch (op) {
    case EwOp::kAdd:
      if (imm1) {
        Adds(y, x0, sf[0] * t.imm_f[1], L);
      } else if (imm0) {
        Muls(y, x1, sf[0], L);
        Adds(y, y, t.imm_f[0], L);
      } else if (sf[0] == 1.0f) {
        Add(y, x0, x1, L);
      } else {
        Muls(T0, x1, sf[0], L);
        Add(y, x0, T0, L);
      }
      break;
    case EwOp::kMul:
      if (imm1) Muls(y, x0, t.imm_f[1], L);
      else if (imm0) Muls(y, x1, t.imm_f[0], L);
      else Mul(y, x0, x1, L);
      break;
    case EwOp::kDiv: Div(y, x0, x1, L); break;
    case EwOp::kDivTrunc:  // PyTorch rounds a half/bf16 quotient to its dtype before truncating
      Div(y, x0, x1, L);   // (unless the divisor is a host scalar: si[0] = 1)
      if (t.si[0] != 1 && EwDType(t.out_dtype) == EwDType::F16) {
        Cast(T0.ReinterpretCast<half>(), y, RoundMode::CAST_RINT, L);
        Cast(y, T0.ReinterpretCast<half>(), RoundMode::CAST_NONE, L);
      } else if (t.si[0] != 1 && EwDType(t.out_dtype) == EwDType::BF16) {
        Cast(T0.ReinterpretCast<bfloat16_t>(), y, RoundMode::CAST_RINT, L);
        Cast(y, T0.ReinterpretCast<bfloat16_t>(), RoundMode::CAST_NONE, L);
      }
      Cast(y, y, RoundMode::CAST_TRUNC, L);
      break;
    case EwOp::kDivFloor: {
      // PyTorch's floor division is the floor of the exact quotient a / b (it derives it from
      // fmod), not of the rounded one: 1 // 0.1f is 9 although 1 / 0.1f rounds to 10. n = floor(a / b)
      // is the true floor or one above it (rounding is monotonic); the exact remainder a - n * b
      // has the sign opposite to b exactly when n is one too high.
      Div(y, x0, x1, L);
      Cast(T0, y, RoundMode::CAST_FLOOR, L);          // n
      ExactRemainder(y, x0, T0, x1, o, L);
      StepBackWhereOpposite(T0, y, x1, 1.0f, o, L);
      // inf // b (b != 0) is NaN: fmod(inf, b) is NaN; a / 0 stays the IEEE quotient.
      Abs(T2, x0, L);
      CompareScalar(B1, T2, INFINITY, CMPMODE::LT, L);
      CompareScalar(B2, x1, 0.0f, CMPMODE::EQ, L);
      Or(Bits16(B1), Bits16(B1), Bits16(B2), L / 16);
      Select(T0, B1, T0, std::nanf(""), TS, L);
      // a // +-inf for finite a != 0 of the other sign is -1 (the product splits are NaN there).
      Abs(T2, x1, L);
      CompareScalar(B1, T2, INFINITY, CMPMODE::EQ, L);
      Abs(T2, x0, L);
      CompareScalar(B2, T2, INFINITY, CMPMODE::LT, L);
      And(Bits16(B1), Bits16(B1), Bits16(B2), L / 16);
      Mul(T2, x0, x1, L);
      CompareScalar(B2, T2, 0.0f, CMPMODE::LT, L);
      And(Bits16(B1), Bits16(B1), Bits16(B2), L / 16);
      Duplicate(T2, -1.0f, L);
      Select(y, B1, T2, T0, TT, L);
      break;
    }
    case EwOp::kRemainder:
    case EwOp::kFmod: {
      // The exact integer quotient (floor for remainder, trunc for fmod) as in kDivFloor, then the
      // remainder for it, rounded once: fmod's is exact; remainder's is PyTorch's fmod(a, b) + b
      // (rounded) where it adjusts. Quotients of 2^24 and more are not exact integers in float:
      // those lanes are redone below. b == 0 or a infinite gives NaN (the products are NaN).
      const bool rem = op == EwOp::kRemainder;
      Div(y, x0, x1, L);
      Cast(T0, y, rem ? RoundMode::CAST_FLOOR : RoundMode::CAST_TRUNC, L);
      ExactRemainder(y, x0, T0, x1, o, L);
      if (rem) {
        StepBackWhereOpposite(T0, y, x1, 1.0f, o, L);   // r must have b's sign
      } else {
        // trunc: r must have a's sign; a step back is towards zero, i.e. by sign(a) * sign(b).
        CompareScalar(B1, x0, 0.0f, CMPMODE::LT, L);
        Duplicate(T2, -1.0f, L);
        Select(T2, B1, T2, 1.0f, TS, L);              // sign(a)
        Mul(T1, y, T2, L);
        CompareScalar(B2, T1, 0.0f, CMPMODE::LT, L);  // r and a of opposite signs (false for NaN)
        CompareScalar(B1, x1, 0.0f, CMPMODE::LT, L);
        Duplicate(T1, -1.0f, L);
        Select(T1, B1, T1, 1.0f, TS, L);              // sign(b)
        Mul(T2, T2, T1, L);
        Sub(T1, T0, T2, L);
        Select(T0, B2, T1, T0, TT, L);
      }
      ExactRemainder(y, x0, T0, x1, o, L);
      // A zero remainder has a's sign (fmod's), also where remainder does not adjust.
      CompareScalar(B1, y, 0.0f, CMPMODE::EQ, L);
      Muls(T1, x0, 0.0f, L);
      Select(y, B1, T1, y, TT, L);
      // b = +-inf, a finite: fmod is a; remainder is a, or b where a != 0 has the other sign.
      Abs(T2, x1, L);
      CompareScalar(B1, T2, INFINITY, CMPMODE::EQ, L);
      Abs(T2, x0, L);
      CompareScalar(B2, T2, INFINITY, CMPMODE::LT, L);
      And(Bits16(B1), Bits16(B1), Bits16(B2), L / 16);
      if (rem) {
        Mul(T2, x0, x1, L);
        CompareScalar(B0, T2, 0.0f, CMPMODE::LT, L);
        Select(T2, B0, x1, x0, TT, L);
        Select(y, B1, T2, y, TT, L);
      } else {
        Select(y, B1, x0, y, TT, L);
      }
      // |a / b| >= 2^24 with a finite and b finite, nonzero (the quotient may overflow to inf): the
      // float quotient is no longer an exact integer; and a NaN from finite operands (n * b overflowed
      // near float's max). Such lanes (rare) are redone exactly on the scalar unit.
      Div(T1, x0, x1, L);
      Abs(T1, T1, L);
      CompareScalar(B0, T1, 16777216.0f, CMPMODE::GE, L);
      Compare(B1, y, y, CMPMODE::NE, L);
      Or(Bits16(B0), Bits16(B0), Bits16(B1), L / 16);
      Abs(T2, x0, L);
      CompareScalar(B1, T2, INFINITY, CMPMODE::LT, L);
      And(Bits16(B0), Bits16(B0), Bits16(B1), L / 16);
      Abs(T2, x1, L);
      CompareScalar(B1, T2, INFINITY, CMPMODE::LT, L);
      And(Bits16(B0), Bits16(B0), Bits16(B1), L / 16);
      CompareScalar(B1, T2, 0.0f, CMPMODE::GT, L);
      And(Bits16(B0), Bits16(B0), Bits16(B1), L / 16);
      RedoMarkedLanes(y, B0, o.T[3], o.T[4], o.T[5], L, [&](uint32_t i) {
        const float a = x0.GetValue(i), b = x1.GetValue(i);
        return rem ? RemainderExactScalar(a, b) : FmodExactScalar(a, b);
      });
      break;
    }
    case EwOp::kMaximum:
    case EwOp::kMinimum:
    case EwOp::kClampMinT:
    case EwOp::kClampMaxT:
      if (op == EwOp::kMaximum || op == EwOp::kClampMinT) Max(y, x0, x1, L);
      else Min(y, x0, x1, L);
      PropagateNaN(y, x0, B0, L);
      PropagateNaN(y, x1, B0, L);
      break;
    case EwOp::kClampT:
      Max(y, x0, x1, L);
      Min(y, y, x2, L);
      PropagateNaN(y, x0, B0, L);
      PropagateNaN(y, x1, B0, L);
      PropagateNaN(y, x2, B0, L);
      break;
    case EwOp::kPow:
      PowAbs(x0, x1, o, L);                           // |a|^b
      // The sign rules of C99's pow for a negative base (sign bit set: -0 and -inf too).
      Cast(T1, x1, RoundMode::CAST_TRUNC, L);
      Compare(B0, T1, x1, CMPMODE::EQ, L);            // b is an integer (or infinite)
      Muls(T2, x1, 0.5f, L);
      Cast(T2, T2, RoundMode::CAST_TRUNC, L);
      Muls(T2, T2, 2.0f, L);
      Compare(B1, T2, x1, CMPMODE::NE, L);
      And(Bits16(B1), Bits16(B1), Bits16(B0), L / 16);  // b is an odd integer
      Muls(T1, y, -1.0f, L);
      Select(T1, B1, T1, y, TT, L);                   // odd -> -r, even -> r
      Abs(T2, x0, L);
      CompareScalar(B1, T2, 0.0f, CMPMODE::EQ, L);
      CompareScalar(B2, T2, INFINITY, CMPMODE::EQ, L);
      Or(Bits16(B1), Bits16(B1), Bits16(B2), L / 16);
      Or(Bits16(B0), Bits16(B0), Bits16(B1), L / 16);
      Select(T1, B0, T1, std::nanf(""), TS, L);       // a non-integer power of a finite negative: NaN
      SignBitMask(B2, x0, T2, T0, L);
      Select(y, B2, T1, y, TT, L);
      CompareScalar(B2, x1, 0.0f, CMPMODE::NE, L);    // a ** 0 = 1
      Select(y, B2, y, 1.0f, TS, L);
      CompareScalar(B2, x0, 1.0f, CMPMODE::NE, L);    // 1 ** b = 1
      Select(y, B2, y, 1.0f, TS, L);
      Abs(T2, x0, L);                                 // (-1) ** +-inf = 1
      CompareScalar(B1, T2, 1.0f, CMPMODE::EQ, L);
      Abs(T2, x1, L);
      CompareScalar(B2, T2, INFINITY, CMPMODE::EQ, L);
      And(Bits16(B1), Bits16(B1), Bits16(B2), L / 16);
      Duplicate(T2, 1.0f, L);
      Select(y, B1, T2, y, TT, L);
      break;
    case EwOp::kEq: case EwOp::kNe: case EwOp::kLt: case EwOp::kLe: case EwOp::kGt: case EwOp::kGe: {
      const CMPMODE m = CmpModeOf(op);
      if (imm1) CompareScalar(B0, x0, t.imm_f[1], m, L);
      else if (imm0) CompareScalar(B0, x1, t.imm_f[0], Swapped(m), L);
      else Compare(B0, x0, x1, m, L);
      break;
    }
    case EwOp::kLogicalAnd:
    case EwOp::kLogicalOr:
    case EwOp::kLogicalXor:
      CompareScalar(B0, x0, 0.0f, CMPMODE::NE, L);
      CompareScalar(B1, x1, 0.0f, CMPMODE::NE, L);
      if (op == EwOp::kLogicalAnd) {
        And(Bits16(B0), Bits16(B0), Bits16(B1), L / 16);
      } else if (op == EwOp::kLogicalOr) {
        Or(Bits16(B0), Bits16(B0), Bits16(B1), L / 16);
      } else {  // a ^ b = (a | b) & ~(a & b)
        Or(Bits16(B2), Bits16(B0), Bits16(B1), L / 16);
        And(Bits16(B0), Bits16(B0), Bits16(B1), L / 16);
        Not(Bits16(B0), Bits16(B0), L / 16);
        And(Bits16(B0), Bits16(B0), Bits16(B2), L / 16);
      }
      break;
    case EwOp::kLogicalNot: CompareScalar(B0, x0, 0.0f, CMPMODE::EQ, L); break;
    case EwOp::kWhere:
      CompareScalar(B0, x0, 0.0f, CMPMODE::NE, L);
      if (EwMode(t.in[2].mode) == EwMode::IMM) Select(y, B0, x1, t.imm_f[2], TS, L);
      else Select(y, B0, x1, x2, TT, L);
      break;
    case EwOp::kLerp:
      Sub(T0, x1, x0, L);        // end - self
      Mul(T1, x2, T0, L);
      Add(T1, x0, T1, L);        // self + w * (end - self)
      Muls(T2, x2, -1.0f, L);
      Adds(T2, T2, 1.0f, L);
      Mul(T2, T0, T2, L);
      Sub(T2, x1, T2, L);        // end - (end - self) * (1 - w)
      Abs(y, x2, L);
      CompareScalar(B0, y, 0.5f, CMPMODE::LT, L);
      Select(y, B0, T1, T2, TT, L);
      break;
    case EwOp::kLerpS:
      Sub(T0, x1, x0, L);
      if (std::fabs(sf[0]) < 0.5f) {
        Muls(T0, T0, sf[0], L);
        Add(y, x0, T0, L);
      } else {
        Muls(T0, T0, sf[1], L);  // sf1 = 1 - w
        Sub(y, x1, T0, L);
      }
      break;
    case EwOp::kAddcmul:
      Muls(T0, x1, sf[0], L);
      Mul(T0, T0, x2, L);
      Add(y, x0, T0, L);
      break;
    case EwOp::kAddcdiv:
      Muls(T0, x1, sf[0], L);
      Div(T0, T0, x2, L);
      Add(y, x0, T0, L);
      break;
    case EwOp::kNeg: Muls(y, x0, -1.0f, L); break;
    case EwOp::kAbs: Abs(y, x0, L); break;
    case EwOp::kExp: Exp(y, x0, L); break;
    case EwOp::kLog: Ln(y, x0, L); break;
    case EwOp::kSqrt: Sqrt(y, x0, L); break;
    case EwOp::kRsqrt:  // 1/sqrt(x): the Rsqrt instruction misses float accuracy (shared/ascendc.md §4.2)
      Sqrt(T0, x0, L);
      Div(y, K0, T0, L);
      break;
    case EwOp::kReciprocal: Div(y, K0, x0, L); break;
    case EwOp::kSigmoid: AscendC::Sigmoid(y, x0, MathTmp(T0), L); break;
    case EwOp::kTanh: AscendC::Tanh(y, x0, MathTmp(T0), L); break;
    case EwOp::kRelu:
      Relu(y, x0, L);
      PropagateNaN(y, x0, B0, L);
      break;
    case EwOp::kClamp:  // x < lo ? lo : x > hi ? hi : x (NaN and signed zeros pass, as on the CPU):
      // the advanced ClampMin / ClampMax, one pass per bound
      if (t.si[0] & 1) ClampMin(y, x0, MathTmp(T0), sf[0], L);
      if (t.si[0] & 2) ClampMax(y, (t.si[0] & 1) ? y : x0, MathTmp(T0), sf[1], L);
      break;
    case EwOp::kLeakyRelu: LeakyRelu(y, x0, sf[0], L); break;
    case EwOp::kErf: Erf(y, x0, MathTmp(T0), L); break;
    case EwOp::kErfc: Erfc(y, x0, MathTmp(T0), L); break;
    case EwOp::kErfinv: Erfinv(y, x0, T0, T1, T2, o.T[3], B0, L); break;
    case EwOp::kLgamma: Lgamma(y, x0, T0, T1, T2, o.T[3], o.T[4], K0, o.B[1], B0, L); break;
    case EwOp::kDigamma: Digamma(y, x0, T0, T1, T2, o.T[3], o.T[4], K0, o.B[1], B0, L); break;
    case EwOp::kSin:
    case EwOp::kCos: {
      // Octant reduction as in Cephes' sinf/cosf: j = the even integer nearest above floor(|x| 4/pi),
      // r = |x| - j pi/4 with pi/4 split in three parts whose products with j < 2^16 are exact
      // (|x| < 8192), then the minimax polynomials of sin and cos on [-pi/4, pi/4] and the octant's
      // choice and sign. sin(-x) = -sin(x), cos(-x) = cos(x); inf gives NaN, -0.0 stays -0.0.
      const bool is_sin = op == EwOp::kSin;
      const auto& T3 = o.T[3];
      const auto& T4 = o.T[4];
      Abs(T0, x0, L);
      Muls(T1, T0, 1.27323954473516268f, L);          // |x| 4/pi
      Cast(T1, T1, RoundMode::CAST_FLOOR, L);
      Muls(T2, T1, 0.5f, L);
      Cast(T2, T2, RoundMode::CAST_FLOOR, L);
      Muls(T2, T2, -2.0f, L);
      Add(T2, T2, T1, L);                             // j odd: 1
      Add(T1, T1, T2, L);                             // j even
      Muls(T2, T1, -0.78515625f, L);
      Add(T0, T0, T2, L);
      Muls(T2, T1, -2.4187564849853515625e-4f, L);
      Add(T0, T0, T2, L);
      Muls(T2, T1, -3.77489497744594108e-8f, L);
      Add(T0, T0, T2, L);                             // r
      Muls(T2, T1, 0.125f, L);
      Cast(T2, T2, RoundMode::CAST_FLOOR, L);
      Muls(T2, T2, -8.0f, L);
      Add(T1, T1, T2, L);                             // m = j mod 8, in {0, 2, 4, 6}
      Mul(T2, T0, T0, L);                             // z = r^2
      Muls(T3, T2, -1.9515295891e-4f, L);
      Adds(T3, T3, 8.3321608736e-3f, L);
      Mul(T3, T3, T2, L);
      Adds(T3, T3, -1.6666654611e-1f, L);
      Mul(T3, T3, T2, L);
      Mul(T3, T3, T0, L);
      Add(T3, T3, T0, L);                             // sin(r)
      Muls(T4, T2, 2.443315711809948e-5f, L);
      Adds(T4, T4, -1.388731625493765e-3f, L);
      Mul(T4, T4, T2, L);
      Adds(T4, T4, 4.166664568298827e-2f, L);
      Mul(T4, T4, T2, L);
      Mul(T4, T4, T2, L);
      Muls(T0, T2, -0.5f, L);
      Add(T4, T4, T0, L);
      Adds(T4, T4, 1.0f, L);                          // cos(r)
      // Octant m: sin -> 0: sin, 2: cos, 4: -sin, 6: -cos; cos -> 0: cos, 2: -sin, 4: -cos, 6: sin.
      Adds(T2, T1, -4.0f, L);
      Abs(T2, T2, L);
      CompareScalar(B2, T2, 2.0f, CMPMODE::EQ, L);    // m is 2 or 6: the other polynomial
      if (is_sin) {
        Select(T0, B2, T4, T3, TT, L);
        CompareScalar(B0, T1, 3.0f, CMPMODE::GT, L);  // m is 4 or 6: negative
      } else {
        Select(T0, B2, T3, T4, TT, L);
        CompareScalar(B0, T1, 1.0f, CMPMODE::GT, L);
        CompareScalar(B1, T1, 5.0f, CMPMODE::LT, L);
        And(Bits16(B0), Bits16(B0), Bits16(B1), L / 16);  // m is 2 or 4: negative
      }
      Muls(T2, T0, -1.0f, L);
      Select(y, B0, T2, T0, TT, L);
      if (is_sin) {
        Muls(T2, y, -1.0f, L);
        CompareScalar(B2, x0, 0.0f, CMPMODE::LT, L);
        Select(y, B2, T2, y, TT, L);                  // sin(-x) = -sin(x)
        CompareScalar(B2, x0, 0.0f, CMPMODE::EQ, L);
        Select(y, B2, x0, y, TT, L);                  // -0.0 stays -0.0 (r = +0 there)
      }
      // inf -> NaN (the reduction above would give garbage); NaN propagates through r.
      Abs(T2, x0, L);
      CompareScalar(B2, T2, INFINITY, CMPMODE::NE, L);
      Select(y, B2, y, std::nanf(""), TS, L);
      // Finite |x| >= 8192: the three-part pi/4 is no longer exact. Such lanes (rare) are redone on the
      // scalar unit with the exact reduction.
      CompareScalar(B1, T2, 8192.0f, CMPMODE::GE, L);
      And(Bits16(B1), Bits16(B1), Bits16(B2), L / 16);
      RedoMarkedLanes(y, B1, T3, T4, T0, L, [&](uint32_t i) { return SinCosLargeArg(x0.GetValue(i), is_sin); });
      break;
    }
    case EwOp::kGelu:  // 0.5 x erfc(-x / sqrt2): erfc keeps the negative tail's relative precision
      Muls(T1, x0, -kSqrt1_2, L);
      Erfc(T1, T1, MathTmp(T0), L);
      Mul(y, x0, T1, L);
      Muls(y, y, 0.5f, L);
      break;
    case EwOp::kGeluTanh:  // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + kappa x^3)
      Mul(T0, x0, x0, L);
      Mul(T0, T0, x0, L);
      Muls(T0, T0, kGeluKappa, L);
      Add(T0, T0, x0, L);
      Muls(T0, T0, -2.0f * kSqrt2OverPi, L);
      Exp(T0, T0, L);
      Adds(T0, T0, 1.0f, L);
      Div(y, x0, T0, L);
      break;
    case EwOp::kSilu:  // x sigmoid(x)
      AscendC::Sigmoid(y, x0, MathTmp(T0), L);
      Mul(y, y, x0, L);
      break;
    case EwOp::kHardswish:  // x * min(max(x + 3, 0), 6) / 6
      Adds(T0, x0, 3.0f, L);
      Maxs(T0, T0, 0.0f, L);
      Mins(T0, T0, 6.0f, L);
      Mul(T0, x0, T0, L);
      Div(y, T0, K0, L);
      break;
    case EwOp::kHardsigmoid:  // min(max(x + 3, 0), 6) / 6, NaN passes
      Adds(y, x0, 3.0f, L);
      Maxs(y, y, 0.0f, L);
      Mins(y, y, 6.0f, L);
      Div(y, y, K0, L);
      PropagateNaN(y, x0, B0, L);
      break;
    case EwOp::kIsNan: Compare(B0, x0, x0, CMPMODE::NE, L); break;
    case EwOp::kNanToNum:
      Compare(B0, x0, x0, CMPMODE::EQ, L);
      Select(y, B0, x0, sf[0], TS, L);
      CompareScalar(B0, y, __builtin_inff(), CMPMODE::NE, L);
      Select(y, B0, y, sf[1], TS, L);
      CompareScalar(B0, y, -__builtin_inff(), CMPMODE::NE, L);
      Select(y, B0, y, sf[2], TS, L);
      break;
    case EwOp::kLog1p: Log1p(y, x0, T0, T1, B0, L); break;
    case EwOp::kExpm1: Expm1(y, x0, T0, T1, B0, L); break;
    case EwOp::kElu:
      Muls(T0, x0, sf[2], L);
      Expm1(T1, T0, T2, o.T[3], B0, L);
      Muls(T1, T1, sf[0], L);
      Muls(T2, x0, sf[1], L);
      CompareScalar(B0, x0, 0.0f, CMPMODE::GT, L);
      Select(y, B0, T2, T1, TT, L);
      break;
    case EwOp::kSoftplus:
    case EwOp::kMish: {
      const float beta = op == EwOp::kMish ? 1.0f : sf[0], threshold = op == EwOp::kMish ? 20.0f : sf[1];
      Muls(T0, x0, beta, L);
      CompareScalar(B1, T0, threshold, CMPMODE::GT, L);
      Exp(T1, T0, L);
      Log1p(T2, T1, T0, o.T[3], B0, L);
      if (beta != 1.0f) Muls(T2, T2, 1.0f / beta, L);
      Select(T2, B1, x0, T2, TT, L);  // softplus
      if (op == EwOp::kSoftplus) {
        Adds(y, T2, 0.0f, L);
      } else {
        AscendC::Tanh(y, T2, MathTmp(T0), L);
        Mul(y, y, x0, L);
      }
      break;
    }
    case EwOp::kFrac:
      Cast(T0, x0, RoundMode::CAST_TRUNC, L);
      Sub(y, x0, T0, L);
      break;
    case EwOp::kHardshrink:  // (K0 = 0)
      Abs(T0, x0, L);
      CompareScalar(B0, T0, sf[0], CMPMODE::LE, L);
      Select(y, B0, K0, x0, TT, L);
      break;
    case EwOp::kSoftshrink:  // |x| <= l ? 0 : x > l ? x - l : x + l   (K0 = 0; NaN passes)
      Adds(T0, x0, -sf[0], L);
      Adds(T1, x0, sf[0], L);
      CompareScalar(B0, x0, sf[0], CMPMODE::GT, L);
      Select(y, B0, T0, T1, TT, L);
      Abs(T0, x0, L);
      CompareScalar(B0, T0, sf[0], CMPMODE::LE, L);
      Select(y, B0, K0, y, TT, L);
      break;
    case EwOp::kThreshold:  // x <= threshold ? value : x  (K0 = value)
      CompareScalar(B0, x0, sf[0], CMPMODE::LE, L);
      Select(y, B0, K0, x0, TT, L);
      break;
    case EwOp::kSign: Sign(y, x0, MathTmp(T0), L); break;  // NaN and -0.0 -> 0, as PyTorch
    case EwOp::kPowScalar:
      switch (npu_kernels::EwPowForm(t.si[0])) {
        case npu_kernels::EwPowForm::kSquare: Mul(y, x0, x0, L); break;
        case npu_kernels::EwPowForm::kCube:
          Mul(y, x0, x0, L);
          Mul(y, y, x0, L);
          break;
        case npu_kernels::EwPowForm::kSqrt: Sqrt(y, x0, L); break;
        case npu_kernels::EwPowForm::kRsqrt:
          Sqrt(T0, x0, L);
          Div(y, K0, T0, L);
          break;
        case npu_kernels::EwPowForm::kReciprocal: Div(y, K0, x0, L); break;
        case npu_kernels::EwPowForm::kInvSquare:
          Mul(T0, x0, x0, L);
          Div(y, K0, T0, L);
          break;
        default:  // |x|^s with the sign rules of pow for a negative base (si1: s is an integer, si2: odd)
          PowAbs(x0, o.K[1], o, L);                   // (K1 = s)
          if (t.si[1]) {
            if (t.si[2]) {                            // odd: the sign of x (-0 and -inf too)
              Muls(T0, y, -1.0f, L);
              SignBitMask(B0, x0, T1, T2, L);
              Select(y, B0, T0, y, TT, L);
            }
          } else {                                    // NaN for a finite negative x (C99: not -0, -inf)
            CompareScalar(B0, x0, 0.0f, CMPMODE::GE, L);
            CompareScalar(B1, x0, -INFINITY, CMPMODE::EQ, L);
            Or(Bits16(B0), Bits16(B0), Bits16(B1), L / 16);
            Select(y, B0, y, std::nanf(""), TS, L);
          }
          if (std::isinf(sf[0])) {                    // (-1) ** +-inf = 1
            Abs(T0, x0, L);
            CompareScalar(B0, T0, 1.0f, CMPMODE::NE, L);
            Select(y, B0, y, 1.0f, TS, L);
          }
          break;
      }
      break;
    case EwOp::kScalarPow: {  // base ** x = exp(x * ln(base)), base > 0; ln(base) = sf0 + sf1
      Muls(T0, x0, sf[0], L);
      if (PlainExpSuffices(T0, o, L)) {
        Exp(y, T0, L);
        break;
      }
      Abs(T0, x0, L);
      CompareScalar(B2, T0, 3.40282347e38f, CMPMODE::LE, L);  // x finite: the accurate path
      Duplicate(o.T[3], sf[0], L);
      Duplicate(y, sf[1], L);
      ExpOfProduct(x0, o, L);
      Muls(T0, x0, sf[0], L);
      Exp(T0, T0, L);
      Select(y, B2, T1, T0, TT, L);
      break;
    }
    case EwOp::kRound: Cast(y, x0, RoundMode(t.si[0]), L); break;
    // ---- backward
    case EwOp::kThresholdBackward:  // self <= threshold ? 0 : grad  (K0 = 0)
      CompareScalar(B0, x1, sf[0], CMPMODE::LE, L);
      Select(y, B0, K0, x0, TT, L);
      break;
    case EwOp::kSigmoidBackward:  // grad * (1 - y) * y
      Muls(T0, x1, -1.0f, L);
      Adds(T0, T0, 1.0f, L);
      Mul(T0, x0, T0, L);
      Mul(y, T0, x1, L);
      break;
    case EwOp::kTanhBackward:  // grad * (1 - y * y)
      Mul(T0, x1, x1, L);
      Muls(T0, T0, -1.0f, L);
      Adds(T0, T0, 1.0f, L);
      Mul(y, x0, T0, L);
      break;
    case EwOp::kGeluBackward:  // grad * (cdf + x * pdf), cdf = 0.5 erfc(-x / sqrt2)
      Muls(T1, x1, -kSqrt1_2, L);
      Erfc(T1, T1, MathTmp(T0), L);
      Muls(T1, T1, 0.5f, L);
      Mul(T0, x1, x1, L);
      Muls(T0, T0, -0.5f, L);
      Exp(T0, T0, L);
      Muls(T0, T0, kInvSqrt2Pi, L);
      Mul(T0, T0, x1, L);
      Add(T1, T1, T0, L);
      Mul(y, x0, T1, L);
      break;
    case EwOp::kGeluTanhBackward:
      // With e = exp(-2u) and s = 1/(1+e) = (1 + tanh u)/2: 1 - tanh^2 u = 4 s (1 - s), and 1 - s = e s
      // without cancellation (e is capped so that e * s stays finite).
      // d/dx = s + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 kappa x^2)
      Mul(T0, x1, x1, L);
      Mul(T1, T0, x1, L);
      Muls(T1, T1, kGeluKappa, L);
      Add(T1, T1, x1, L);
      Muls(T1, T1, -2.0f * kSqrt2OverPi, L);
      Exp(T1, T1, L);
      Mins(T1, T1, 1e30f, L);      // e
      Adds(T2, T1, 1.0f, L);
      Div(T2, K0, T2, L);          // s
      Mul(T1, T1, T2, L);          // 1 - s
      Mul(T1, T1, T2, L);
      Muls(T1, T1, 4.0f, L);       // 1 - tanh^2
      Muls(T0, T0, 3.0f * kGeluKappa, L);
      Adds(T0, T0, 1.0f, L);
      Muls(T0, T0, kSqrt2OverPi, L);
      Mul(T1, T1, T0, L);
      Mul(T1, T1, x1, L);
      Muls(T1, T1, 0.5f, L);
      Add(T1, T1, T2, L);
      Mul(y, x0, T1, L);
      break;
    case EwOp::kSiluBackward:  // grad * s * (1 + x (1 - s))
      AscendC::Sigmoid(T0, x1, MathTmp(T1), L);
      Muls(T1, T0, -1.0f, L);
      Adds(T1, T1, 1.0f, L);
      Mul(T1, T1, x1, L);
      Adds(T1, T1, 1.0f, L);
      Mul(T0, x0, T0, L);
      Mul(y, T0, T1, L);
      break;
    case EwOp::kHardtanhBackward:  // (x <= min || x >= max) ? 0 : grad  (K0 = 0)
      CompareScalar(B0, x1, sf[0], CMPMODE::LE, L);
      CompareScalar(B1, x1, sf[1], CMPMODE::GE, L);
      Or(Bits16(B0), Bits16(B0), Bits16(B1), L / 16);
      Select(y, B0, K0, x0, TT, L);
      break;
    case EwOp::kLeakyReluBackward:  // x > 0 ? grad : grad * slope
      CompareScalar(B0, x1, 0.0f, CMPMODE::GT, L);
      Muls(T0, x0, sf[0], L);
      Select(y, B0, x0, T0, TT, L);
      break;
    case EwOp::kHardswishBackward:  // x <= -3 ? 0 : x < 3 ? grad * (x / 3 + 0.5) : grad  (K0 = 3, K1 = 0)
      Div(T0, x1, K0, L);
      Adds(T0, T0, 0.5f, L);
      Mul(T0, x0, T0, L);
      CompareScalar(B0, x1, 3.0f, CMPMODE::LT, L);
      Select(T0, B0, T0, x0, TT, L);
      CompareScalar(B0, x1, -3.0f, CMPMODE::LE, L);
      Select(y, B0, o.K[1], T0, TT, L);
      break;
    case EwOp::kHardsigmoidBackward:  // (-3 < x < 3) ? grad / 6 : 0
      Muls(T0, x0, 1.0f / 6.0f, L);
      CompareScalar(B0, x1, -3.0f, CMPMODE::GT, L);
      CompareScalar(B1, x1, 3.0f, CMPMODE::LT, L);
      And(Bits16(B0), Bits16(B0), Bits16(B1), L / 16);
      Select(y, B0, T0, 0.0f, TS, L);
      break;
    case EwOp::kEluBackward:
      if (t.si[0]) {  // x1 = result: y <= 0 ? grad * input_scale * (y + alpha * scale) : grad * scale
        Adds(T0, x1, sf[0], L);
        Muls(T0, T0, sf[2], L);
      } else {        // x1 = self: x <= 0 ? grad * input_scale * alpha * scale * exp(x * input_scale) : ...
        Muls(T0, x1, sf[2], L);
        Exp(T0, T0, L);
        Muls(T0, T0, sf[2] * sf[0], L);
      }
      Mul(T0, T0, x0, L);
      Muls(T1, x0, sf[1], L);
      CompareScalar(B0, x1, 0.0f, CMPMODE::LE, L);
      Select(y, B0, T0, T1, TT, L);
      break;
    case EwOp::kSoftplusBackward:
      Muls(T0, x1, sf[0], L);
      CompareScalar(B0, T0, sf[1], CMPMODE::GT, L);
      Exp(T0, T0, L);
      Adds(T1, T0, 1.0f, L);
      Div(T0, T0, T1, L);
      Mul(T0, T0, x0, L);
      Select(y, B0, x0, T0, TT, L);
      break;
    case EwOp::kShrinkBackward:  // (K0 = 0)
      Abs(T0, x1, L);
      CompareScalar(B0, T0, sf[0], CMPMODE::LE, L);
      Select(y, B0, K0, x0, TT, L);
      break;
    default: break;
  }
}

inline LocalTensor<uint16_t> Halves(const LocalTensor<int32_t>& x) { return x.ReinterpretCast<uint16_t>(); }
inline LocalTensor<float> Lanes(const LocalTensor<int32_t>& x) { return x.ReinterpretCast<float>(); }

// x0 << x1 or x0 >> x1 with the shift amounts in a tensor: PyTorch's rule maps an amount outside
// [0, width) to 0 (left) or to a shift by width - signed (right); in range, the amount's bits 1, 2,
// 4, 8, 16 each shift the running value once more (ShiftLeft / ShiftRight by a scalar, Select).
void ShiftByTensor(const ElementwiseTiling& t, Operands<int32_t>& o, bool left) {
  const uint32_t L = o.L;
  const int32_t width = t.si[0], max_right = t.si[0] - t.si[1];
  const auto &x0 = o.x[0], &x1 = o.x[1], &y = o.y, &amt = o.T[0], &k = o.T[1], &sh = o.T[2];
  const auto &bit = o.B[0], &in_range = o.B[1];
  const SELMODE TT = SELMODE::VSEL_TENSOR_TENSOR_MODE;
  // in range: no bit above width - 1 (width is a power of two; negative amounts have the top bits)
  Duplicate(k, int32_t(~uint32_t(width - 1)), L);
  And(Halves(amt), Halves(x1), Halves(k), 2 * L);
  CompareScalar(in_range, amt, int32_t(0), CMPMODE::EQ, L);
  if (left) {
    Adds(amt, x1, int32_t(0), L);
  } else {
    Duplicate(k, max_right, L);
    Select(Lanes(amt), in_range, Lanes(x1), Lanes(k), TT, L);
  }
  Adds(y, x0, int32_t(0), L);
  for (int32_t step = 1; step <= 16 && step <= (left ? width - 1 : max_right); step *= 2) {
    Duplicate(k, step, L);
    And(Halves(k), Halves(amt), Halves(k), 2 * L);
    CompareScalar(bit, k, int32_t(0), CMPMODE::EQ, L);  // 1: this bit of the amount is clear
    if (left) ShiftLeft(sh, y, step, L);
    else ShiftRight(sh, y, step, L);
    Select(Lanes(y), bit, Lanes(y), Lanes(sh), TT, L);
  }
  if (left) {
    Duplicate(k, int32_t(0), L);
    Select(Lanes(y), in_range, Lanes(y), Lanes(k), TT, L);
  }
}

void ComputeInt(const ElementwiseTiling& t, Operands<int32_t>& o) {
  const uint32_t L = o.L;
  const auto& x0 = o.x[0];
  const auto& x1 = o.x[1];
  const auto& x2 = o.x[2];
  const auto& y = o.y;
  const auto& B0 = o.B[0];
  const int32_t* si = t.si;
  const bool imm0 = EwMode(t.in[0].mode) == EwMode::IMM, imm1 = EwMode(t.in[1].mode) == EwMode::IMM;
  const EwOp op = EwOp(t.op);
  switch (op) {
    case EwOp::kAdd:
      if (imm1) {
        Adds(y, x0, int32_t(uint32_t(si[0]) * uint32_t(t.imm_i[1])), L);
      } else if (imm0) {
        Muls(y, x1, si[0], L);
        Adds(y, y, t.imm_i[0], L);
      } else if (si[0] == 1) {
        Add(y, x0, x1, L);
      } else {
        Muls(o.T[0], x1, si[0], L);
        Add(y, x0, o.T[0], L);
      }
      break;
    case EwOp::kMul:
      if (imm1) Muls(y, x0, t.imm_i[1], L);
      else if (imm0) Muls(y, x1, t.imm_i[0], L);
      else Mul(y, x0, x1, L);
      break;
    case EwOp::kMaximum: case EwOp::kClampMinT: Max(y, x0, x1, L); break;
    case EwOp::kMinimum: case EwOp::kClampMaxT: Min(y, x0, x1, L); break;
    case EwOp::kClampT:
      Max(y, x0, x1, L);
      Min(y, y, x2, L);
      break;
    case EwOp::kClamp:
      if (si[0] & 1) Maxs(y, x0, si[1], L);
      if (si[0] & 2) Mins(y, (si[0] & 1) ? y : x0, si[2], L);
      break;
    case EwOp::kNeg: Muls(y, x0, -1, L); break;
    case EwOp::kAbs:
      Muls(o.T[0], x0, -1, L);
      Max(y, x0, o.T[0], L);
      break;
    case EwOp::kRelu: Relu(y, x0, L); break;
    case EwOp::kEq:
    case EwOp::kNe:
      // int32 Compare supports EQ only on 2201: NE is its complement.
      if (imm1) CompareScalar(B0, x0, t.imm_i[1], CMPMODE::EQ, L);
      else if (imm0) CompareScalar(B0, x1, t.imm_i[0], CMPMODE::EQ, L);
      else Compare(B0, x0, x1, CMPMODE::EQ, L);
      if (op == EwOp::kNe) Not(Bits16(B0), Bits16(B0), L / 16);
      break;
    case EwOp::kLt: case EwOp::kLe: case EwOp::kGt: case EwOp::kGe: {
      const LocalTensor<float> key = o.T[0].ReinterpretCast<float>();
      npu_kernels::vec_math::IntOrderKey(key, x0, x1, o.T[0], o.T[1], o.T[2], o.T[3], L);
      CompareScalar(B0, key, 0.0f, CmpModeOf(op), L);
      break;
    }
    case EwOp::kWhere:  // Select moves bits: run it on the float view of the int32 lanes
      CompareScalar(B0, x0, 0, CMPMODE::EQ, L);  // 1 where the condition is false
      Select(y.ReinterpretCast<float>(), B0, x2.ReinterpretCast<float>(), x1.ReinterpretCast<float>(),
             SELMODE::VSEL_TENSOR_TENSOR_MODE, L);
      break;
    case EwOp::kRound: Adds(y, x0, int32_t(0), L); break;  // integers are their own floor / ceil / trunc / round
    case EwOp::kSign:
      Maxs(y, x0, int32_t(-1), L);
      Mins(y, y, int32_t(1), L);
      break;
    case EwOp::kPowScalar: {  // si3 = the exponent (>= 2): square and multiply, wrapping as int32 does
      uint32_t e = uint32_t(si[3]);
      Adds(o.T[0], x0, int32_t(0), L);  // the running square
      Duplicate(y, int32_t(1), L);
      for (;;) {
        if (e & 1u) Mul(y, y, o.T[0], L);
        e >>= 1;
        if (e == 0) break;
        Mul(o.T[0], o.T[0], o.T[0], L);
      }
      break;
    }
    case EwOp::kBitAnd: And(Halves(y), Halves(x0), Halves(x1), 2 * L); break;
    case EwOp::kBitOr: Or(Halves(y), Halves(x0), Halves(x1), 2 * L); break;
    case EwOp::kBitXor:  // (a | b) & ~(a & b)
      Or(Halves(y), Halves(x0), Halves(x1), 2 * L);
      And(Halves(o.T[0]), Halves(x0), Halves(x1), 2 * L);
      Not(Halves(o.T[0]), Halves(o.T[0]), 2 * L);
      And(Halves(y), Halves(y), Halves(o.T[0]), 2 * L);
      break;
    case EwOp::kBitNot: Not(Halves(y), Halves(x0), 2 * L); break;
    case EwOp::kShiftLeft: case EwOp::kShiftRight: {
      const bool left = op == EwOp::kShiftLeft;
      if (!imm1) {
        ShiftByTensor(t, o, left);
        break;
      }
      const int32_t b = t.imm_i[1], width = si[0], max_right = si[0] - si[1];
      const bool in_range = b >= 0 && b < width;
      if (left && !in_range) Duplicate(y, int32_t(0), L);
      else if (left) ShiftLeft(y, x0, b, L);
      else ShiftRight(y, x0, in_range && b < max_right ? b : max_right, L);
      break;
    }
    default: break;
  }
}

template <typename CT>
class ElementwiseKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x0, GM_ADDR x1, GM_ADDR x2, GM_ADDR y, const ElementwiseTiling& t) {
    t_ = t;
    info_ = npu_kernels::GetEwOpInfo(EwOp(t.op));
    gm_[0] = x0;
    gm_[1] = x1;
    gm_[2] = x2;
    gmY_ = y;
    u0_ = t.units_per_core * GetBlockIdx();
    u1_ = u0_ + t.units_per_core < t.units ? u0_ + t.units_per_core : t.units;
    const uint32_t tile = t.tile;
    for (int i = 0; i < info_.n_in; ++i) {
      const uint32_t sz = npu_kernels::EwDTypeSize(EwDType(t.in[i].dtype));
      if (UsesQueueK(i)) pipe_.InitBuffer(inQ_[i], 2, tile * sz);
      if (PersistentK(i)) pipe_.InitBuffer(persist_[i], tile * sz);
      if (NeedsCopyK(i)) pipe_.InitBuffer(ct_[i], tile * sizeof(CT));
    }
    pipe_.InitBuffer(outQ_, 2, tile * npu_kernels::EwDTypeSize(EwDType(t.out_dtype)));
    out_copy_ = !info_.bool_out && EwDType(t.out_dtype) != ComputeDT();
    if (out_copy_) pipe_.InitBuffer(yct_, tile * sizeof(CT));
    for (int k = 0; k < info_.n_temps; ++k) pipe_.InitBuffer(tmp_[k], tile * sizeof(CT));
    for (int k = 0; k < info_.n_consts; ++k) pipe_.InitBuffer(konst_[k], tile * sizeof(CT));
    for (int k = 0; k < 3; ++k) pipe_.InitBuffer(bits_[k], tile / 8);
    raw_ = RawBitwise();
    if (npu_kernels::NeedsHalfTileK(t, info_)) pipe_.InitBuffer(hs_, tile * sizeof(half));
    wrap_ = npu_kernels::NeedsWrapMaskK(t, info_);
    if (wrap_) {
      // The low 8 / 16 bits of every int32 lane, as the uint16 halves (low, high) = (0x00ff | 0xffff, 0).
      pipe_.InitBuffer(wrapk_, tile * sizeof(int32_t));
      const bool w16 = EwDType(t.out_dtype) == EwDType::I16;
      Duplicate(wrapk_.template Get<int32_t>(), w16 ? int32_t(0xffff) : int32_t(0xff), tile);
    }
    InitConstants();
    // The operands that stay put from tile to tile, set up once: scratch, constants and masks, the
    // inputs held in UB for the whole launch; Compute fills in the queued inputs and the output.
    for (int i = 0; i < info_.n_in; ++i)
      if (!UsesQueueK(i))
        ops_.x[i] = NeedsCopyK(i) ? ct_[i].template Get<CT>() : persist_[i].template Get<CT>();
    if (out_copy_) ops_.y = yct_.template Get<CT>();
    for (int k = 0; k < info_.n_temps; ++k) ops_.T[k] = tmp_[k].template Get<CT>();
    for (int k = 0; k < info_.n_consts; ++k) ops_.K[k] = konst_[k].template Get<CT>();
    for (int k = 0; k < 3; ++k) ops_.B[k] = bits_[k].template Get<uint8_t>();
  }

  __aicore__ inline void Process() {
    for (uint64_t u = u0_; u < u1_; ++u) {
      const Geo g = GeoOf(u);
      CopyIn(g);
      Compute(g);
      CopyOut(g);
    }
  }

 private:
  struct Geo {
    uint64_t row0, col0;
    uint32_t nrows, ncols, stride, L;
  };

  static constexpr EwDType ComputeDT() { return std::is_same_v<CT, float> ? EwDType::F32 : EwDType::I32; }
  bool UsesQueueK(int i) const {
    const EwMode m = EwMode(t_.in[i].mode);
    return m == EwMode::FULL || (m == EwMode::ROW && t_.rows_per_tile == 0);
  }
  bool PersistentK(int i) const { return EwMode(t_.in[i].mode) == EwMode::ROW && t_.rows_per_tile != 0; }
  bool NeedsCopyK(int i) const {
    const EwMode m = EwMode(t_.in[i].mode);
    if (m == EwMode::COL || m == EwMode::SCALAR || m == EwMode::IMM) return true;
    return EwDType(t_.in[i].dtype) != ComputeDT();
  }

  __aicore__ inline Geo GeoOf(uint64_t u) const {
    Geo g{};
    if (t_.rows_per_tile != 0) {
      g.row0 = u * t_.rows_per_tile;
      const uint64_t left = t_.rows - g.row0;
      g.nrows = static_cast<uint32_t>(left < t_.rows_per_tile ? left : t_.rows_per_tile);
      g.col0 = 0;
      g.ncols = static_cast<uint32_t>(t_.width);
      g.stride = t_.row_stride;
      g.L = npu_kernels::AlignUp<uint32_t>(g.nrows * g.stride, 256);
    } else {
      g.row0 = u / t_.chunks_per_row;
      g.col0 = (u % t_.chunks_per_row) * t_.tile;
      const uint64_t left = t_.width - g.col0;
      g.nrows = 1;
      g.ncols = static_cast<uint32_t>(left < t_.tile ? left : t_.tile);
      g.stride = g.ncols;
      g.L = npu_kernels::AlignUp<uint32_t>(g.ncols, 256);
    }
    return g;
  }

  // `nrows` rows of `ncols` elements from GM, rows `stride` elements apart in UB. Whole 32-byte
  // blocks in one contiguous run use DataCopy; anything else DataCopyPad (one block per row).
  template <typename S>
  __aicore__ inline void LoadRows(const LocalTensor<uint8_t>& raw, GM_ADDR base, uint64_t off, uint32_t nrows,
                                  uint32_t ncols, uint32_t stride, uint64_t pitch) {
    GlobalTensor<S> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ S*>(base) + off);
    const uint32_t bytes = ncols * sizeof(S);
    if (nrows == 1) {
      npu_kernels::EwCopyIn(raw.ReinterpretCast<S>(), g, ncols, t_.no_pad == 0);
      return;
    }
    if (stride == ncols && pitch == ncols && bytes % 32 == 0) {
      DataCopy(raw.ReinterpretCast<S>(), g, nrows * ncols);
      return;
    }
    const uint32_t gap = nrows > 1 ? (stride * sizeof(S) - npu_kernels::AlignUp<uint32_t>(bytes, 32)) / 32 : 0;
    const uint32_t src_gap = static_cast<uint32_t>((pitch - ncols) * sizeof(S));  // GM bytes between rows
    DataCopyPad(raw.ReinterpretCast<S>(), g, DataCopyExtParams{static_cast<uint16_t>(nrows), bytes, src_gap, gap, 0},
                DataCopyPadExtParams<S>{false, 0, 0, S(0)});
  }

  // Storage -> compute type over L elements.
  __aicore__ inline void ToCompute(const LocalTensor<CT>& dst, const LocalTensor<uint8_t>& raw, EwDType dt,
                                   uint32_t L) {
    if (dt == EwDType::BOOL || dt == EwDType::U8 || dt == EwDType::I8) {  // exact through half
      const LocalTensor<half> h = hs_.template Get<half>();
      if (dt == EwDType::I8) Cast(h, raw.ReinterpretCast<int8_t>(), RoundMode::CAST_NONE, L);
      else Cast(h, raw, RoundMode::CAST_NONE, L);
      if constexpr (std::is_same_v<CT, float>) Cast(dst, h, RoundMode::CAST_NONE, L);
      else Cast(dst, h, RoundMode::CAST_RINT, L);
      return;
    }
    if (dt == EwDType::I16) {  // exact through float
      const LocalTensor<float> f = dst.template ReinterpretCast<float>();
      Cast(f, raw.ReinterpretCast<int16_t>(), RoundMode::CAST_NONE, L);
      if constexpr (!std::is_same_v<CT, float>) Cast(dst, f, RoundMode::CAST_RINT, L);
      return;
    }
    if constexpr (std::is_same_v<CT, float>) {
      switch (dt) {
        case EwDType::F16: Cast(dst, raw.ReinterpretCast<half>(), RoundMode::CAST_NONE, L); break;
        case EwDType::BF16: Cast(dst, raw.ReinterpretCast<bfloat16_t>(), RoundMode::CAST_NONE, L); break;
        case EwDType::I32: Cast(dst, raw.ReinterpretCast<int32_t>(), RoundMode::CAST_NONE, L); break;
        case EwDType::I64: Cast(dst, raw.ReinterpretCast<int64_t>(), RoundMode::CAST_RINT, L); break;
        default: break;
      }
    } else {
      if (dt == EwDType::I64) Cast(dst, raw.ReinterpretCast<int64_t>(), RoundMode::CAST_NONE, L);
    }
  }

  // A value of input i's GM tensor in the compute type (scalar bookkeeping: one value per row).
  __aicore__ inline CT ValueAt(int i, uint64_t idx) const {
    CT v{};
    WithStorage(EwDType(t_.in[i].dtype), [&](auto tag) {
      using S = decltype(tag);
      GlobalTensor<S> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ S*>(gm_[i]));
      const S s = g.GetValue(idx);
      if (EwDType(t_.in[i].dtype) == EwDType::BOOL) {
        v = s != 0 ? CT(1) : CT(0);
      } else if constexpr (std::is_same_v<CT, int32_t> && std::is_same_v<S, int64_t>) {
        // A one-element int64 operand of an int32-or-narrower result is converted to that dtype as
        // PyTorch converts it (wrapping); for an int64 result computed in int32 lanes it saturates
        // like the Cast int64 -> int32 of the tiles (sign stays exact).
        if (EwDType(t_.out_dtype) == EwDType::I64) v = s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : int32_t(s);
        else v = int32_t(uint32_t(uint64_t(s)));
      } else if constexpr (std::is_same_v<CT, float>) {
        v = static_cast<float>(s);
      } else {
        v = static_cast<CT>(s);
      }
    });
    return v;
  }

  __aicore__ inline CT ImmOf(int i) const {
    if constexpr (std::is_same_v<CT, float>) return t_.imm_f[i];
    else return t_.imm_i[i];
  }

  // Bitwise ops whose tensor operands all have the output's dtype at its shape (si2 = 1 from layer 5)
  // run on the raw bytes, as uint16 words: no conversions. Host scalars are replicated in the
  // dtype's bit pattern (up to 4 bytes).
  __aicore__ inline bool RawBitwise() const {
    const EwOp op = EwOp(t_.op);
    if (t_.si[2] != 1 || !std::is_same_v<CT, int32_t>) return false;
    if (op != EwOp::kBitAnd && op != EwOp::kBitOr && op != EwOp::kBitXor && op != EwOp::kBitNot) return false;
    const uint32_t size = npu_kernels::EwDTypeSize(EwDType(t_.out_dtype));
    for (int i = 0; i < info_.n_in; ++i) {
      const EwMode m = EwMode(t_.in[i].mode);
      if (m == EwMode::IMM ? size > 4 : (m != EwMode::FULL || t_.in[i].dtype != t_.out_dtype)) return false;
    }
    return true;
  }
  __aicore__ inline void ComputeRaw(const Geo& g) {
    const uint32_t n16 = g.L * npu_kernels::EwDTypeSize(EwDType(t_.out_dtype)) / 2;
    LocalTensor<uint8_t> raw[3];
    LocalTensor<uint16_t> x[3];
    for (int i = 0; i < info_.n_in; ++i) {
      if (UsesQueueK(i)) {
        raw[i] = inQ_[i].template DeQue<uint8_t>();
        x[i] = raw[i].template ReinterpretCast<uint16_t>();
      } else {
        x[i] = ct_[i].template Get<uint16_t>();  // the replicated scalar (4-byte tile per element)
      }
    }
    LocalTensor<uint8_t> out = outQ_.template AllocTensor<uint8_t>();
    const LocalTensor<uint16_t> y = out.ReinterpretCast<uint16_t>();
    switch (EwOp(t_.op)) {
      case EwOp::kBitAnd: And(y, x[0], x[1], n16); break;
      case EwOp::kBitOr: Or(y, x[0], x[1], n16); break;
      case EwOp::kBitNot: Not(y, x[0], n16); break;
      default: {  // xor = (a | b) & ~(a & b), in pieces of the 4-byte-per-element scratch tile
        const LocalTensor<uint16_t> tmp = tmp_[0].template Get<uint16_t>();
        const uint32_t piece = 2 * g.L;
        for (uint32_t o = 0; o < n16; o += piece) {
          const uint32_t c = n16 - o < piece ? n16 - o : piece;
          Or(y[o], x[0][o], x[1][o], c);
          And(tmp, x[0][o], x[1][o], c);
          Not(tmp, tmp, c);
          And(y[o], y[o], tmp, c);
        }
        break;
      }
    }
    outQ_.EnQue(out);
    for (int i = 0; i < info_.n_in; ++i)
      if (UsesQueueK(i)) inQ_[i].FreeTensor(raw[i]);
  }

  __aicore__ inline void InitConstants() {
    const uint32_t tile = t_.tile;
    for (int i = 0; i < info_.n_in; ++i) {
      const EwMode m = EwMode(t_.in[i].mode);
      if (raw_ && m == EwMode::IMM) {
        const uint32_t size = npu_kernels::EwDTypeSize(EwDType(t_.out_dtype));
        uint32_t bits = uint32_t(t_.imm_i[i]);
        if (size == 1) bits = (bits & 0xffu) * 0x01010101u;
        else if (size == 2) bits = (bits & 0xffffu) * 0x00010001u;
        Duplicate(ct_[i].template Get<uint32_t>(), bits, tile);
        continue;
      }
      if (m == EwMode::IMM || m == EwMode::SCALAR) {
        const CT v = m == EwMode::IMM ? ImmOf(i) : ValueAt(i, 0);
        Duplicate(ct_[i].template Get<CT>(), v, tile);
      } else if (PersistentK(i)) {
        // The row, repeated for every row of a tile, loaded once per core.
        const LocalTensor<uint8_t> raw = persist_[i].template Get<uint8_t>();
        const uint32_t R = t_.rows_per_tile, W = static_cast<uint32_t>(t_.width), S = t_.row_stride;
        WithStorage(EwDType(t_.in[i].dtype), [&](auto tag) {
          using St = decltype(tag);
          for (uint32_t r = 0; r < R; ++r)
            LoadRows<St>(raw[r * S * sizeof(St)], gm_[i], 0, 1, W, S, W);
        });
        SetFlag<HardEvent::MTE2_V>(0);
        WaitFlag<HardEvent::MTE2_V>(0);
        if (NeedsCopyK(i))
          ToCompute(ct_[i].template Get<CT>(), raw, EwDType(t_.in[i].dtype), npu_kernels::AlignUp<uint32_t>(R * S, 256));
      }
    }
    if (info_.n_consts == 0) return;
    float k0 = 1.0f, k1 = 0.0f;
    switch (EwOp(t_.op)) {
      case EwOp::kHardswish: case EwOp::kHardsigmoid: k0 = 6.0f; break;
      case EwOp::kThreshold: k0 = t_.sf[1]; break;
      case EwOp::kThresholdBackward: case EwOp::kHardtanhBackward: case EwOp::kHardshrink:
      case EwOp::kSoftshrink: case EwOp::kShrinkBackward: k0 = 0.0f; break;
      case EwOp::kHardswishBackward: k0 = 3.0f; k1 = 0.0f; break;
      case EwOp::kPowScalar: k1 = t_.sf[0]; break;  // the exponent, as a tensor for PowAbs
      default: break;
    }
    Duplicate(konst_[0].template Get<CT>(), CT(k0), tile);
    if (info_.n_consts > 1) Duplicate(konst_[1].template Get<CT>(), CT(k1), tile);
  }

  __aicore__ inline void CopyIn(const Geo& g) {
    for (int i = 0; i < info_.n_in; ++i) {
      if (!UsesQueueK(i)) continue;
      LocalTensor<uint8_t> raw = inQ_[i].template AllocTensor<uint8_t>();
      const bool full = EwMode(t_.in[i].mode) == EwMode::FULL;
      const uint64_t pitch = full && t_.in[i].pitch ? t_.in[i].pitch : t_.width;
      const uint64_t off = full ? g.row0 * pitch + g.col0 : g.col0;
      WithStorage(EwDType(t_.in[i].dtype), [&](auto tag) {
        LoadRows<decltype(tag)>(raw, gm_[i], off, g.nrows, g.ncols, g.stride, pitch);
      });
      inQ_[i].EnQue(raw);
    }
  }

  __aicore__ inline void Compute(const Geo& g) {
    if (raw_) {
      ComputeRaw(g);
      return;
    }
    Operands<CT> o = ops_;
    o.L = g.L;
    LocalTensor<uint8_t> raw[3];
    for (int i = 0; i < info_.n_in; ++i) {
      if (UsesQueueK(i)) {
        raw[i] = inQ_[i].template DeQue<uint8_t>();
        if (NeedsCopyK(i)) {
          o.x[i] = ct_[i].template Get<CT>();
          ToCompute(o.x[i], raw[i], EwDType(t_.in[i].dtype), g.L);
        } else {
          o.x[i] = raw[i].template ReinterpretCast<CT>();
        }
      } else if (EwMode(t_.in[i].mode) == EwMode::COL) {  // one value per row, this tile's rows
        for (uint32_t r = 0; r < g.nrows; ++r) {
          const uint64_t row = g.row0 + r;
          const CT v = ValueAt(i, (row / t_.in[i].cdiv) % t_.in[i].cmod);
          Duplicate(o.x[i][r * g.stride], v, g.nrows > 1 ? g.stride : g.L);
        }
      }  // ROW held in UB, IMM / SCALAR: set up in Init
    }
    LocalTensor<uint8_t> out = outQ_.template AllocTensor<uint8_t>();
    if (!info_.bool_out && !out_copy_) o.y = out.ReinterpretCast<CT>();
    if constexpr (std::is_same_v<CT, float>) ComputeFloat(t_, o);
    else ComputeInt(t_, o);
    if (info_.bool_out) {
      const LocalTensor<half> h = hs_.template Get<half>();
      Duplicate(h, half(1.0f), g.L);
      Select(h, o.B[0], h, half(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, g.L);
      Cast(out, h, RoundMode::CAST_NONE, g.L);
    } else if (out_copy_) {
      FromCompute(out, o.y, g.L);
    }
    outQ_.EnQue(out);
    for (int i = 0; i < info_.n_in; ++i)
      if (UsesQueueK(i)) inQ_[i].FreeTensor(raw[i]);
  }

  // int32 lanes -> uint8 / int8 / int16, wrapped to the width as PyTorch's integer arithmetic does:
  // offset signed values into [0, 2^w), keep the low w bits, offset back, narrow exactly.
  __aicore__ inline void WrapToSmall(const LocalTensor<uint8_t>& out, const LocalTensor<int32_t>& y, uint32_t L) {
    const EwDType od = EwDType(t_.out_dtype);
    const int32_t bias = od == EwDType::I8 ? 128 : od == EwDType::I16 ? 32768 : 0;
    if (bias != 0) Adds(y, y, bias, L);
    const LocalTensor<uint16_t> yh = y.template ReinterpretCast<uint16_t>();
    And(yh, yh, wrapk_.template Get<uint16_t>(), 2 * L);
    if (bias != 0) Adds(y, y, -bias, L);
    if (od == EwDType::I16) {
      Cast(out.ReinterpretCast<int16_t>(), y, RoundMode::CAST_NONE, L);
      return;
    }
    const LocalTensor<half> h = hs_.template Get<half>();
    Cast(h.template ReinterpretCast<int16_t>(), y, RoundMode::CAST_NONE, L);
    Cast(h, h.template ReinterpretCast<int16_t>(), RoundMode::CAST_NONE, L);
    if (od == EwDType::I8) Cast(out.ReinterpretCast<int8_t>(), h, RoundMode::CAST_NONE, L);
    else Cast(out, h, RoundMode::CAST_NONE, L);
  }

  // Compute type -> output storage over L elements.
  __aicore__ inline void FromCompute(const LocalTensor<uint8_t>& out, const LocalTensor<CT>& y, uint32_t L) {
    if (wrap_) {
      if constexpr (std::is_same_v<CT, float>) {
        const LocalTensor<int32_t> yi = y.template ReinterpretCast<int32_t>();
        Cast(yi, y, RoundMode::CAST_RINT, L);
        WrapToSmall(out, yi, L);
      } else {
        WrapToSmall(out, y, L);
      }
      return;
    }
    if constexpr (std::is_same_v<CT, float>) {
      switch (EwDType(t_.out_dtype)) {
        case EwDType::F16: Cast(out.ReinterpretCast<half>(), y, RoundMode::CAST_RINT, L); break;
        case EwDType::BF16: Cast(out.ReinterpretCast<bfloat16_t>(), y, RoundMode::CAST_RINT, L); break;
        case EwDType::I32: Cast(out.ReinterpretCast<int32_t>(), y, RoundMode::CAST_RINT, L); break;
        case EwDType::I64: Cast(out.ReinterpretCast<int64_t>(), y, RoundMode::CAST_RINT, L); break;
        default: break;
      }
    } else {
      if (EwDType(t_.out_dtype) == EwDType::I64) Cast(out.ReinterpretCast<int64_t>(), y, RoundMode::CAST_NONE, L);
    }
  }

  __aicore__ inline void CopyOut(const Geo& g) {
    LocalTensor<uint8_t> out = outQ_.template DeQue<uint8_t>();
    WithStorage(EwDType(t_.out_dtype), [&](auto tag) {
      using S = decltype(tag);
      GlobalTensor<S> gy;
      const uint64_t pitch = t_.out_pitch ? t_.out_pitch : t_.width;
      gy.SetGlobalBuffer(reinterpret_cast<__gm__ S*>(gmY_) + g.row0 * pitch + g.col0);
      if (t_.out_no_l2) gy.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);
      const uint32_t bytes = g.ncols * sizeof(S);
      if (g.nrows == 1) {
        npu_kernels::EwCopyOut(gy, out.ReinterpretCast<S>(), g.ncols, t_.no_pad == 0);
        return;
      }
      if (g.stride == g.ncols && pitch == g.ncols && bytes % 32 == 0) {
        DataCopy(gy, out.ReinterpretCast<S>(), g.nrows * g.ncols);
        return;
      }
      const uint32_t gap = g.nrows > 1 ? (g.stride * sizeof(S) - npu_kernels::AlignUp<uint32_t>(bytes, 32)) / 32 : 0;
      const uint32_t dst_gap = static_cast<uint32_t>((pitch - g.ncols) * sizeof(S));  // GM bytes between rows
      DataCopyPad(gy, out.ReinterpretCast<S>(),
                  DataCopyExtParams{static_cast<uint16_t>(g.nrows), bytes, gap, dst_gap, 0});
    });
    outQ_.FreeTensor(out);
  }

  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_[3];
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> persist_[3], ct_[3], yct_, tmp_[6], konst_[2], bits_[3], hs_, wrapk_;
  ElementwiseTiling t_;
  EwOpInfo info_{};
  GM_ADDR gm_[3] = {};
  GM_ADDR gmY_ = nullptr;
  uint64_t u0_ = 0, u1_ = 0;
  bool out_copy_ = false, wrap_ = false, raw_ = false;
  Operands<CT> ops_;  // the tile-invariant operands (Init)
};

template <typename CT>
__aicore__ inline void RunElementwise(GM_ADDR x0, GM_ADDR x1, GM_ADDR x2, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(ElementwiseTiling, t, tiling);
  ElementwiseKernel<CT> op;
  op.Init(x0, x1, x2, y, t);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void elementwise_kernel_float(GM_ADDR x0, GM_ADDR x1, GM_ADDR x2, GM_ADDR y,
                                                               GM_ADDR tiling) {
  RunElementwise<float>(x0, x1, x2, y, tiling);
}
extern "C" __global__ __aicore__ void elementwise_kernel_int32(GM_ADDR x0, GM_ADDR x1, GM_ADDR x2, GM_ADDR y,
                                                               GM_ADDR tiling) {
  RunElementwise<int32_t>(x0, x1, x2, y, tiling);
}

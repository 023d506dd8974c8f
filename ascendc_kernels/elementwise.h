// The elementwise kernel family (Ascend C): binary, ternary and unary ops, activations and their
// backward ops, comparisons, where/masked_fill, clamp, lerp, addcmul/addcdiv, for float32 / float16 /
// bfloat16 (plus the integer dtypes and bool where ATen needs them).
//
// Design (why it looks like this):
// - One kernel, many ops. The op code travels in the tiling and a switch in the compute stage picks
//   the instruction sequence, so the load/convert/store pipeline, the broadcasting and the tiling are
//   written once. Two entry points by *compute* type: `elementwise_kernel_float` (float32 arithmetic,
//   which is also how float16/bfloat16 are computed: the vector unit has no bf16 arithmetic, and
//   PyTorch computes half/bf16 in float too) and `elementwise_kernel_int32` (int32 arithmetic). The
//   2201 vector unit has no int64 add/mul/compare: layer 5 makes int64 add/sub/compare/max/min/where
//   exact by running the int32 kernel on the two 32-bit halves (carry, lexicographic compare); other
//   int64 ops narrow to int32 here (Cast int64->int32) and are exact only within the int32 range.
//   uint8 / int8 / int16 compute in int32 too (loaded through half, resp. float, exactly) and are
//   stored wrapped to their width, as PyTorch's integer arithmetic wraps: the int32 result is
//   offset, masked to the low 8 / 16 bits (And on the uint16 halves of every lane) and narrowed.
// - Bitwise and / or / xor / not are And / Or / Not on the uint16 halves of the int32 lanes; shifts
//   by a host scalar are one ShiftLeft / ShiftRight, by a tensor five conditional steps of 1, 2, 4,
//   8 and 16 bits, with PyTorch's rule for amounts outside [0, width).
// - Every operand has its own storage dtype (f32/f16/bf16/i32/i64/bool); the load stage converts it
//   to the compute type with Cast (bool: uint8 -> half -> float/int32), the store stage converts back.
//   Mixed-dtype inputs (type promotion) therefore cost no extra pass over memory.
// - Broadcasting without materializing: layer 5 folds the output into a [rows, width] problem and each
//   input into one mode: FULL (same shape), ROW (a [width] vector repeated for every row, e.g. a bias
//   [D] on [B*T, D]), COL (one value per row, value index (row / cdiv) % cmod, e.g. a [C,1,1] bias on
//   NCHW), SCALAR (a 1-element npu tensor) or IMM (a host scalar carried in the tiling). Tiles are
//   either a group of whole rows (each row padded to a common 32-element stride in UB by
//   DataCopyPad's dstStride, so every operand lines up element for element) or a chunk of one long row.
//   Anything else is materialized by layer 5 (expand + contiguous) and becomes FULL. FULL operands
//   and the output may have a GM row pitch (a 2-D strided view: a slice of wider rows, a column
//   block), read and written in place with the strides of DataCopyPad.
// - Transcendentals are composed from vector instructions in float: sigmoid = 1/(1+exp(-x)),
//   pow via exp(b*ln|a|) with sign/integer handling; tanh, erf and erfc are the advanced math APIs
//   (kernel_math.h: one call over the tile with a scratch tile as sharedTmpBuffer), and
//   gelu = 0.5 x erfc(-x/sqrt2), so the negative tail keeps its relative precision.
// - Comparisons produce a bit mask (Compare/CompareScalar); bool outputs are written by Select (half
//   1/0) + Cast half->uint8. Masks for where/threshold/backward ops use the same bits with Select.
//   Every compute length is padded to 256 elements so Compare's 256-byte rule always holds.
//   max/min/clamp/relu keep NaN (Compare x == x + Select), as PyTorch does.
// - GM <-> UB: whole 32-byte blocks by DataCopy, tails by DataCopyPad (2201) or by a few scalar moves
//   on 2002, which has no DataCopyPad (elementwise_copy.h).
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

enum class EwDType : uint8_t { F32 = 0, F16, BF16, I32, I64, BOOL, U8, I8, I16 };
constexpr uint32_t EwDTypeSize(EwDType d) {
  return d == EwDType::F32 || d == EwDType::I32 ? 4
         : d == EwDType::I64                     ? 8
         : d == EwDType::BOOL || d == EwDType::U8 || d == EwDType::I8 ? 1
                                                 : 2;
}
constexpr bool EwIsSmallInt(EwDType d) { return d == EwDType::U8 || d == EwDType::I8 || d == EwDType::I16; }

// How an input maps onto the [rows, width] output.
enum class EwMode : uint8_t { FULL = 0, ROW, COL, SCALAR, IMM };

enum class EwOp : uint32_t {
  // ---- binary / ternary (inputs x0, x1[, x2])
  kAdd = 0,      // x0 + sf0 * x1          (sub: alpha negated; rsub: inputs swapped)
  kMul,          // x0 * x1
  kDiv,          // x0 / x1
  kDivTrunc,     // trunc(x0 / x1)
  kDivFloor,     // floor(x0 / x1)
  kMaximum,      // NaN-propagating max
  kMinimum,
  kPow,          // x0 ** x1
  kEq, kNe, kLt, kLe, kGt, kGe,  // -> bool
  kLogicalAnd, kLogicalOr, kLogicalXor,  // -> bool
  kWhere,        // x0 (cond) ? x1 : x2
  kClampT,       // min(max(x0, x1), x2), NaN-propagating
  kClampMinT,    // max(x0, x1)
  kClampMaxT,    // min(x0, x1)
  kLerp,         // lerp(x0, x1, x2)
  kLerpS,        // lerp(x0, x1, sf0)
  kAddcmul,      // x0 + sf0 * x1 * x2
  kAddcdiv,      // x0 + sf0 * x1 / x2
  // ---- unary (x0)
  kNeg, kAbs, kExp, kLog, kSqrt, kRsqrt, kReciprocal, kSigmoid, kTanh, kRelu,
  kClamp,        // si0 bit0: lower bound sf0, bit1: upper bound sf1
  kLeakyRelu,    // sf0 = negative slope
  kGelu, kGeluTanh, kSilu, kHardswish, kHardsigmoid,
  kThreshold,    // x0 <= sf0 ? sf1 : x0
  kLogicalNot,   // -> bool
  kSign,
  kPowScalar,    // x0 ** sf0; si0 picks a special form (EwPowForm)
  kScalarPow,    // exp(x0 * sf0), sf0 = ln(base) (base > 0)
  kRound,        // si0 = RoundMode (FLOOR/CEIL/TRUNC/RINT)
  // ---- backward (x0 = grad, x1 = self or result)
  kThresholdBackward,   // x1 <= sf0 ? 0 : x0
  kSigmoidBackward,     // x0 * (1 - x1) * x1      (x1 = result)
  kTanhBackward,        // x0 * (1 - x1 * x1)      (x1 = result)
  kGeluBackward, kGeluTanhBackward, kSiluBackward,
  kHardtanhBackward,    // (x1 <= sf0 || x1 >= sf1) ? 0 : x0
  kLeakyReluBackward,   // x1 > 0 ? x0 : x0 * sf0
  kHardswishBackward, kHardsigmoidBackward,
  // ---- more unary (x0)
  kIsNan,        // -> bool
  kNanToNum,     // NaN -> sf0, +inf -> sf1, -inf -> sf2
  kLog1p, kExpm1,
  kElu,          // x > 0 ? sf1 * x : sf0 * expm1(sf2 * x)   (sf0 = alpha * scale, sf1 = scale, sf2 = input_scale)
  kSoftplus,     // sf0 * x > sf1 ? x : log1p(exp(sf0 * x)) / sf0   (sf0 = beta, sf1 = threshold)
  kMish,         // x * tanh(softplus(x))
  kFrac,         // x - trunc(x)
  kHardshrink,   // |x| <= sf0 ? 0 : x
  kSoftshrink,   // x > sf0 ? x - sf0 : x < -sf0 ? x + sf0 : x * 0
  // ---- more backward (x0 = grad, x1 = self or result)
  kEluBackward,        // si0: x1 is the result; sf as kElu
  kSoftplusBackward,   // x1 * sf0 > sf1 ? grad : grad * z / (z + 1), z = exp(x1 * sf0)
  kShrinkBackward,     // |x1| <= sf0 ? 0 : grad   (hardshrink and softshrink)
  // ---- exact remainders (after the backward ops so existing op numbers stay)
  kRemainder,    // x0 - floor(x0 / x1) * x1, the exact floor, rounded once (Python's %)
  kFmod,         // x0 - trunc(x0 / x1) * x1, exact (C's fmod)
  kErf,          // erf(x)
  kSin, kCos,    // |x| < 8192 (layer 5 sends larger arguments to the CPU)
  kErfc,         // erfc(x), relative precision in the tail (see Erfc)
  // ---- bitwise (int compute only; si0 = the bit width of the promoted dtype, si1 = 1 if it is signed)
  kBitAnd, kBitOr, kBitXor,
  kBitNot,       // (x0)
  kShiftLeft,    // x0 << x1; 0 where x1 is outside [0, width)
  kShiftRight,   // x0 >> x1 (arithmetic); amounts outside [0, width - signed) shift by width - signed
  // ---- special functions (x0)
  kErfinv,       // erf^-1(x): Giles' single-precision polynomials in w = -ln(1 - x^2)
  kLgamma,       // ln|Gamma(x)|: Stirling's series at x + 8, reflection below 0
  kDigamma,      // Gamma'(x) / Gamma(x): the asymptotic series at x + 6, reflection below 0
  kNumOps
};

// kRound modes (the values of AscendC::RoundMode).
enum class EwRound : int32_t { kRint = 1, kFloor = 2, kCeil = 3, kTrunc = 5 };

// kPowScalar special forms (PyTorch computes these exactly like this, so results match bit for bit).
enum class EwPowForm : int32_t { kGeneral = 0, kSquare, kCube, kSqrt, kRsqrt, kReciprocal, kInvSquare };

struct EwOpInfo {
  uint8_t n_in;      // tensor inputs
  uint8_t n_temps;   // compute-type scratch tiles
  uint8_t n_consts;  // constant tiles (filled once per core)
  bool bool_out;     // result is a bit mask -> bool output
  bool int_ok;       // has an int32 compute path
};
EwOpInfo GetEwOpInfo(EwOp op);
const char* EwOpName(EwOp op);

struct EwInput {
  uint8_t mode = 0;   // EwMode
  uint8_t dtype = 0;  // EwDType (storage)
  uint8_t pad[6] = {};
  uint64_t cdiv = 1, cmod = 1;  // COL: value index = (row / cdiv) % cmod
  uint64_t pitch = 0;           // FULL: GM elements between rows (0: width, rows back to back)
};

struct ElementwiseTiling {
  // ---- the problem (layer 5)
  uint32_t op = 0;            // EwOp
  uint32_t int_compute = 0;   // 1: int32 compute type
  uint8_t out_dtype = 0;      // EwDType
  uint8_t no_pad = 0;         // (tiling) 1 on 2002: no DataCopyPad, tails move by scalar
  uint8_t out_no_l2 = 0;      // 1: write the output with the L2 cache hint off (large, read by no input)
  uint8_t pad0[5] = {};
  float sf[4] = {};           // op scalars (float compute)
  int32_t si[4] = {};         // op scalars (int compute) and flags
  float imm_f[3] = {};        // IMM input values
  int32_t imm_i[3] = {};
  EwInput in[3];
  uint64_t rows = 0, width = 0;
  // ---- the tiling (elementwise_tiling)
  uint32_t block_dim = 1;
  uint32_t tile = 0;          // elements per UB tile (multiple of 256)
  uint32_t rows_per_tile = 0; // R whole rows per tile; 0 = a row is cut into chunks of `tile`
  uint32_t row_stride = 0;    // elements between rows in UB (row-group tiles)
  uint64_t chunks_per_row = 1;
  uint64_t units = 0;         // tiles in total
  uint64_t units_per_core = 0;
  uint64_t out_pitch = 0;     // GM elements between output rows (0: width)
};

// Pure: completes `t` (problem filled in) for the SoC. Tiles hold every buffer the op needs
// (double-buffered inputs and output, compute-type copies, scratch, constants, masks) within UB.
void elementwise_tiling(ElementwiseTiling& t, const SocInfo& soc);
// UB bytes the kernel will allocate for tile size `tile` (exposed for tests).
uint64_t elementwise_ub_bytes(const ElementwiseTiling& t, uint32_t tile);

}  // namespace npu_kernels

// Kernel entry points: x0..x2 inputs (null when unused or IMM), y output, tiling = ElementwiseTiling.
extern "C" void elementwise_kernel_float(uint8_t* x0, uint8_t* x1, uint8_t* x2, uint8_t* y, uint8_t* tiling);
extern "C" void elementwise_kernel_int32(uint8_t* x0, uint8_t* x1, uint8_t* x2, uint8_t* y, uint8_t* tiling);

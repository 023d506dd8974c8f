// Exact int64 elementwise ops on the vector cores (see int64_ops.h).
#include "int64_ops.h"

#include <climits>

#include "kernel_operator.h"
#include "norm_util.h"
#include "vec_math.h"

using namespace AscendC;

namespace npu_kernels {

Int64Tiling int64_tiling(uint64_t total, I64Op op, const SocInfo& soc) {
  Int64Tiling t{};
  t.total = total;
  t.op = static_cast<uint32_t>(op);
  constexpr uint32_t kTile = 1024;  // ~140 KB of UB: 15 word tiles, offsets, queues
  const CoreSplit split = SplitAcrossCores(total, 8, soc.vector_cores, 16 * 1024);
  t.block_dim = split.block_dim;
  t.per_core = split.per_core;
  t.tile = kTile;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::I64Op;
using npu_kernels::Int64Tiling;
using namespace nn_kernels;

class Int64Kernel {
 public:
  __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR y, const Int64Tiling& t) {
    t_ = t;
    op_ = I64Op(t.op);
    const uint64_t start = t.per_core * GetBlockIdx();
    count_ = start >= t.total ? 0 : (t.total - start < t.per_core ? t.total - start : t.per_core);
    aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(a) + 2 * start);
    bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(b) + 2 * start);
    if (npu_kernels::I64OpIsCompare(op_)) yBool_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(y) + start);
    else yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(y) + 2 * start);
    const uint32_t T = t.tile;
    pipe_.InitBuffer(inA_, 2, 2 * T * 4);
    pipe_.InitBuffer(inB_, 2, 2 * T * 4);
    pipe_.InitBuffer(out_, 2, 2 * T * 4);
    pipe_.InitBuffer(words_, kSlots * T * 4);
    pipe_.InitBuffer(offs_, 4 * T * 4);
    pipe_.InitBuffer(bits_, 3 * T / 8);
    pipe_.InitBuffer(half_, 2 * T * 2);
    BuildOffsets();
    Duplicate(W(kOnes), int32_t(1), int32_t(T));
    Duplicate(half_.Get<half>(), half(1.0f), int32_t(T));
    if (t.a_scalar) {
      Duplicate(W(kAL), t.a_lo, int32_t(T));
      Duplicate(W(kAH), t.a_hi, int32_t(T));
    }
    if (t.b_scalar) {
      Duplicate(W(kBL), t.b_lo, int32_t(T));
      Duplicate(W(kBH), t.b_hi, int32_t(T));
    }
  }

  __aicore__ inline void Process() {
    for (uint64_t off = 0; off < count_; off += t_.tile) {
      const uint32_t n = uint32_t(count_ - off < t_.tile ? count_ - off : t_.tile);
      if (!t_.a_scalar) Load(inA_, aGm_, off, n, kAL);
      if (!t_.b_scalar) Load(inB_, bGm_, off, n, kBL);
      Compute();
      Store(off, n);
    }
  }

 private:
  // Word tiles (T int32 each) in words_: the operands' low / high words, the result (low then high,
  // adjacent so one Gather joins them), scratch, and a tile of ones.
  enum Slot : uint32_t { kAL, kAH, kBL, kBH, kRL, kRH, kT0, kT1, kT2, kT3, kT4, kT5, kT6, kT7, kOnes, kSlots };
  __aicore__ inline LocalTensor<int32_t> W(uint32_t s) { return words_.Get<int32_t>()[s * t_.tile]; }
  __aicore__ inline LocalTensor<float> F(uint32_t s) { return W(s).ReinterpretCast<float>(); }
  __aicore__ inline LocalTensor<uint32_t> U(uint32_t s) { return W(s).ReinterpretCast<uint32_t>(); }
  __aicore__ inline LocalTensor<uint8_t> B(uint32_t i) { return bits_.Get<uint8_t>()[i * t_.tile / 8]; }
  __aicore__ inline LocalTensor<uint16_t> B16(uint32_t i) { return B(i).ReinterpretCast<uint16_t>(); }

  // Byte offsets for Gather: even / odd words of a tile (low / high words of its values), and the
  // interleave of the result's low and high tiles.
  __aicore__ inline void BuildOffsets() {
    const uint32_t T = t_.tile;
    LocalTensor<int32_t> even = offs_.Get<int32_t>(), odd = even[T], join = even[2 * T];
    for (uint32_t i = 0; i < 16; ++i) {
      even.SetValue(i, int32_t(8 * i));
      join.SetValue(i, int32_t(4 * (i / 2) + (i % 2) * 4 * T));
    }
    SyncSToV();
    for (uint32_t k = 16; k < T; k *= 2) Adds(even[k], even, int32_t(8 * k), int32_t(k));
    for (uint32_t k = 16; k < 2 * T; k *= 2) Adds(join[k], join, int32_t(2 * k), int32_t(k));
    Adds(odd, even, int32_t(4), int32_t(T));
  }
  __aicore__ inline LocalTensor<uint32_t> Off(uint32_t i) {
    return offs_.Get<uint32_t>()[i * t_.tile];  // 0 even, 1 odd, 2 join (2T entries)
  }

  template <class Q>
  __aicore__ inline void Load(Q& q, const GlobalTensor<int32_t>& gm, uint64_t off, uint32_t n, uint32_t lo_slot) {
    LocalTensor<int32_t> raw = q.template AllocTensor<int32_t>();
    DataCopyPad(raw, gm[2 * off], DataCopyExtParams(1, n * 8, 0, 0, 0), DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
    q.EnQue(raw);
    raw = q.template DeQue<int32_t>();
    Gather(W(lo_slot), raw, Off(0), 0, t_.tile);
    Gather(W(lo_slot + 1), raw, Off(1), 0, t_.tile);
    q.FreeTensor(raw);
  }

  // bits[i] = x < y as signed 32-bit words. 2201 compares int32 for equality only, so the order comes
  // from a float key with the sign of x - y (vec_math::IntOrderKey). Uses T4..T7.
  __aicore__ inline void SLt(uint32_t bi, uint32_t x, uint32_t y) {
    npu_kernels::vec_math::IntOrderKey(F(kT4), W(x), W(y), W(kT4), W(kT5), W(kT6), W(kT7), t_.tile);
    CompareScalar(B(bi), F(kT4), 0.0f, CMPMODE::LT, t_.tile);
  }
  // bits[i] = x < y as unsigned 32-bit words: the signed order of the words with their sign bits
  // flipped. Uses T2..T7 (T2, T3 hold the flipped words).
  __aicore__ inline void ULt(uint32_t bi, uint32_t x, uint32_t y) {
    const int32_t T = int32_t(t_.tile);
    Adds(W(kT2), W(x), int32_t(INT_MIN), T);
    Adds(W(kT3), W(y), int32_t(INT_MIN), T);
    SLt(bi, kT2, kT3);
  }
  // dst = bits ? 1 : 0 as int32 (Select moves bits: run it on the float views).
  __aicore__ inline void Ones(uint32_t dst, uint32_t bi) {
    Select(F(dst), B(bi), F(kOnes), 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, t_.tile);
  }
  // B(0) = a < b as signed 64-bit values (the words of slots x, y: low, high).
  __aicore__ inline void Lt64(uint32_t x, uint32_t y) {
    const uint32_t T = t_.tile;
    ULt(2, x, y);                                              // low words, unsigned
    Compare(B(1), W(x + 1), W(y + 1), CMPMODE::EQ, T);
    And(B16(1), B16(1), B16(2), int32_t(T / 16));
    SLt(0, x + 1, y + 1);                                      // high words, signed
    Or(B16(0), B16(0), B16(1), int32_t(T / 16));
  }
  // lo16 / hi16 of the 32-bit words in slot s (logical shifts on the uint32 view).
  __aicore__ inline void Lo16(uint32_t dst, uint32_t s) {
    ShiftLeft(U(dst), U(s), uint32_t(16), int32_t(t_.tile));
    ShiftRight(U(dst), U(dst), uint32_t(16), int32_t(t_.tile));
  }
  __aicore__ inline void Hi16(uint32_t dst, uint32_t s) { ShiftRight(U(dst), U(s), uint32_t(16), int32_t(t_.tile)); }

  __aicore__ inline void Compute() {
    const int32_t T = int32_t(t_.tile);
    switch (op_) {
      case I64Op::kAdd:
        Add(W(kRL), W(kAL), W(kBL), T);
        ULt(0, kRL, kAL);                                      // carry
        Ones(kT0, 0);
        Add(W(kRH), W(kAH), W(kBH), T);
        Add(W(kRH), W(kRH), W(kT0), T);
        break;
      case I64Op::kSub:
        Sub(W(kRL), W(kAL), W(kBL), T);
        ULt(0, kAL, kBL);                                      // borrow
        Ones(kT0, 0);
        Sub(W(kRH), W(kAH), W(kBH), T);
        Sub(W(kRH), W(kRH), W(kT0), T);
        break;
      case I64Op::kMul: {
        // lo(a) lo(b) in full from 16-bit limbs (each limb product fits 32 bits; int32 Mul keeps the
        // low 32 bits, so the uint32 bits are exact), the cross products' low words into the high word.
        Lo16(kT0, kAL);
        Hi16(kT1, kAL);
        Lo16(kT2, kBL);
        Hi16(kT3, kBL);
        Mul(W(kRL), W(kT0), W(kT2), T);                        // p00
        Mul(W(kT0), W(kT0), W(kT3), T);                        // p01 (a0 dead)
        Mul(W(kT2), W(kT1), W(kT2), T);                        // p10 (b0 dead)
        Mul(W(kRH), W(kT1), W(kT3), T);                        // p11
        Add(W(kT1), W(kT0), W(kT2), T);                        // mid = p01 + p10
        ULt(0, kT1, kT0);                                      // mid overflowed: 2^48 into the high word
        Ones(kT2, 0);
        ShiftLeft(W(kT2), W(kT2), int32_t(16), T);
        Add(W(kRH), W(kRH), W(kT2), T);
        Hi16(kT2, kT1);
        Add(W(kRH), W(kRH), W(kT2), T);                        // + mid >> 16
        ShiftLeft(W(kT1), W(kT1), int32_t(16), T);             // mid << 16
        Add(W(kT0), W(kRL), W(kT1), T);                        // lo = p00 + (mid << 16)
        ULt(0, kT0, kRL);                                      // its carry
        Adds(W(kRL), W(kT0), int32_t(0), T);
        Ones(kT2, 0);
        Add(W(kRH), W(kRH), W(kT2), T);
        Mul(W(kT2), W(kAH), W(kBL), T);
        Add(W(kRH), W(kRH), W(kT2), T);
        Mul(W(kT2), W(kAL), W(kBH), T);
        Add(W(kRH), W(kRH), W(kT2), T);
        break;
      }
      case I64Op::kEq:
      case I64Op::kNe:
        Compare(B(0), W(kAL), W(kBL), CMPMODE::EQ, uint32_t(T));
        Compare(B(1), W(kAH), W(kBH), CMPMODE::EQ, uint32_t(T));
        And(B16(0), B16(0), B16(1), T / 16);
        if (op_ == I64Op::kNe) Not(B16(0), B16(0), T / 16);
        break;
      case I64Op::kLt: Lt64(kAL, kBL); break;
      case I64Op::kGt: Lt64(kBL, kAL); break;
      case I64Op::kLe:
        Lt64(kBL, kAL);
        Not(B16(0), B16(0), T / 16);
        break;
      case I64Op::kGe:
        Lt64(kAL, kBL);
        Not(B16(0), B16(0), T / 16);
        break;
      case I64Op::kMax:
      case I64Op::kMin: {
        Lt64(kAL, kBL);                                        // a < b
        const bool mx = op_ == I64Op::kMax;
        constexpr auto TT = SELMODE::VSEL_TENSOR_TENSOR_MODE;
        Select(F(kRL), B(0), F(mx ? kBL : kAL), F(mx ? kAL : kBL), TT, uint32_t(T));
        Select(F(kRH), B(0), F(mx ? kBH : kAH), F(mx ? kAH : kBH), TT, uint32_t(T));
        break;
      }
    }
  }

  __aicore__ inline void Store(uint64_t off, uint32_t n) {
    const uint32_t T = t_.tile;
    LocalTensor<int32_t> o = out_.AllocTensor<int32_t>();
    if (npu_kernels::I64OpIsCompare(op_)) {
      const LocalTensor<half> ones = half_.Get<half>(), h = ones[T];
      Select(h, B(0), ones, half(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, T);
      Cast(o.ReinterpretCast<uint8_t>(), h, RoundMode::CAST_NONE, T);
    } else {
      Gather(o, W(kRL), Off(2), 0, 2 * T);
    }
    out_.EnQue(o);
    o = out_.DeQue<int32_t>();
    if (npu_kernels::I64OpIsCompare(op_))
      DataCopyPad(yBool_[off], o.ReinterpretCast<uint8_t>(), DataCopyExtParams(1, n, 0, 0, 0));
    else
      DataCopyPad(yGm_[2 * off], o, DataCopyExtParams(1, n * 8, 0, 0, 0));
    out_.FreeTensor(o);
  }

  Int64Tiling t_{};
  I64Op op_ = I64Op::kAdd;
  uint64_t count_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, 2> inA_, inB_;
  TQue<TPosition::VECOUT, 2> out_;
  TBuf<TPosition::VECCALC> words_, offs_, bits_, half_;
  GlobalTensor<int32_t> aGm_, bGm_, yGm_;
  GlobalTensor<uint8_t> yBool_;
};

}  // namespace

extern "C" __global__ __aicore__ void int64_binary_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(Int64Tiling, t, tiling);
  Int64Kernel op;
  op.Init(a, b, y, t);
  op.Process();
}

// Philox-4x32-10 and the random distributions in Ascend C (see random.h for the element -> counter map).
//
// The vector unit has no 32x32->64 multiply and no XOR, so a Philox round is built from what it has:
// mulhi(M, a) from 16-bit halves (products of 16-bit values fit uint32; int32 Mul/Muls wrap), the low
// product with one wrapping Muls, and a ^ b = (a | b) - (a & b) with 16-bit And/Or on the uint32 bits.
// Box-Muller uses Ln/Sqrt and sin/cos polynomials on the half angle ([-pi/2, pi/2], error < 1e-7).
#include "random.h"

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

RandomTiling random_tiling(uint32_t kind, uint64_t total, uint64_t seed, uint64_t offset, const SocInfo& soc) {
  RandomTiling t{};
  t.kind = kind;
  t.total = total;
  t.chunks = CeilDivU<uint64_t>(total, kPhiloxChunk);
  const uint64_t cores = static_cast<uint64_t>(soc.vector_cores > 0 ? soc.vector_cores : 1);
  t.chunks_per_core = t.chunks ? CeilDivU<uint64_t>(t.chunks, cores) : 1;
  t.block_dim = static_cast<uint32_t>(t.chunks ? CeilDivU<uint64_t>(t.chunks, t.chunks_per_core) : 1);
  t.seed_lo = static_cast<uint32_t>(seed);
  t.seed_hi = static_cast<uint32_t>(seed >> 32);
  t.off_lo = static_cast<uint32_t>(offset);
  t.off_hi = static_cast<uint32_t>(offset >> 32);
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::kPhiloxChunk;
using npu_kernels::kPhiloxLanes;
using npu_kernels::RandomTiling;
using namespace nn_kernels;

constexpr uint32_t G = kPhiloxLanes;
constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;


using U32 = LocalTensor<uint32_t>;
using I32 = LocalTensor<int32_t>;

template <typename T>
class RandomKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR mask, GM_ADDR philox, const RandomTiling& t) {
    t_ = t;
    if (philox) {
      // A launch captured into a graph: (seed, base offset) are four words the replay writes before it
      // runs; the tiling's offset is this launch's place after that base.
      GlobalTensor<uint32_t> p;
      p.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(philox), 4);
      const uint64_t base = (uint64_t(p.GetValue(3)) << 32) | p.GetValue(2);
      const uint64_t off = base + ((uint64_t(t.off_hi) << 32) | t.off_lo);
      t_.seed_lo = p.GetValue(0);
      t_.seed_hi = p.GetValue(1);
      t_.off_lo = static_cast<uint32_t>(off);
      t_.off_hi = static_cast<uint32_t>(off >> 32);
    }
    if (x) xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), t.total);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), t.total);
    if (mask) maskGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(mask), t.total);
    pipe_.InitBuffer(state_, 6 * G * 4);
    pipe_.InitBuffer(temps_, 4 * G * 4);
    pipe_.InitBuffer(lo16_, G * 4);
    pipe_.InitBuffer(idx_, G * 4);
    pipe_.InitBuffer(out_, kPhiloxChunk * 4);
    if (t.kind == npu_kernels::kRandDropout) {
      pipe_.InitBuffer(xin_, kPhiloxChunk * sizeof(T));
      pipe_.InitBuffer(mask8_, kPhiloxChunk);
    }
    Duplicate(lo16_.Get<uint32_t>(), 0x0000FFFFu, static_cast<int32_t>(G));
    Iota(idx_.Get<int32_t>(), G);
  }

  __aicore__ inline void Process() {
    const uint64_t c0 = t_.chunks_per_core * GetBlockIdx();
    uint64_t c1 = c0 + t_.chunks_per_core;
    if (c1 > t_.chunks) c1 = t_.chunks;
    for (uint64_t c = c0; c < c1; ++c) Chunk(c);
  }

 private:
  __aicore__ inline U32 S(int k) { return state_.Get<uint32_t>()[k * G]; }
  __aicore__ inline U32 Tmp(int k) { return temps_.Get<uint32_t>()[k * G]; }
  __aicore__ inline LocalTensor<float> Out(int k) { return out_.Get<float>()[k * G]; }

  // dst = a ^ b (dst may be a); uses Tmp(0).
  __aicore__ inline void Xor(const U32& dst, const U32& a, const U32& b, int32_t n) {
    LocalTensor<uint16_t> a16 = a.template ReinterpretCast<uint16_t>(), b16 = b.template ReinterpretCast<uint16_t>();
    LocalTensor<uint16_t> e16 = Tmp(0).template ReinterpretCast<uint16_t>(), d16 = dst.template ReinterpretCast<uint16_t>();
    Or(e16, a16, b16, 2 * n);
    And(d16, a16, b16, 2 * n);
    Sub(dst.template ReinterpretCast<int32_t>(), Tmp(0).template ReinterpretCast<int32_t>(), dst.template ReinterpretCast<int32_t>(), n);
  }

  // hi = high 32 bits of M * a (uint32), from 16-bit halves. Uses Tmp(0..3).
  __aicore__ inline void MulHi(const U32& hi, const U32& a, uint32_t m, int32_t n) {
    const int32_t ml = static_cast<int32_t>(m & 0xFFFFu), mh = static_cast<int32_t>(m >> 16);
    I32 A = Tmp(0).template ReinterpretCast<int32_t>(), B = Tmp(1).template ReinterpretCast<int32_t>(),
        C = Tmp(2).template ReinterpretCast<int32_t>(), D = Tmp(3).template ReinterpretCast<int32_t>(), H = hi.template ReinterpretCast<int32_t>();
    And(Tmp(0).template ReinterpretCast<uint16_t>(), a.template ReinterpretCast<uint16_t>(), lo16_.Get<uint16_t>(), 2 * n);  // aL
    ShiftRight(Tmp(1), a, 16u, n);                                                                         // aH
    Muls(C, A, ml, n);                                      // t = aL*ML
    ShiftRight(Tmp(2), Tmp(2), 16u, n);                     // t >> 16
    Muls(D, B, ml, n);
    Add(C, C, D, n);                                        // u = aH*ML + (t >> 16)
    Muls(H, B, mh, n);                                      // aH*MH
    ShiftRight(Tmp(3), Tmp(2), 16u, n);
    Add(H, H, D, n);                                        // + (u >> 16)
    And(Tmp(2).template ReinterpretCast<uint16_t>(), Tmp(2).template ReinterpretCast<uint16_t>(), lo16_.Get<uint16_t>(), 2 * n);
    Muls(A, A, mh, n);
    Add(A, A, C, n);                                        // v = aL*MH + (u & 0xFFFF)
    ShiftRight(Tmp(0), Tmp(0), 16u, n);
    Add(H, H, A, n);                                        // + (v >> 16)
  }

  // Philox-4x32-10 on `n` lanes of chunk c; the four output words end in st[0..3].
  __aicore__ inline void Philox(uint64_t chunk, int32_t n, U32 st[6]) {
    const uint64_t g0 = chunk * G;
    Adds(st[0].template ReinterpretCast<int32_t>(), idx_.Get<int32_t>(), static_cast<int32_t>(static_cast<uint32_t>(g0)), n);
    Duplicate(st[1], static_cast<uint32_t>(g0 >> 32), n);
    Duplicate(st[2], t_.off_lo, n);
    Duplicate(st[3], t_.off_hi, n);
    uint32_t k0 = t_.seed_lo, k1 = t_.seed_hi;
    for (int r = 0; r < 10; ++r) {
      U32 h0 = st[4], h1 = st[5];
      MulHi(h0, st[0], kM0, n);
      MulHi(h1, st[2], kM1, n);
      Muls(st[0].template ReinterpretCast<int32_t>(), st[0].template ReinterpretCast<int32_t>(), static_cast<int32_t>(kM0), n);  // lo0
      Muls(st[2].template ReinterpretCast<int32_t>(), st[2].template ReinterpretCast<int32_t>(), static_cast<int32_t>(kM1), n);  // lo1
      // new c0 = hi1 ^ c1 ^ k0, new c2 = hi0 ^ c3 ^ k1; new c1 = lo1, new c3 = lo0
      Xor(h1, h1, st[1], n);
      Duplicate(Tmp(1), k0, n);
      Xor(h1, h1, Tmp(1), n);
      Xor(h0, h0, st[3], n);
      Duplicate(Tmp(1), k1, n);
      Xor(h0, h0, Tmp(1), n);
      U32 n0 = h1, n1 = st[2], n2 = h0, n3 = st[0], f0 = st[1], f1 = st[3];
      st[0] = n0;
      st[1] = n1;
      st[2] = n2;
      st[3] = n3;
      st[4] = f0;
      st[5] = f1;
      k0 += kW0;
      k1 += kW1;
    }
  }

  // dst = (w >> 8) * 2^-24 + bias  in [bias, bias + 1)
  __aicore__ inline void ToUnit(const LocalTensor<float>& dst, const U32& w, int32_t n, float bias = 0.0f) {
    ShiftRight(w, w, 8u, n);
    if (bias != 0.0f) Adds(w.template ReinterpretCast<int32_t>(), w.template ReinterpretCast<int32_t>(), static_cast<int32_t>(bias), n);
    Cast(dst, w.template ReinterpretCast<int32_t>(), RoundMode::CAST_NONE, static_cast<uint32_t>(n));
    Muls(dst, dst, 5.9604644775390625e-8f, n);
  }

  // (z0, z1) = sqrt(-2 ln u1) * (cos, sin)(2 pi (u2 - 1/2)); u1 in (0, 1], u2 in [0, 1). Uses Tmp(0..3).
  __aicore__ inline void BoxMuller(const LocalTensor<float>& z0, const LocalTensor<float>& z1, const U32& w1,
                                   const U32& w2, int32_t n) {
    LocalTensor<float> r = Tmp(0).template ReinterpretCast<float>(), psi = Tmp(1).template ReinterpretCast<float>(),
                       s = Tmp(2).template ReinterpretCast<float>(), c = Tmp(3).template ReinterpretCast<float>();
    ToUnit(r, w1, n, 1.0f);               // (0, 1]
    Ln(r, r, n);
    Muls(r, r, -2.0f, n);
    Sqrt(r, r, n);
    ToUnit(psi, w2, n);                   // [0, 1)
    Adds(psi, psi, -0.5f, n);
    Muls(psi, psi, 3.14159265358979f, n); // half angle in [-pi/2, pi/2)
    LocalTensor<float> z = z1;            // z1 is scratch until the end
    Mul(z, psi, psi, n);
    // s = sin(psi)
    Muls(s, z, -1.0f / 39916800.0f, n);
    Adds(s, s, 1.0f / 362880.0f, n);
    Mul(s, s, z, n);
    Adds(s, s, -1.0f / 5040.0f, n);
    Mul(s, s, z, n);
    Adds(s, s, 1.0f / 120.0f, n);
    Mul(s, s, z, n);
    Adds(s, s, -1.0f / 6.0f, n);
    Mul(s, s, z, n);
    Adds(s, s, 1.0f, n);
    Mul(s, s, psi, n);
    // c = cos(psi)
    Muls(c, z, 1.0f / 479001600.0f, n);
    Adds(c, c, -1.0f / 3628800.0f, n);
    Mul(c, c, z, n);
    Adds(c, c, 1.0f / 40320.0f, n);
    Mul(c, c, z, n);
    Adds(c, c, -1.0f / 720.0f, n);
    Mul(c, c, z, n);
    Adds(c, c, 1.0f / 24.0f, n);
    Mul(c, c, z, n);
    Adds(c, c, -0.5f, n);
    Mul(c, c, z, n);
    Adds(c, c, 1.0f, n);
    // sin(2 psi) = 2 s c, cos(2 psi) = 1 - 2 s^2
    Mul(z1, s, c, n);
    Muls(z1, z1, 2.0f, n);
    Mul(z1, z1, r, n);
    Mul(z0, s, s, n);
    Muls(z0, z0, -2.0f, n);
    Adds(z0, z0, 1.0f, n);
    Mul(z0, z0, r, n);
  }

  // dst = [u < p] as 1/0 without Select: clamp((p - u) * 2^200, 0, 1).
  __aicore__ inline void Below(const LocalTensor<float>& dst, float p, int32_t n) {
    Muls(dst, dst, -1.0f, n);
    Adds(dst, dst, p, n);
    Muls(dst, dst, 1.2676506e30f, n);
    Muls(dst, dst, 1.2676506e30f, n);
    Maxs(dst, dst, 0.0f, n);
    Mins(dst, dst, 1.0f, n);
  }

  __aicore__ inline void Chunk(uint64_t c) {
    const uint64_t e0 = c * kPhiloxChunk;
    const uint64_t rem = t_.total - e0;
    const uint32_t cnt = static_cast<uint32_t>(rem < kPhiloxChunk ? rem : kPhiloxChunk);
    const uint32_t lanes = npu_kernels::AlignUp<uint32_t>(cnt < G ? cnt : G, 64);
    const int32_t n = static_cast<int32_t>(lanes);
    U32 st[6] = {S(0), S(1), S(2), S(3), S(4), S(5)};
    Philox(c, n, st);
    const uint32_t words = (cnt + G - 1) / G;  // words holding elements of this chunk
    if (t_.kind == npu_kernels::kRandNormal) {
      BoxMuller(Out(0), Out(1), st[0], st[1], n);
      if (words > 2) BoxMuller(Out(2), Out(3), st[2], st[3], n);
      for (uint32_t k = 0; k < words; ++k) {
        Muls(Out(k), Out(k), t_.b, n);
        Adds(Out(k), Out(k), t_.a, n);
      }
    } else {
      for (uint32_t k = 0; k < words; ++k) ToUnit(Out(k), st[k], n);
    }
    LocalTensor<float> o = out_.Get<float>();
    const int32_t m = static_cast<int32_t>(words * G < cnt ? cnt : (words - 1) * G + lanes);
    if (t_.kind == npu_kernels::kRandUniform) {
      Muls(o, o, t_.b - t_.a, m);
      Adds(o, o, t_.a, m);
    } else if (t_.kind == npu_kernels::kRandBernoulli || t_.kind == npu_kernels::kRandDropout) {
      Below(o, t_.a, m);
    }
    if (t_.kind == npu_kernels::kRandDropout) {
      // mask bytes, then y = x * keep * scale
      LocalTensor<half> mh = temps_.Get<half>();
      Cast(mh, o, RoundMode::CAST_NONE, static_cast<uint32_t>(m));
      LocalTensor<uint8_t> m8 = mask8_.Get<uint8_t>();
      Cast(m8, mh, RoundMode::CAST_NONE, static_cast<uint32_t>(m));
      LocalTensor<T> xt = xin_.Get<T>();
      SyncVToMte2();
      DataCopyPad(xt, xGm_[e0], DataCopyExtParams{1, static_cast<uint32_t>(cnt * sizeof(T)), 0, 0, 0},
                  DataCopyPadExtParams<T>{false, 0, 0, T(0)});
      SyncMte2ToV();
      LocalTensor<float> xf = AsFloat(state_.Get<float>(), xt, static_cast<uint32_t>(m));
      Mul(o, o, xf, m);
      Muls(o, o, t_.b, m);
      SyncVToMte3();
      DataCopyPad(maskGm_[e0], m8, DataCopyExtParams{1, cnt, 0, 0, 0});
    }
    LocalTensor<T> ot = std::is_same_v<T, float> ? o.template ReinterpretCast<T>() : temps_.Get<T>();
    if constexpr (!std::is_same_v<T, float>) {
      if (t_.kind == npu_kernels::kRandDropout) {
        SyncMte3ToV();
        ot = xin_.Get<T>();
      }
      StoreFloat(ot, o, static_cast<uint32_t>(m));
    }
    SyncVToMte3();
    DataCopyPad(yGm_[e0], ot, DataCopyExtParams{1, static_cast<uint32_t>(cnt * sizeof(T)), 0, 0, 0});
    SyncMte3ToV();
  }

  RandomTiling t_;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> state_, temps_, lo16_, idx_, out_, xin_, mask8_;
  GlobalTensor<T> xGm_, yGm_;
  GlobalTensor<uint8_t> maskGm_;
};

// grad_in = grad_out * mask * scale (the mask is uint8/bool).
template <typename T>
__aicore__ inline void DropoutBackward(GM_ADDR go, GM_ADDR mask, GM_ADDR gx, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RandomTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> gin, min, work, mh;
  const uint32_t tile = kPhiloxChunk;
  pipe.InitBuffer(gin, tile * sizeof(T));
  pipe.InitBuffer(min, tile);
  pipe.InitBuffer(work, 2 * tile * sizeof(float));
  pipe.InitBuffer(mh, tile * sizeof(half));
  GlobalTensor<T> gg, xg;
  GlobalTensor<uint8_t> mg;
  gg.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(go), t.total);
  xg.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(gx), t.total);
  mg.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(mask), t.total);
  const uint64_t c0 = t.chunks_per_core * GetBlockIdx();
  uint64_t c1 = c0 + t.chunks_per_core;
  if (c1 > t.chunks) c1 = t.chunks;
  for (uint64_t c = c0; c < c1; ++c) {
    const uint64_t e0 = c * tile;
    const uint32_t cnt = static_cast<uint32_t>(t.total - e0 < tile ? t.total - e0 : tile);
    LocalTensor<T> g = gin.Get<T>();
    LocalTensor<uint8_t> m = min.Get<uint8_t>();
    DataCopyPad(g, gg[e0], DataCopyExtParams{1, static_cast<uint32_t>(cnt * sizeof(T)), 0, 0, 0},
                DataCopyPadExtParams<T>{false, 0, 0, T(0)});
    DataCopyPad(m, mg[e0], DataCopyExtParams{1, cnt, 0, 0, 0}, DataCopyPadExtParams<uint8_t>{false, 0, 0, 0});
    SyncMte2ToV();
    LocalTensor<float> w0 = work.Get<float>(), w1 = work.Get<float>()[tile];
    LocalTensor<half> h = mh.Get<half>();
    Cast(h, m, RoundMode::CAST_NONE, cnt);
    Cast(w1, h, RoundMode::CAST_NONE, cnt);
    LocalTensor<float> gf = AsFloat(w0, g, cnt);
    Mul(w0, gf, w1, static_cast<int32_t>(cnt));
    Muls(w0, w0, t.b, static_cast<int32_t>(cnt));
    StoreFloat(g, w0, cnt);
    SyncVToMte3();
    DataCopyPad(xg[e0], g, DataCopyExtParams{1, static_cast<uint32_t>(cnt * sizeof(T)), 0, 0, 0});
    SyncMte3ToV();
  }
}

}  // namespace

#define NPU_RANDOM_ENTRY(NAME, T)                                                                             \
  extern "C" __global__ __aicore__ void random_kernel_##NAME(GM_ADDR x, GM_ADDR y, GM_ADDR mask,               \
                                                             GM_ADDR philox, GM_ADDR tiling) {                \
    GET_TILING_DATA_WITH_STRUCT(RandomTiling, t, tiling);                                                     \
    RandomKernel<T> op;                                                                                       \
    op.Init(x, y, mask, philox, t);                                                                           \
    op.Process();                                                                                             \
  }                                                                                                           \
  extern "C" __global__ __aicore__ void dropout_bwd_kernel_##NAME(GM_ADDR go, GM_ADDR mask, GM_ADDR gx,        \
                                                                  GM_ADDR tiling) {                           \
    DropoutBackward<T>(go, mask, gx, tiling);                                                                 \
  }
NPU_RANDOM_ENTRY(float, float)
NPU_RANDOM_ENTRY(half, half)
NPU_RANDOM_ENTRY(bf16, bfloat16_t)
#undef NPU_RANDOM_ENTRY

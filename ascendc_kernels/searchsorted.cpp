// searchsorted on the vector cores (see searchsorted.h).
#include "searchsorted.h"

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

SearchsortedTiling searchsorted_tiling(uint64_t rows, uint64_t m, uint64_t k, bool right, const SocInfo& soc) {
  SearchsortedTiling t;
  t.rows = rows;
  t.m = m;
  t.k = k;
  t.right = right ? 1 : 0;
  uint64_t p = 2;
  while (p < m + 1) p *= 2;  // at least one +inf: positions 0..p-1 cover 0..m
  if (p > (uint64_t(1) << 14)) return t;
  t.p = uint32_t(p);
  t.chunk = 2048;
  // UB: the boundaries, then per chunk the values, pos, cand, gathered boundaries, offsets and a mask.
  if (uint64_t(t.p) * 4 + uint64_t(t.chunk) * (5 * 4 + 1) + 4096 > soc.ub_bytes) return t;
  t.chunks = CeilDivU<uint64_t>(k, t.chunk);
  t.items = rows * t.chunks;
  const ItemSplit sp = SplitItems(t.items, rows * k * 4, soc.vector_cores, 16 * 1024);
  t.items_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  t.ok = 1;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::SearchsortedTiling;
using namespace nn_kernels;

class SearchsortedKernel {
 public:
  __aicore__ inline void Init(GM_ADDR b, GM_ADDR v, GM_ADDR out, const SearchsortedTiling& t) {
    t_ = t;
    bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(b), t.rows * t.m);
    vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(v), t.rows * t.k);
    oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out), t.rows * t.k);
    pipe_.InitBuffer(b_, t.p * 4 < 32 ? 32 : t.p * 4);
    pipe_.InitBuffer(v_, t.chunk * 4);
    pipe_.InitBuffer(pos_, t.chunk * 4);
    pipe_.InitBuffer(cand_, t.chunk * 4);
    pipe_.InitBuffer(bc_, t.chunk * 4);
    pipe_.InitBuffer(off_, t.chunk * 4);
    pipe_.InitBuffer(mask_, t.chunk / 8 < 32 ? 32 : t.chunk / 8);
  }

  __aicore__ inline void Process() {
    const uint64_t i0 = uint64_t(GetBlockIdx()) * t_.items_per_core;
    uint64_t i1 = i0 + t_.items_per_core;
    if (i1 > t_.items) i1 = t_.items;
    uint64_t loaded = ~uint64_t(0);
    LocalTensor<float> b = b_.Get<float>(), v = v_.Get<float>(), pos = pos_.Get<float>(), cand = cand_.Get<float>(),
                       bc = bc_.Get<float>();
    LocalTensor<int32_t> off = off_.Get<int32_t>();
    LocalTensor<uint8_t> mask = mask_.Get<uint8_t>();
    for (uint64_t it = i0; it < i1; ++it) {
      const uint64_t row = it / t_.chunks, c0 = (it % t_.chunks) * t_.chunk;
      const uint32_t n = uint32_t(t_.k - c0 < t_.chunk ? t_.k - c0 : t_.chunk);
      const int32_t n64 = int32_t((n + 63) / 64 * 64);
      SyncVToMte2();  // the previous chunk's reads of v (and b) are done
      if (row != loaded) {
        Duplicate(b, __builtin_inff(), int32_t(t_.p < 8 ? 8 : t_.p));
        SyncVToMte2();
        // The last 32-byte block's lanes past m are padded with +inf too (not left undefined).
        DataCopyPad(b, bGm_[row * t_.m], DataCopyExtParams(1, uint32_t(t_.m * 4), 0, 0, 0),
                    DataCopyPadExtParams<float>(true, 0, uint8_t((8 - t_.m % 8) % 8), __builtin_inff()));
        loaded = row;
      }
      if (uint32_t(n64) != n) Duplicate(v[n / 64 * 64], 0.0f, 64);  // lanes past n: any finite value
      SyncVToMte2();
      DataCopyPad(v, vGm_[row * t_.k + c0], DataCopyExtParams(1, n * 4, 0, 0, 0),
                  DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
      SyncMte2ToV();
      Duplicate(pos, 0.0f, n64);
      for (uint32_t s = t_.p / 2; s >= 1; s /= 2) {
        // Boundary pos + s - 1 of every lane (byte offsets into b).
        Adds(cand, pos, float(s), n64);
        Adds(bc, cand, -1.0f, n64);
        Cast(off, bc, RoundMode::CAST_RINT, uint32_t(n64));
        Muls(off, off, int32_t(4), n64);
        Gather(bc, b, off.ReinterpretCast<uint32_t>(), 0u, uint32_t(n64));
        // Stay where the boundary is >= v (left) / > v (right); move on otherwise (NaN v moves on).
        Compare(mask, bc, v, t_.right ? CMPMODE::GT : CMPMODE::GE, uint32_t(n64));
        Select(pos, mask, pos, cand, SELMODE::VSEL_TENSOR_TENSOR_MODE, uint32_t(n64));
      }
      // pos may pass m only through +inf padding for a NaN value: the CPU gives m there.
      Mins(pos, pos, float(t_.m), n64);
      SyncMte3ToV();  // the previous chunk's output has left
      Cast(off, pos, RoundMode::CAST_RINT, uint32_t(n64));
      SyncVToMte3();
      DataCopyPad(oGm_[row * t_.k + c0], off, DataCopyExtParams(1, n * 4, 0, 0, 0));
    }
  }

 private:
  SearchsortedTiling t_;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> b_, v_, pos_, cand_, bc_, off_, mask_;
  GlobalTensor<float> bGm_, vGm_;
  GlobalTensor<int32_t> oGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void searchsorted_kernel(GM_ADDR boundaries, GM_ADDR values, GM_ADDR out,
                                                          GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SearchsortedTiling, t, tiling);
  SearchsortedKernel op;
  op.Init(boundaries, values, out, t);
  op.Process();
}

// The fused LSTM cell (see lstm_cell.h).
#include "lstm_cell.h"

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

// Float tiles of rows x hp per unit: gates (4), hidden gates (4), bias (4), cx, cy, hy, tanh(g),
// two scratch (also the Sigmoid / Tanh APIs' temporary space).
constexpr uint32_t kLstmTiles = 18;

LstmCellTiling lstm_cell_tiling(uint32_t batch, uint32_t hidden, bool has_bias, const SocInfo& soc) {
  LstmCellTiling t{};
  t.batch = batch;
  t.hidden = hidden;
  t.has_bias = has_bias ? 1 : 0;
  t.hp = AlignUp<uint32_t>(hidden, 64);
  const uint64_t per_row = uint64_t(t.hp) * (kLstmTiles * 4);
  const uint64_t budget = soc.ub_bytes - 8 * 1024;
  uint64_t rows = per_row ? budget / per_row : 0;
  if (rows == 0 || batch == 0 || hidden == 0) return t;
  if (rows > batch) rows = batch;
  if (rows > 4095) rows = 4095;
  t.rows = uint32_t(rows);
  t.units = CeilDivU<uint64_t>(batch, rows);
  const ItemSplit sp = SplitItems(t.units, uint64_t(batch) * hidden * 4 * 12, soc.vector_cores, 16 * 1024);
  t.units_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  t.ok = 1;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::LstmCellTiling;
using namespace nn_kernels;

class LstmCellKernel {
 public:
  __aicore__ inline void Init(GM_ADDR ig, GM_ADDR hg, GM_ADDR bias, GM_ADDR cx, GM_ADDR hy, GM_ADDR cy, GM_ADDR ws,
                              const LstmCellTiling& t) {
    t_ = t;
    const uint64_t g = uint64_t(t.batch) * 4 * t.hidden, s = uint64_t(t.batch) * t.hidden;
    igGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ig), g);
    hgGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(hg), g);
    wsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws), g);
    cxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(cx), s);
    hyGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(hy), s);
    cyGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(cy), s);
    n_ = t.rows * t.hp;
    pipe_.InitBuffer(tiles_, npu_kernels::kLstmTiles * n_ * sizeof(float));
    Duplicate(Tile(0), 0.0f, int32_t(npu_kernels::kLstmTiles * n_));  // the lanes past H stay defined
    SyncVToMte2();
    if (t.has_bias) {
      // The bias replicated over the unit's rows, chunk-major like the gates.
      GlobalTensor<float> bGm;
      bGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias), 4ull * t.hidden);
      for (uint32_t c = 0; c < 4; ++c)
        for (uint32_t r = 0; r < t.rows; ++r) LoadRows(Tile(kBias + c)[r * t.hp], bGm[c * t.hidden], 1, 0);
    }
    SyncPipes<HardEvent::MTE2_V>();
  }

  __aicore__ inline void Process() {
    const CoreShare sh = ShareOfThisCore(t_.units, t_.units_per_core);
    for (uint64_t u = sh.begin; u < sh.end; ++u) Unit(u);
  }

 private:
  enum Slot : uint32_t { kGates = 0, kHid = 4, kBias = 8, kCx = 12, kCy, kHy, kTg, kA, kB };
  __aicore__ inline LocalTensor<float> Tile(uint32_t slot) { return tiles_.Get<float>()[slot * n_]; }
  // The Sigmoid / Tanh sharedTmpBuffer: the scratch tiles kA and kB (n_ >= 64 floats each, so >= 512 B,
  // the float minimum of GetTanhMaxMinTmpSize, the larger of the two).
  __aicore__ inline LocalTensor<uint8_t> TanhTmp() {
    LocalTensor<uint8_t> t = Tile(kA).ReinterpretCast<uint8_t>();
    t.SetSize(2 * n_ * sizeof(float));
    return t;
  }

  // k rows of H floats (GM row pitch `gap` floats after each) into rows of hp lanes.
  __aicore__ inline void LoadRows(const LocalTensor<float>& dst, const GlobalTensor<float>& src, uint32_t k,
                                  uint32_t gap) {
    const uint32_t ub_row = (t_.hidden * 4 + 31) / 32 * 32;
    DataCopyPad(dst, src, DataCopyExtParams(uint16_t(k), t_.hidden * 4, gap * 4, (t_.hp * 4 - ub_row) / 32, 0),
                DataCopyPadExtParams<float>(true, 0, uint8_t((ub_row - t_.hidden * 4) / 4), 0.0f));
  }
  __aicore__ inline void StoreRows(const GlobalTensor<float>& dst, const LocalTensor<float>& src, uint32_t k,
                                   uint32_t gap) {
    const uint32_t ub_row = (t_.hidden * 4 + 31) / 32 * 32;
    DataCopyPad(dst, src, DataCopyExtParams(uint16_t(k), t_.hidden * 4, (t_.hp * 4 - ub_row) / 32, gap * 4, 0));
  }

  __aicore__ inline void Unit(uint64_t u) {
    const uint32_t r0 = uint32_t(u) * t_.rows;
    const uint32_t k = t_.batch - r0 < t_.rows ? t_.batch - r0 : t_.rows;
    const uint32_t H = t_.hidden;
    const uint64_t g0 = uint64_t(r0) * 4 * H, s0 = uint64_t(r0) * H;
    SyncVToMte2();  // the previous unit's vector ops are done with the tiles
    SyncMte3ToV();
    for (uint32_t c = 0; c < 4; ++c) {
      LoadRows(Tile(kGates + c), igGm_[g0 + c * H], k, 3 * H);
      LoadRows(Tile(kHid + c), hgGm_[g0 + c * H], k, 3 * H);
    }
    LoadRows(Tile(kCx), cxGm_[s0], k, 0);
    SyncMte2ToV();
    const uint32_t n = k * t_.hp, n4 = 4 * n_;
    const LocalTensor<float> gates = Tile(kGates);
    // Chunk-major with a stride of n_ per chunk: one instruction over all four when k fills the unit.
    if (k == t_.rows) {
      Add(gates, gates, Tile(kHid), int32_t(n4));
      if (t_.has_bias) Add(gates, gates, Tile(kBias), int32_t(n4));
    } else {
      for (uint32_t c = 0; c < 4; ++c) {
        Add(Tile(kGates + c), Tile(kGates + c), Tile(kHid + c), int32_t(n));
        if (t_.has_bias) Add(Tile(kGates + c), Tile(kGates + c), Tile(kBias + c), int32_t(n));
      }
    }
    const LocalTensor<float> i = Tile(kGates), f = Tile(kGates + 1), g = Tile(kGates + 2), o = Tile(kGates + 3);
    Sigmoid(i, i, TanhTmp(), n);
    Sigmoid(f, f, TanhTmp(), n);
    const LocalTensor<float> tg = Tile(kTg);
    Tanh(tg, g, TanhTmp(), n);
    Sigmoid(o, o, TanhTmp(), n);
    Mul(Tile(kA), f, Tile(kCx), int32_t(n));
    Mul(Tile(kB), i, tg, int32_t(n));
    Add(Tile(kCy), Tile(kA), Tile(kB), int32_t(n));
    Tanh(Tile(kHy), Tile(kCy), TanhTmp(), n);
    Mul(Tile(kHy), o, Tile(kHy), int32_t(n));
    SyncVToMte3();
    StoreRows(hyGm_[s0], Tile(kHy), k, 0);
    StoreRows(cyGm_[s0], Tile(kCy), k, 0);
    for (uint32_t c = 0; c < 4; ++c) StoreRows(wsGm_[g0 + c * H], c == 2 ? tg : Tile(kGates + c), k, 3 * H);
  }

  LstmCellTiling t_{};
  uint32_t n_ = 0;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> tiles_;
  GlobalTensor<float> igGm_, hgGm_, wsGm_, cxGm_, hyGm_, cyGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void lstm_cell_kernel(GM_ADDR ig, GM_ADDR hg, GM_ADDR bias, GM_ADDR cx, GM_ADDR hy,
                                                       GM_ADDR cy, GM_ADDR ws, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(LstmCellTiling, t, tiling);
  LstmCellKernel op;
  op.Init(ig, hg, bias, cx, hy, cy, ws, t);
  op.Process();
}

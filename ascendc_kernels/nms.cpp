// Non-maximum suppression in Ascend C (see nms.h for the design).
#include "nms.h"

#include <cmath>

#include "kernel_operator.h"
#include "norm_util.h"
#include "reduce_helpers.h"

using namespace AscendC;

namespace npu_kernels {

namespace {
constexpr uint32_t kChunk = 2048;         // boxes j per UB chunk
constexpr uint32_t kRowsPerBlock = 32;    // mask rows per copy out
constexpr uint32_t kMaxBoxes = 32768;     // phase 1 keeps the suppressed set and the kept list in UB
}  // namespace

NmsTiling nms_tiling(uint32_t n, double iou_threshold, const SocInfo& soc) {
  NmsTiling t{};
  t.n = n;
  if (n == 0 || n > kMaxBoxes) return t;
  t.npad = AlignUp<uint32_t>(n, 256);
  t.row_bytes = t.npad / 8;
  t.chunk = t.npad < kChunk ? t.npad : kChunk;
  t.rows_per_block = kRowsPerBlock;
  // IoU (float) > threshold (double) <=> IoU > the largest float <= threshold.
  float f = static_cast<float>(iou_threshold);
  if (static_cast<double>(f) > iou_threshold) f = std::nextafter(f, -INFINITY);
  t.threshold = f;
  // Row blocks go round-robin to the cores (early rows compare against more boxes).
  const uint32_t blocks = CeilDivU<uint32_t>(n, kRowsPerBlock);
  uint64_t cores = uint64_t(n) * n / (256 * 1024);  // >= ~256K IoUs per core
  if (cores < 1) cores = 1;
  if (cores > uint64_t(soc.vector_cores)) cores = uint64_t(soc.vector_cores);
  if (cores > blocks) cores = blocks;
  t.block_dim = static_cast<uint32_t>(cores);
  t.rows_per_core = CeilDivU<uint32_t>(blocks, t.block_dim) * kRowsPerBlock;
  t.ok = 1;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::NmsTiling;
using namespace nn_kernels;
using namespace npu_kernels::reduce_helpers;

class NmsKernel {
 public:
  __aicore__ inline void Init(GM_ADDR coords, GM_ADDR areas, GM_ADDR mask, GM_ADDR keep, GM_ADDR count,
                              const NmsTiling& t) {
    t_ = t;
    cGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(coords), uint64_t(4) * t.npad);
    aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(areas), t.npad);
    mGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(mask), uint64_t(t.n) * t.row_bytes);
    kGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(keep), t.npad);
    nGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(count), 8);
  }

  __aicore__ inline void Process() {
    if (t_.phase == 0) Masks();
    else Greedy();
  }

 private:
  // Phase 0: mask rows of this core's row blocks (block b on core b % block_dim).
  __aicore__ inline void Masks() {
    const uint32_t J = t_.chunk, R = t_.rows_per_block;
    pipe_.InitBuffer(jb_, 5 * J * sizeof(float));    // x1, y1, x2, y2, area of a chunk of boxes j
    pipe_.InitBuffer(tb_, 4 * J * sizeof(float));    // scratch
    pipe_.InitBuffer(ib_, 5 * R * sizeof(float));    // the same of a block of rows i
    pipe_.InitBuffer(mb_, R * (J / 8));              // mask bits of the block against the chunk
    LocalTensor<float> jc = jb_.Get<float>(), tc = tb_.Get<float>(), ic = ib_.Get<float>();
    LocalTensor<uint8_t> bits = mb_.Get<uint8_t>();
    const uint32_t blocks = npu_kernels::CeilDivU<uint32_t>(t_.n, R);
    for (uint32_t b = GetBlockIdx(); b < blocks; b += t_.block_dim) {
      const uint32_t r0 = b * R;
      const uint32_t rows = t_.n - r0 < R ? t_.n - r0 : R;
      SyncSToMte2();  // the previous block's scalar reads of ic are done
      for (uint32_t q = 0; q < 4; ++q) CopyInContiguous(ic[q * R], cGm_[uint64_t(q) * t_.npad + r0], rows);
      CopyInContiguous(ic[4 * R], aGm_[r0], rows);
      SyncMte2ToS();
      // Boxes j <= i never matter (the greedy pass has decided them): chunks ending at or before
      // the block's first row + 1 are skipped, their mask bytes left as they are.
      const uint32_t c0 = (r0 + 1) / J;
      for (uint32_t c = c0 * J; c < t_.npad; c += J) {
        const uint32_t w = t_.npad - c < J ? t_.npad - c : J;
        SyncVToMte2();  // the previous chunk's compute has read jc
        for (uint32_t q = 0; q < 4; ++q) DataCopy(jc[q * J], cGm_[uint64_t(q) * t_.npad + c], w);
        DataCopy(jc[4 * J], aGm_[c], w);
        SyncMte2ToV();
        SyncMte3ToV();  // the previous copy out has read the mask bits
        for (uint32_t r = 0; r < rows; ++r) Row(ic, r, jc, tc, bits[r * (J / 8)], w);
        SyncVToMte3();
        CopyOutRows(mGm_[uint64_t(r0) * t_.row_bytes + c / 8], bits, rows, w / 8, t_.row_bytes, J / 8);
      }
    }
  }

  // IoU of row box r of the block against w boxes j, as torchvision computes it, compared.
  __aicore__ inline void Row(const LocalTensor<float>& ic, uint32_t r, const LocalTensor<float>& jc,
                             const LocalTensor<float>& tc, const LocalTensor<uint8_t>& out, uint32_t w) {
    const uint32_t R = t_.rows_per_block, J = t_.chunk;
    const float x1 = ic.GetValue(r), y1 = ic.GetValue(R + r), x2 = ic.GetValue(2 * R + r),
                y2 = ic.GetValue(3 * R + r), area = ic.GetValue(4 * R + r);
    const int32_t n = static_cast<int32_t>(w);
    LocalTensor<float> xx1 = tc, yy1 = tc[J], xx2 = tc[2 * J], yy2 = tc[3 * J];
    Maxs(xx1, jc, x1, n);
    Maxs(yy1, jc[J], y1, n);
    Mins(xx2, jc[2 * J], x2, n);
    Mins(yy2, jc[3 * J], y2, n);
    Sub(xx2, xx2, xx1, n);
    Maxs(xx2, xx2, 0.0f, n);          // w
    Sub(yy2, yy2, yy1, n);
    Maxs(yy2, yy2, 0.0f, n);          // h
    Mul(xx2, xx2, yy2, n);            // inter
    Adds(yy1, jc[4 * J], area, n);    // area_i + area_j
    Sub(yy1, yy1, xx2, n);            // - inter
    Div(xx2, xx2, yy1, n);            // IoU
    CompareScalar(out, xx2, t_.threshold, CMPMODE::GT, static_cast<uint32_t>(n));
  }

  // Phase 1 (one core): the greedy pass over the sorted boxes.
  __aicore__ inline void Greedy() {
    const uint32_t nb = t_.row_bytes;
    pipe_.InitBuffer(sup_, nb);
    pipe_.InitBuffer(row_, nb);
    pipe_.InitBuffer(keep_, t_.npad * sizeof(int32_t));
    pipe_.InitBuffer(cnt_, 8 * sizeof(int32_t));
    LocalTensor<uint8_t> sup = sup_.Get<uint8_t>(), row = row_.Get<uint8_t>();
    LocalTensor<uint16_t> sup16 = sup.ReinterpretCast<uint16_t>(), row16 = row.ReinterpretCast<uint16_t>();
    LocalTensor<int32_t> keep = keep_.Get<int32_t>(), cnt = cnt_.Get<int32_t>();
    const int32_t words = static_cast<int32_t>(nb / 2);
    Duplicate(sup16, uint16_t(0), words);
    Duplicate(keep, int32_t(0), static_cast<int32_t>(t_.npad));
    SyncVToS();
    int32_t kept = 0;
    for (uint32_t i = 0; i < t_.n; ++i) {
      if ((sup.GetValue(i >> 3) >> (i & 7)) & 1u) continue;
      keep.SetValue(kept++, static_cast<int32_t>(i));
      SyncVToMte2();  // the previous Or has read the row buffer
      DataCopy(row, mGm_[uint64_t(i) * nb], nb);
      SyncMte2ToV();
      Or(sup16, sup16, row16, words);
      SyncVToS();
    }
    Duplicate(cnt, int32_t(0), 8);
    SyncVToS();
    cnt.SetValue(0, kept);
    SyncVToMte3();
    SyncSToMte3();
    DataCopy(kGm_, keep, t_.npad);
    DataCopy(nGm_, cnt, 8);
  }

  NmsTiling t_;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> jb_, tb_, ib_, mb_, sup_, row_, keep_, cnt_;
  GlobalTensor<float> cGm_, aGm_;
  GlobalTensor<uint8_t> mGm_;
  GlobalTensor<int32_t> kGm_, nGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void nms_kernel(GM_ADDR coords, GM_ADDR areas, GM_ADDR mask, GM_ADDR keep,
                                                 GM_ADDR count, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(NmsTiling, t, tiling);
  NmsKernel op;
  op.Init(coords, areas, mask, keep, count, t);
  op.Process();
}

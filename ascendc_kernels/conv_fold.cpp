// Width fold into 5HD on the vector cores (see conv_fold.h).
#include "conv_fold.h"

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

ConvFoldTiling conv_fold_tiling(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t kw, uint32_t sw,
                                uint32_t pl, uint32_t pr, uint32_t x_cl, uint32_t elem_bytes, const SocInfo& soc) {
  ConvFoldTiling t{};
  t.n = n; t.c = c; t.h = h; t.w = w; t.kw = kw; t.sw = sw; t.pl = pl; t.pr = pr; t.x_cl = x_cl;
  t.elem_bytes = elem_bytes;
  t.c0 = 32 / elem_bytes;
  t.c1 = CeilDivU(c * kw, t.c0);
  t.wo = (w + pl + pr - kw) / sw + 1;
  // Zeros before each row: at least one (offset 0 is the table's zero) and the left padding, and
  // the row's data must start on a 32 B block.
  const uint32_t need = pl > 0 ? pl : 1;
  if (x_cl) {
    uint32_t lead_px = need;
    while ((lead_px * c) % t.c0) ++lead_px;
    t.lead = lead_px * c;
    t.row_pitch = AlignUp((lead_px + w + pr) * c, t.c0);
    if (t.row_pitch < t.lead + AlignUp(w * c, t.c0)) t.row_pitch = t.lead + AlignUp(w * c, t.c0);
  } else {
    t.lead = AlignUp(need, t.c0);
    t.row_pitch = AlignUp(t.lead + w + pr, t.c0);
    if (t.row_pitch < t.lead + AlignUp(w, t.c0)) t.row_pitch = t.lead + AlignUp(w, t.c0);
  }
  // Per input row: its share of the row buffer and of the output; the offset table is one row's.
  const uint64_t out_row = uint64_t(t.c1) * t.wo * t.c0;
  const uint64_t per_row = uint64_t(c) * (x_cl ? t.row_pitch / c + 1 : t.row_pitch) * elem_bytes +
                           out_row * elem_bytes;
  if (out_row * 4 + 4096 >= soc.ub_bytes) return t;  // ok = 0
  const uint64_t budget = soc.ub_bytes - 4096 - out_row * 4;
  uint64_t rows = per_row ? budget / per_row : 0;
  if (rows == 0) return t;  // ok = 0
  if (rows > 8) rows = 8;
  if (rows > h) rows = h;
  // Enough units for the cores, and each DataCopy's block count / stride within 16 bits.
  while (rows > 1 && uint64_t(n) * CeilDivU<uint64_t>(h, rows) < uint64_t(soc.vector_cores)) --rows;
  if (uint64_t(h) * t.wo > 65535 + rows * uint64_t(t.wo) || rows * uint64_t(t.wo) > 65535) return t;
  t.rows = uint32_t(rows);
  t.buf_elems = x_cl ? t.rows * t.row_pitch : c * t.rows * t.row_pitch;
  t.out_elems = uint32_t(out_row * t.rows);
  t.table_elems = uint32_t(out_row);
  t.units = uint64_t(n) * CeilDivU<uint64_t>(h, t.rows);
  const uint64_t cores = t.units < uint64_t(soc.vector_cores) ? t.units : uint64_t(soc.vector_cores);
  t.units_per_core = CeilDivU<uint64_t>(t.units, cores);
  t.block_dim = uint32_t(CeilDivU<uint64_t>(t.units, t.units_per_core));
  t.ok = 1;
  return t;
}

void conv_fold_offsets(const ConvFoldTiling& t, uint32_t* out) {
  // Row 0 of the unit; later rows read the same offsets r row pitches further (Unit's Gathers).
  const uint32_t ck = t.c * t.kw;
  uint64_t i = 0;
  for (uint32_t c1 = 0; c1 < t.c1; ++c1)
    for (uint32_t wo = 0; wo < t.wo; ++wo)
      for (uint32_t c0 = 0; c0 < t.c0; ++c0, ++i) {
        const uint32_t ch = c1 * t.c0 + c0;
        if (ch >= ck) { out[i] = 0; continue; }  // a zero lane
        const uint32_t c = ch / t.kw, j = ch % t.kw;
        // Column in the padded row (the buffer's zeros hold the padding).
        const uint32_t wp = wo * t.sw + j;  // = input column + pl
        const uint64_t idx = t.x_cl ? t.lead + uint64_t(wp) * t.c - uint64_t(t.pl) * t.c + c
                                    : uint64_t(c) * t.rows * t.row_pitch + t.lead + wp - t.pl;
        out[i] = uint32_t(idx * t.elem_bytes);
      }
}

}  // namespace npu_kernels

namespace {

using npu_kernels::ConvFoldTiling;
using nn_kernels::SyncMte2ToV;
using nn_kernels::SyncVToMte2;

template <typename T>
class ConvFoldKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR offsets, GM_ADDR y, const ConvFoldTiling& t) {
    t_ = t;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), uint64_t(t.n) * t.c * t.h * t.w);
    offGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(offsets), t.table_elems);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), uint64_t(t.n) * t.c1 * t.h * t.wo * t.c0);
    pipe_.InitBuffer(buf_, t.buf_elems * sizeof(T));
    pipe_.InitBuffer(off_, t.table_elems * 4);
    pipe_.InitBuffer(outQ_, 1, t.out_elems * sizeof(T));
    // The borders stay zero: the row loads write only the data columns.
    if constexpr (sizeof(T) == 2) Duplicate(buf_.Get<int16_t>(), int16_t(0), int32_t(t.buf_elems));
    else Duplicate(buf_.Get<float>(), 0.0f, int32_t(t.buf_elems));
    DataCopy(off_.Get<uint32_t>(), offGm_, t.table_elems);
  }

  __aicore__ inline void Process() {
    const uint64_t first = uint64_t(GetBlockIdx()) * t_.units_per_core;
    uint64_t last = first + t_.units_per_core;
    if (last > t_.units) last = t_.units;
    const uint64_t per_img = (t_.h + t_.rows - 1) / t_.rows;
    for (uint64_t u = first; u < last; ++u) {
      const uint32_t nb = uint32_t(u / per_img);
      const uint32_t h0 = uint32_t(u % per_img) * t_.rows;
      const uint32_t rc = t_.h - h0 < t_.rows ? t_.h - h0 : t_.rows;
      Unit(nb, h0, rc);
    }
  }

 private:
  static constexpr uint32_t kC0 = 32 / sizeof(T);

  __aicore__ inline void Unit(uint32_t nb, uint32_t h0, uint32_t rc) {
    LocalTensor<T> buf = buf_.Get<T>();
    // MTE2 must not overwrite the row buffer while the previous unit's Gather reads it.
    SyncVToMte2();
    if (t_.x_cl) {
      const uint32_t len = t_.w * t_.c;
      const uint32_t gap = (t_.row_pitch - AlignUp32(len)) / kC0;
      DataCopyPad(buf[t_.lead], xGm_[(uint64_t(nb) * t_.h + h0) * len],
                  DataCopyExtParams(uint16_t(rc), len * uint32_t(sizeof(T)), 0, gap, 0),
                  DataCopyPadExtParams<T>(true, 0, uint8_t(AlignUp32(len) - len), T(0)));
    } else {
      const uint32_t gap = (t_.row_pitch - AlignUp32(t_.w)) / kC0;
      for (uint32_t c = 0; c < t_.c; ++c)
        DataCopyPad(buf[c * t_.rows * t_.row_pitch + t_.lead], xGm_[((uint64_t(nb) * t_.c + c) * t_.h + h0) * t_.w],
                    DataCopyExtParams(uint16_t(rc), t_.w * uint32_t(sizeof(T)), 0, gap, 0),
                    DataCopyPadExtParams<T>(true, 0, uint8_t(AlignUp32(t_.w) - t_.w), T(0)));
    }
    SyncMte2ToV();
    LocalTensor<T> out = outQ_.template AllocTensor<T>();
    // Row r of plane c1: the table's plane c1 from r row pitches into the buffer (NCHW: the rows of
    // one channel are row_pitch apart; NHWC: the pixel rows).
    const uint32_t row_len = t_.wo * kC0;
    const LocalTensor<uint32_t> off = off_.Get<uint32_t>();
    for (uint32_t c1 = 0; c1 < t_.c1; ++c1)
      for (uint32_t r = 0; r < rc; ++r)
        Gather(out[(c1 * t_.rows + r) * row_len], buf, off[c1 * row_len], uint32_t(r * t_.row_pitch * sizeof(T)),
               row_len);
    outQ_.EnQue(out);
    out = outQ_.template DeQue<T>();
    // One block of rc * wo pixels (32 B each) per C1 plane.
    const uint64_t plane = uint64_t(t_.h) * t_.wo * kC0;
    DataCopy(yGm_[uint64_t(nb) * t_.c1 * plane + uint64_t(h0) * t_.wo * kC0], out,
             DataCopyParams(uint16_t(t_.c1), uint16_t(rc * t_.wo), uint16_t((t_.rows - rc) * t_.wo),
                            uint16_t((t_.h - rc) * t_.wo)));
    outQ_.FreeTensor(out);
  }

  __aicore__ inline uint32_t AlignUp32(uint32_t elems) const { return (elems + kC0 - 1) / kC0 * kC0; }

  ConvFoldTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> buf_, off_;
  TQue<TPosition::VECOUT, 1> outQ_;
  GlobalTensor<T> xGm_, yGm_;
  GlobalTensor<uint32_t> offGm_;
};

template <typename T>
__aicore__ inline void RunConvFold(GM_ADDR x, GM_ADDR offsets, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(ConvFoldTiling, t, tiling);
  ConvFoldKernel<T> op;
  op.Init(x, offsets, y, t);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void conv_fold_kernel_float(GM_ADDR x, GM_ADDR offsets, GM_ADDR y, GM_ADDR tiling) {
  RunConvFold<float>(x, offsets, y, tiling);
}
extern "C" __global__ __aicore__ void conv_fold_kernel_half(GM_ADDR x, GM_ADDR offsets, GM_ADDR y, GM_ADDR tiling) {
  RunConvFold<half>(x, offsets, y, tiling);
}
extern "C" __global__ __aicore__ void conv_fold_kernel_bf16(GM_ADDR x, GM_ADDR offsets, GM_ADDR y, GM_ADDR tiling) {
  RunConvFold<bfloat16_t>(x, offsets, y, tiling);
}

// Kernel-side helper shared by the index kernels (index_select, embedding_backward): an int32 or int64
// index vector in GM read through UB in chunks, reloaded when a position leaves the loaded chunk.
// Ascend C only (kernel_operator.h).
#pragma once
#include <cstdint>

#include "kernel_operator.h"
#include "norm_util.h"

namespace nn_kernels {

class IndexReader {
 public:
  __aicore__ inline void Init(AscendC::TPipe& pipe, GM_ADDR index, uint64_t n, bool idx64, uint32_t chunk) {
    n_ = n;
    idx64_ = idx64;
    chunk_ = chunk;
    i32_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(index), n);
    i64_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(index), n);
    pipe.InitBuffer(buf_, chunk * 8);
  }

  // index[k], k < n.
  __aicore__ inline int64_t operator()(uint64_t k) {
    using namespace AscendC;
    if (!have_ || k < k0_ || k >= k0_ + chunk_) {
      k0_ = k;
      const uint64_t cnt = n_ - k < chunk_ ? n_ - k : chunk_;
      SyncSToMte2();
      if (idx64_)
        DataCopyPad(buf_.Get<int64_t>(), i64_[k], DataCopyExtParams(1, uint32_t(cnt * 8), 0, 0, 0),
                    DataCopyPadExtParams<int64_t>(false, 0, 0, 0));
      else
        DataCopyPad(buf_.Get<int32_t>(), i32_[k], DataCopyExtParams(1, uint32_t(cnt * 4), 0, 0, 0),
                    DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
      SyncMte2ToS();
      have_ = true;
    }
    const uint32_t j = uint32_t(k - k0_);
    return idx64_ ? buf_.Get<int64_t>().GetValue(j) : int64_t(buf_.Get<int32_t>().GetValue(j));
  }

 private:
  AscendC::TBuf<AscendC::TPosition::VECCALC> buf_;
  AscendC::GlobalTensor<int32_t> i32_;
  AscendC::GlobalTensor<int64_t> i64_;
  uint64_t n_ = 0, k0_ = 0;
  uint32_t chunk_ = 0;
  bool idx64_ = false, have_ = false;
};

}  // namespace nn_kernels

// Device-side strided copy with dtype conversion: the runtime operation behind copy_ between npu
// tensors of any layout and dtype, and fill_ (a copy from one element with all strides 0).
#pragma once
#include <cstddef>
#include <cstdint>

namespace npu_rt {

enum class DType : uint8_t { Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64, Complex64, Complex128 };
size_t DTypeSize(DType t);
const char* DTypeName(DType t);

constexpr int kMaxDims = 16;

struct StridedView {
  char* data = nullptr;
  DType dtype = DType::Float32;
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};  // in elements; 0 broadcasts
};

// dst[i] = cast(src[i]) over dst's sizes (src has the same sizes). Dims are coalesced and large
// copies split over the host thread pool. Complex <-> real casts throw std::invalid_argument.
void StridedCopy(const StridedView& dst, const StridedView& src);

}  // namespace npu_rt

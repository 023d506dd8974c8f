// DataCopy and DataCopyPad between GM and local memories (shared/ascendc.md §3.1, §3.2).
// The templates only marshal operands; checks and copies live in ascendc_data_copy.cpp.
#pragma once
#include <cstdint>

#include "kernel_tensor.h"

namespace ascendc_host {
void CopyG2L(const LocalOperand& dst, const GlobalOperand& src, uint32_t esz, uint32_t count);
void CopyG2L(const LocalOperand& dst, const GlobalOperand& src, uint32_t esz, const AscendC::DataCopyParams& p);
void CopyL2G(const GlobalOperand& dst, const LocalOperand& src, uint32_t esz, uint32_t count);
void CopyL2G(const GlobalOperand& dst, const LocalOperand& src, uint32_t esz, const AscendC::DataCopyParams& p);
void CopyL2L(const LocalOperand& dst, const LocalOperand& src, uint32_t esz, uint32_t count);
void CopyL2L(const LocalOperand& dst, const LocalOperand& src, uint32_t esz, const AscendC::DataCopyParams& p);
// blockLen in bytes; strides: GM side bytes, UB side 32 B blocks. pad_bits: the pad value's bytes.
void CopyPadG2L(const LocalOperand& dst, const GlobalOperand& src, uint32_t esz, uint32_t block_count,
                uint32_t block_len, uint32_t src_stride, uint32_t dst_stride, bool is_pad, uint32_t left,
                uint32_t right, uint64_t pad_bits, const char* instr);
void CopyPadL2G(const GlobalOperand& dst, const LocalOperand& src, uint32_t esz, uint32_t block_count,
                uint32_t block_len, uint32_t src_stride, uint32_t dst_stride, const char* instr);
template <typename T>
inline uint64_t ValueBits(const T& v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T) < 8 ? sizeof(T) : 8);
  return b;
}
}  // namespace ascendc_host

namespace AscendC {

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
  ascendc_host::CopyG2L(dst.Operand(), src.Operand(), sizeof(T), count);
}
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  ascendc_host::CopyL2G(dst.Operand(), src.Operand(), sizeof(T), count);
}
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  ascendc_host::CopyL2L(dst.Operand(), src.Operand(), sizeof(T), count);
}
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
  ascendc_host::CopyG2L(dst.Operand(), src.Operand(), sizeof(T), p);
}
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  ascendc_host::CopyL2G(dst.Operand(), src.Operand(), sizeof(T), p);
}
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  ascendc_host::CopyL2L(dst.Operand(), src.Operand(), sizeof(T), p);
}

template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad) {
  ascendc_host::CopyPadG2L(dst.Operand(), src.Operand(), sizeof(T), p.blockCount, p.blockLen, p.srcStride,
                           p.dstStride, pad.isPad, pad.leftPadding, pad.rightPadding,
                           ascendc_host::ValueBits(pad.paddingValue), "DataCopyPad");
}
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
  ascendc_host::CopyPadL2G(dst.Operand(), src.Operand(), sizeof(T), p.blockCount, p.blockLen, p.srcStride,
                           p.dstStride, "DataCopyPad");
}
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                        const DataCopyPadParams& pad) {
  ascendc_host::CopyPadG2L(dst.Operand(), src.Operand(), sizeof(T), p.blockCount, p.blockLen, p.srcGap, p.dstGap,
                           pad.isPad, pad.leftPadding, pad.rightPadding, pad.paddingValue, "DataCopyPad");
}
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  ascendc_host::CopyPadL2G(dst.Operand(), src.Operand(), sizeof(T), p.blockCount, p.blockLen, p.srcGap, p.dstGap,
                           "DataCopyPad");
}

// Value used for the padding of DataCopyPad when isPad is false.
template <typename T>
inline void SetPadValue(T value) {
  auto& c = ascendc_host::CurrentCore();
  c.pad_value = ascendc_host::ValueBits(value);
  c.pad_value_set = true;
}

}  // namespace AscendC

// GlobalTensor<T> and LocalTensor<T> (shared/ascendc.md §2.3, §2.4).
// A LocalTensor is a pointer into the current core's pool + element count + logical position.
#pragma once
#include <cstdint>

#include "ascendc_core_state.h"

namespace ascendc_host {
[[noreturn]] void FailLocalIndex(const char* what, uint64_t index, uint64_t size, AscendC::TPosition pos);
[[noreturn]] void FailScalarPosition(const char* what, AscendC::TPosition pos);
[[noreturn]] void FailGlobalIndex(const char* what, uint64_t index, uint64_t size);
void CheckExplicitLocal(AscendC::TPosition pos, uint32_t addr, uint64_t bytes);
void CheckSetSize(const void* ptr, AscendC::TPosition pos, uint64_t bytes);

inline bool IsVecPosition(AscendC::TPosition p) {
  return p == AscendC::TPosition::VECIN || p == AscendC::TPosition::VECOUT || p == AscendC::TPosition::VECCALC;
}
}  // namespace ascendc_host

namespace AscendC {

// L2 cache hint of a GlobalTensor (SetL2CacheHint). The host model gives CACHE_MODE_DISABLE its
// host meaning: Fixpipe and DataCopy / DataCopyPad to GM write such a destination with streaming
// (non-temporal) stores, which do not read the lines first nor evict what the next instructions need.
enum class CacheMode : uint8_t { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1 };
enum CacheRwMode { READ = 1, WRITE = 2, RW = 3 };

template <typename T>
class GlobalTensor {
 public:
  using PrimType = T;
  GlobalTensor() = default;
  void SetGlobalBuffer(T* buffer, uint64_t bufferSize) { ptr_ = buffer; size_ = bufferSize; }
  void SetGlobalBuffer(T* buffer) { ptr_ = buffer; size_ = 0; }
  GlobalTensor operator[](uint64_t offset) const {
    GlobalTensor r;
    r.ptr_ = ptr_ + offset;
    r.cache_ = cache_;
    if (size_ != 0) {
      if (offset > size_) {
        if (ascendc_host::CurrentCore().cfg.bounds_check)
          ascendc_host::FailGlobalIndex("GlobalTensor::operator[]", offset, size_);
        r.size_ = 0;
      } else {
        r.size_ = size_ - offset;
      }
    }
    return r;
  }
  // Scalar accesses: inlined into the kernels' loops whatever their size (the checks' failure paths
  // stay out of line), so a scalar loop is loads and compares, not calls.
  [[gnu::always_inline]] T GetValue(uint64_t offset) const { Check("GlobalTensor::GetValue", offset); return ptr_[offset]; }
  [[gnu::always_inline]] T& operator()(uint64_t offset) const {
    Check("GlobalTensor::operator()", offset);
    return ptr_[offset];
  }
  template <typename U>
  [[gnu::always_inline]] void SetValue(uint64_t offset, U value) const {
    Check("GlobalTensor::SetValue", offset);
    ptr_[offset] = T(value);
  }
  uint64_t GetSize() const { return size_; }
  T* GetPhyAddr() const { return ptr_; }
  T* GetPhyAddr(uint64_t offset) const { return ptr_ + offset; }
  template <typename U>
  GlobalTensor<U> ReinterpretCast() const {
    GlobalTensor<U> r;
    r.SetGlobalBuffer(reinterpret_cast<U*>(ptr_), size_ * sizeof(T) / sizeof(U));
    r.template SetL2CacheHint<RW>(cache_);
    return r;
  }
  template <CacheRwMode rwMode = RW>
  void SetL2CacheHint(CacheMode mode) { cache_ = mode; }
  void SetShapeInfo(...) {}

  ascendc_host::GlobalOperand Operand() const {
    return {reinterpret_cast<uint8_t*>(ptr_), size_ * sizeof(T), cache_ == CacheMode::CACHE_MODE_DISABLE};
  }

 private:
  [[gnu::always_inline]] void Check(const char* what, uint64_t offset) const {
    if (__builtin_expect(offset >= size_, 0) && size_ != 0) CheckFailed(what, offset);
  }
  [[gnu::noinline, gnu::cold]] void CheckFailed(const char* what, uint64_t offset) const {
    if (ascendc_host::CurrentCore().cfg.bounds_check) ascendc_host::FailGlobalIndex(what, offset, size_);
  }
  T* ptr_ = nullptr;
  uint64_t size_ = 0;  // elements; 0 = unknown (not checked)
  CacheMode cache_ = CacheMode::CACHE_MODE_NORMAL;
};

template <typename T>
class LocalTensor;

namespace detail {
enum class ExprOp : uint8_t { Add, Sub, Mul, Div, Max, Min, And, Or };
template <typename T>
struct BinaryExpr {
  ExprOp op;
  const LocalTensor<T>& a;
  const LocalTensor<T>& b;
};
template <typename T>
void EvalExpr(const LocalTensor<T>& dst, const BinaryExpr<T>& e);  // defined in kernel_vec.h
}  // namespace detail

template <typename T>
class LocalTensor {
 public:
  using PrimType = T;
  LocalTensor() = default;
  // A tensor at byte address `addr` of the physical buffer behind `pos`, `tileSize` elements long.
  LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize) : size_(tileSize), pos_(pos) {
    ascendc_host::CheckExplicitLocal(pos, addr, uint64_t(tileSize) * sizeof(T));
    ptr_ = reinterpret_cast<T*>(ascendc_host::CurrentCore().PoolBase(pos) + addr);
  }
  // Internal: used by queues and buffers.
  LocalTensor(T* ptr, uint32_t size, TPosition pos) : ptr_(ptr), size_(size), pos_(pos) {}

  LocalTensor operator[](uint32_t offset) const {
    if (__builtin_expect(offset > size_, 0))
      ascendc_host::FailLocalIndex("LocalTensor::operator[] offset", offset, size_, pos_);
    return LocalTensor(ptr_ + offset, size_ - offset, pos_);
  }
  [[gnu::always_inline]] T GetValue(uint32_t i) const { CheckScalar("LocalTensor::GetValue", i); return ptr_[i]; }
  [[gnu::always_inline]] T& operator()(uint32_t i) const { CheckScalar("LocalTensor::operator()", i); return ptr_[i]; }
  template <typename U>
  [[gnu::always_inline]] void SetValue(uint32_t i, U value) const {
    CheckScalar("LocalTensor::SetValue", i);
    ptr_[i] = T(value);
  }

  uint32_t GetSize() const { return size_; }
  void SetSize(uint32_t size) {
    ascendc_host::CheckSetSize(ptr_, pos_, uint64_t(size) * sizeof(T));
    size_ = size;
  }
  uint32_t GetLength() const { return size_ * sizeof(T); }  // bytes (deprecated API)
  int32_t GetPosition() const { return int32_t(pos_); }
  TPosition GetTPosition() const { return pos_; }
  uint64_t GetPhyAddr() const {
    return uint64_t(reinterpret_cast<const uint8_t*>(ptr_) - ascendc_host::CurrentCore().PoolBase(pos_));
  }
  template <typename U>
  LocalTensor<U> ReinterpretCast() const {
    return LocalTensor<U>(reinterpret_cast<U*>(ptr_), uint32_t(uint64_t(size_) * sizeof(T) / sizeof(U)), pos_);
  }
  // Host-model extension: the element pointer (for the instruction implementations and tests).
  T* HostPtr() const { return ptr_; }
  ascendc_host::LocalOperand Operand() const {
    return {reinterpret_cast<uint8_t*>(ptr_), uint64_t(size_) * sizeof(T), pos_};
  }

  // dst = a + b etc. process dst.GetSize() elements (count form).
  LocalTensor& operator=(const detail::BinaryExpr<T>& e) { detail::EvalExpr(*this, e); return *this; }
  LocalTensor(const LocalTensor&) = default;
  LocalTensor& operator=(const LocalTensor&) = default;

 private:
  [[gnu::always_inline]] void CheckScalar(const char* what, uint32_t i) const {
    if (__builtin_expect(!ascendc_host::IsVecPosition(pos_) || i >= size_, 0)) CheckScalarFailed(what, i);
  }
  [[gnu::noinline, gnu::cold]] void CheckScalarFailed(const char* what, uint32_t i) const {
    if (!ascendc_host::IsVecPosition(pos_)) ascendc_host::FailScalarPosition(what, pos_);
    if (ascendc_host::CurrentCore().cfg.bounds_check) ascendc_host::FailLocalIndex(what, i, size_, pos_);
  }
  T* ptr_ = nullptr;
  uint32_t size_ = 0;
  TPosition pos_ = TPosition::VECCALC;
};

template <typename T>
detail::BinaryExpr<T> operator+(const LocalTensor<T>& a, const LocalTensor<T>& b) { return {detail::ExprOp::Add, a, b}; }
template <typename T>
detail::BinaryExpr<T> operator-(const LocalTensor<T>& a, const LocalTensor<T>& b) { return {detail::ExprOp::Sub, a, b}; }
template <typename T>
detail::BinaryExpr<T> operator*(const LocalTensor<T>& a, const LocalTensor<T>& b) { return {detail::ExprOp::Mul, a, b}; }
template <typename T>
detail::BinaryExpr<T> operator/(const LocalTensor<T>& a, const LocalTensor<T>& b) { return {detail::ExprOp::Div, a, b}; }
template <typename T>
detail::BinaryExpr<T> operator|(const LocalTensor<T>& a, const LocalTensor<T>& b) { return {detail::ExprOp::Or, a, b}; }
template <typename T>
detail::BinaryExpr<T> operator&(const LocalTensor<T>& a, const LocalTensor<T>& b) { return {detail::ExprOp::And, a, b}; }

}  // namespace AscendC

namespace ascendc_host {
template <typename T>
inline LocalOperand Operand(const AscendC::LocalTensor<T>& t) { return t.Operand(); }
template <typename T>
inline GlobalOperand Operand(const AscendC::GlobalTensor<T>& t) { return t.Operand(); }
}  // namespace ascendc_host

// What must be unchanged for something derived from a tensor (a re-laid-out copy, a fold) to stay
// valid: the same live TensorImpl (a freed tensor's address can be reused), its version counter
// (every in-place write PyTorch counts), its storage, shape, strides and dtype. Holds only a weak
// reference, so a cache of stamped values never keeps a freed tensor alive.
// Inference tensors have no version counter: they cannot be stamped (Stampable() is false).
// Writes through `.data` use a separate version counter and are not seen.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/util/intrusive_ptr.h>

#include <optional>
#include <vector>

namespace torch_ops_nn {

class TensorStamp {
 public:
  TensorStamp() = default;  // stamps "no tensor"
  explicit TensorStamp(const at::Tensor& t)
      : ref_(std::in_place, t.getIntrusivePtr()), version_(t._version()), data_(t.data_ptr()),
        sizes_(t.sizes().vec()), strides_(t.strides().vec()), dtype_(t.scalar_type()) {}

  static bool Stampable(const at::Tensor& t) { return t.defined() && !t.is_inference(); }

  // True when `t` is the stamped tensor, unchanged (t == nullptr matches an empty stamp).
  bool Matches(const at::Tensor* t) const {
    if (!t) return !ref_;
    return ref_ && ref_->lock().get() == t->unsafeGetTensorImpl() && version_ == t->_version() &&
           data_ == t->data_ptr() && dtype_ == t->scalar_type() && c10::IntArrayRef(sizes_) == t->sizes() &&
           c10::IntArrayRef(strides_) == t->strides();
  }
  // The stamped tensor no longer exists (an empty stamp never expires).
  bool Expired() const { return ref_ && ref_->expired(); }

 private:
  std::optional<c10::weak_intrusive_ptr<c10::TensorImpl>> ref_;
  uint32_t version_ = 0;
  const void* data_ = nullptr;
  std::vector<int64_t> sizes_, strides_;
  c10::ScalarType dtype_ = c10::kFloat;
};

}  // namespace torch_ops_nn

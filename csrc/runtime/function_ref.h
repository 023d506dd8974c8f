// A non-owning reference to a callable, for calls that run the callable before they return (a
// kernel's blocks, a block's body, a ParallelFor's iterations). Unlike std::function it never
// allocates: a launch passes its lambdas down by address instead of copying their captures (the
// tiling, the core configuration, the operand pointers) onto the heap once per launch and per block.
#pragma once
#include <type_traits>
#include <utility>

namespace npu_rt {

template <class Sig>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                               std::is_invocable_r_v<R, const F&, Args...>>>
  FunctionRef(const F& f) noexcept  // NOLINT: implicit, as std::function's
      : obj_(static_cast<const void*>(&f)),
        call_([](const void* obj, Args... args) -> R {
          return (*static_cast<const F*>(obj))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }

 private:
  const void* obj_;
  R (*call_)(const void*, Args...);
};

}  // namespace npu_rt

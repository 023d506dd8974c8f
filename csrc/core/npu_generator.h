// The npu random generator: a seed and a Philox counter offset. Random kernels take
// (seed, offset) from philox_seed_offset and advance the offset by the numbers they draw, so
// results do not depend on how the work is split over AI cores or host threads.
#pragma once
#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include <mutex>
#include <utility>

namespace torch_ops_nn {

struct NpuGeneratorImpl : public c10::GeneratorImpl {
  explicit NpuGeneratorImpl(c10::DeviceIndex index);
  void set_current_seed(uint64_t seed) override;
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  // Reserves `increment` random numbers; returns (seed, first offset).
  std::pair<uint64_t, uint64_t> philox_seed_offset(uint64_t increment);
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

 private:
  NpuGeneratorImpl* clone_impl() const override;
  uint64_t seed_ = 67280421310721ull;
  uint64_t offset_ = 0;
};

const at::Generator& DefaultNpuGenerator(c10::DeviceIndex index);
void RegisterNpuHooks();

}  // namespace torch_ops_nn

// Bounded spin-waiting for the runtime's threads (stream executors, pool workers, synchronizing callers).
//
// The simulated NPU runs on the host's cores next to the Python thread that feeds it: on a 2-core machine
// the Python thread, a stream executor and a pool worker are three threads on two cores. A waiter that
// spins on PAUSE keeps its core from a thread with real work (the pool's compute, the Python dispatch of the
// next op): a synchronize() after a 60 us layer_norm spun for 68 us (2000 PAUSEs of ~34 ns on this AMD
// host) while the kernel's two blocks shared the other core, and the op took 150 us instead of ~70.
// So a waiter PAUSEs only briefly (a wake-up after a tiny op is then immediate), then spins on
// sched_yield, which returns at once when its core has nothing else to run and hands the core over when it
// has; after `budget_us` it gives up and the caller sleeps on its condition variable.
#pragma once
#include <chrono>
#include <cstdlib>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#define NPU_RT_PAUSE() _mm_pause()
#else
#define NPU_RT_PAUSE() std::this_thread::yield()
#endif

namespace npu_rt {

// How long an idle executor, worker or synchronizing caller spins before it sleeps: 100 us, or
// TORCH_OPS_NN_SPIN_US (0 sleeps at once: the least CPU, the slowest wake-ups).
inline int SpinBudgetUs() {
  static const int us = [] {
    const char* v = std::getenv("TORCH_OPS_NN_SPIN_US");
    return v && *v ? std::atoi(v) : 100;
  }();
  return us;
}

// Spins until done() holds or budget_us microseconds have passed; returns done()'s last value.
template <class Done>
inline bool SpinUntil(Done&& done, int budget_us) {
  for (int i = 0; i < 64; ++i) {
    if (done()) return true;
    NPU_RT_PAUSE();
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(budget_us);
  for (;;) {
    for (int i = 0; i < 4; ++i) {
      if (done()) return true;
      std::this_thread::yield();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

}  // namespace npu_rt

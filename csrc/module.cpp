// torch_ops_nn._C: the Python bindings of layers 3-5 (device, memory, streams, RNG, counters,
// logging, build info). Everything user-facing is shaped in Python (torch_ops_nn/).
#include <torch/extension.h>
#include <torch/csrc/Generator.h>

#include <Python.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "ascendc/cube_gemm.h"
#include "ascendc/host_launch.h"
#include "aten/fused_conv.h"
#include "aten/matmul_ops.h"
#include "aten/kernel_launch.h"
#include "core/cpu_fallback.h"
#include "core/npu_allocator.h"
#include "core/npu_context.h"
#include "core/npu_generator.h"
#include "core/sync_debug.h"
#include "runtime/log.h"
#include "runtime/runtime.h"
#include "runtime/thread_pool.h"

namespace torch_ops_nn {
void ClearConvWeightCache();  // aten/conv.cpp
void ClearMatmulWeightCache();  // aten/matmul.cpp
}
namespace py = pybind11;
using namespace torch_ops_nn;

namespace {

PyObject* g_log_callback = nullptr;  // torch_ops_nn._logging.emit(level, msg)

void PythonLogSink(int level, const std::string& msg) {
  if (!g_log_callback || !Py_IsInitialized()) return;
  PyGILState_STATE st = PyGILState_Ensure();
  PyObject* r = PyObject_CallFunction(g_log_callback, "is", level, msg.c_str());
  if (!r) PyErr_Clear();
  Py_XDECREF(r);
  PyGILState_Release(st);
}

py::dict StatsDict(int device) {
  npu_rt::MemoryStats s;
  NPU_RT_CALL(s = npu_rt::MemoryPool(device).Stats());
  py::dict d;
  const char* pools[] = {"all", "small_pool", "large_pool"};
  auto put = [&](const char* name, const npu_rt::StatCounter* arr) {
    for (int i = 0; i < npu_rt::kNumPoolStats; ++i) {
      std::string base = std::string(name) + "." + pools[i] + ".";
      d[py::str(base + "current")] = arr[i].current;
      d[py::str(base + "peak")] = arr[i].peak;
      d[py::str(base + "allocated")] = arr[i].allocated;
      d[py::str(base + "freed")] = arr[i].freed;
    }
  };
  put("allocation", s.allocation);
  put("segment", s.segment);
  put("active", s.active);
  put("inactive_split", s.inactive_split);
  put("allocated_bytes", s.allocated_bytes);
  put("reserved_bytes", s.reserved_bytes);
  put("active_bytes", s.active_bytes);
  put("inactive_split_bytes", s.inactive_split_bytes);
  put("requested_bytes", s.requested_bytes);
  d["num_alloc_retries"] = s.num_alloc_retries;
  d["num_ooms"] = s.num_ooms;
  d["num_device_alloc"] = s.num_device_alloc;
  d["num_device_free"] = s.num_device_free;
  return d;
}

// torch.npu.memory_snapshot(): segments shaped like torch.cuda.memory_snapshot()'s.
py::list SnapshotList(int device) {
  std::vector<npu_rt::SegmentSnapshot> segs;
  NPU_RT_CALL(segs = npu_rt::MemoryPool(device).Snapshot());
  static const char* states[] = {"inactive", "active_allocated", "active_pending_free"};
  py::list out;
  for (const auto& seg : segs) {
    py::dict d;
    uint64_t allocated = 0, active = 0, requested = 0;
    py::list blocks;
    for (const auto& b : seg.blocks) {
      py::dict bd;
      bd["address"] = b.address;
      bd["size"] = b.size;
      bd["requested_size"] = b.requested;
      bd["state"] = states[b.state];
      bd["frames"] = py::list();
      blocks.append(bd);
      if (b.state == npu_rt::BlockSnapshot::kActiveAllocated) allocated += b.size;
      if (b.state != npu_rt::BlockSnapshot::kInactive) active += b.size, requested += b.requested;
    }
    d["device"] = device;
    d["address"] = seg.address;
    d["total_size"] = seg.size;
    d["allocated_size"] = allocated;
    d["active_size"] = active;
    d["requested_size"] = requested;
    d["stream"] = seg.stream;
    d["segment_type"] = seg.small ? "small" : "large";
    d["segment_pool_id"] = py::make_tuple(0, 0);
    d["is_expandable"] = false;
    d["frames"] = py::list();
    d["blocks"] = blocks;
    out.append(d);
  }
  return out;
}

// torch.npu.memory._snapshot()'s device_traces entry for one device: the allocator's recorded events.
py::list HistoryList(int device) {
  std::vector<npu_rt::TraceEntry> events;
  NPU_RT_CALL(events = npu_rt::MemoryPool(device).History());
  static const char* actions[] = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom"};
  py::list out;
  for (const auto& e : events) {
    py::dict d;
    d["action"] = actions[e.action];
    d["addr"] = e.address;
    d["size"] = e.size;
    d["stream"] = e.stream;
    d["time_us"] = e.time_us;
    d["frames"] = py::list();
    if (e.action == npu_rt::TraceEntry::kOom) d["device_free"] = 0;
    out.append(d);
  }
  return out;
}

py::dict DeviceProperties(int device) {
  const npu_rt::DeviceInfo* info = nullptr;
  NPU_RT_CALL(info = &npu_rt::GetDeviceInfo(device));
  const auto& s = *info->soc;
  py::dict d;
  d["name"] = s.name;
  d["soc_name"] = s.name;
  d["npu_arch"] = s.npu_arch;
  d["cube_core_num"] = s.cube_cores;
  d["vector_core_num"] = s.vector_cores;
  d["ub_size"] = s.ub_bytes;
  d["l1_size"] = s.l1_bytes;
  d["l0a_size"] = s.l0a_bytes;
  d["l0b_size"] = s.l0b_bytes;
  d["l0c_size"] = s.l0c_bytes;
  d["bt_size"] = s.bt_bytes;
  d["fb_size"] = s.fb_bytes;
  d["total_memory"] = info->capacity_bytes;
  d["hbm_size"] = s.hbm_bytes;
  d["hbm_bandwidth_gbps"] = s.hbm_gbps;
  d["cube_fp16_tflops"] = s.cube_fp16_tflops;
  d["clock_ghz"] = s.clock_ghz;
  d["figures_verified"] = s.figures_verified;
  d["physical_id"] = info->physical_id;
  return d;
}

std::string CpuSimdLevel() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
  return "sse2";
#elif defined(__aarch64__)
  return "neon";
#else
  return "scalar";
#endif
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  RegisterNpuHooks();
  m.doc() = "torch_ops_nn native core: simulated Ascend NPU runtime and Ascend C kernels";

  // Devices.
  m.def("_config_error", &npu_rt::ConfigError);
  m.def("_device_count", [] { return static_cast<int>(DeviceCount()); });
  m.def("_current_device", [] { return static_cast<int>(CurrentDevice()); });
  m.def("_set_device", [](int d) { SetCurrentDevice(static_cast<c10::DeviceIndex>(d)); });
  m.def("_device_properties", &DeviceProperties);
  m.def("_is_in_bad_fork", &npu_rt::InBadFork);
  m.def("_synchronize", [](int d) {
    py::gil_scoped_release no_gil;
    NPU_RT_CALL(npu_rt::DeviceSynchronize(d < 0 ? CurrentDevice() : d));
  });

  // Graphs (torch.npu.NPUGraph): capture the current stream's work, replay it.
  py::class_<npu_rt::CapturedGraph>(m, "_NPUGraph")
      .def(py::init<>())
      .def("capture_begin", [](npu_rt::CapturedGraph& g, uint64_t pool) {
        NPU_RT_CALL(g.CaptureBegin(CurrentRuntimeStream(), pool));
      })
      .def("capture_end", [](npu_rt::CapturedGraph& g) { NPU_RT_CALL(g.CaptureEnd()); })
      .def("replay", [](npu_rt::CapturedGraph& g) { NPU_RT_CALL(g.Replay(CurrentRuntimeStream())); })
      .def("reset", [](npu_rt::CapturedGraph& g) {
        py::gil_scoped_release no_gil;  // waits for replays in flight
        NPU_RT_CALL(g.Reset());
      })
      .def("capturing", &npu_rt::CapturedGraph::capturing)
      .def("captured", &npu_rt::CapturedGraph::captured)
      .def("pool", &npu_rt::CapturedGraph::pool)
      .def("num_nodes", &npu_rt::CapturedGraph::num_nodes)
      .def("describe", &npu_rt::CapturedGraph::Describe);
  m.def("_graph_pool_handle", &npu_rt::NewGraphPoolId);
  m.def("_is_current_stream_capturing", [] {
    bool on = false;
    NPU_RT_CALL(on = CurrentRuntimeStream().capturing());
    return on;
  });

  // Memory.
  m.def("_memory_stats", &StatsDict);
  m.def("_reset_peak_memory_stats", [](int d) { NPU_RT_CALL(npu_rt::MemoryPool(d).ResetPeakStats()); });
  m.def("_reset_accumulated_memory_stats", [](int d) { NPU_RT_CALL(npu_rt::MemoryPool(d).ResetAccumulatedStats()); });
  m.def("_empty_cache", [] {
    ClearFoldCache();  // cached BN folds of conv_bn_act hold device memory
    ClearConvWeightCache();  // so do cached channels_last conv weights (aten/conv.cpp)
    ClearMatmulWeightCache();  // and packed Linear weights (aten/matmul.cpp)
    py::gil_scoped_release no_gil;
    GetNpuAllocator()->emptyCache({0, 0});
  });
  m.def("_memory_snapshot", &SnapshotList);
  m.def("_get_sync_debug_mode", [] { return static_cast<int>(torch_ops_nn::GetSyncDebugMode()); });
  m.def("_set_sync_debug_mode", &torch_ops_nn::SetSyncDebugMode);
  m.def("_memory_history", &HistoryList);
  m.def("_set_memory_history", [](int d, bool record, size_t max_entries) {
    NPU_RT_CALL(npu_rt::MemoryPool(d).SetHistory(record, max_entries));
  });
  m.def("_mem_get_info", [](int d) { return GetNpuAllocator()->getMemoryInfo(static_cast<c10::DeviceIndex>(d)); });
  m.def("_set_memory_fraction", [](double f, int d) { NPU_RT_CALL(npu_rt::MemoryPool(d).SetFraction(f)); });
  m.def("_get_memory_fraction", [](int d) {
    double f = 1.0;
    NPU_RT_CALL(f = npu_rt::MemoryPool(d).fraction());
    return f;
  });

  // RNG.
  m.def("_default_generator", [](int d) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(DefaultNpuGenerator(static_cast<c10::DeviceIndex>(d))));
  });

  // Fallback, counters, logging, build.
  m.def("_conv_epilogue", &ConvEpilogueOp, "conv2d with a fused epilogue (the npu kernel of conv_bn_act)",
        py::arg("x"), py::arg("w"), py::arg("bias"), py::arg("scale"), py::arg("shift"), py::arg("residual"),
        py::arg("stride"), py::arg("padding"), py::arg("dilation"), py::arg("groups"), py::arg("activation"));
  m.def("_conv_allow_hf32", &torch_ops_nn::ConvAllowHf32);
  m.def("_set_conv_allow_hf32", &torch_ops_nn::SetConvAllowHf32);
  m.def("_fallback_ops", &FallbackOps);
  m.def("_compiled_kernels", &CompiledKernels);
  m.def("_kernel_counters", [] {
    py::dict out;
    for (const auto& [name, c] : ascendc_host::CounterSnapshot()) {
      py::dict d;
      d["launches"] = c.launches;
      d["blocks"] = c.blocks;
      d["gm_to_local_bytes"] = c.gm_to_local_bytes;
      d["local_to_gm_bytes"] = c.local_to_gm_bytes;
      d["vector_elem_ops"] = c.vector_elem_ops;
      d["cube_macs"] = c.cube_macs;
      out[py::str(name)] = d;
    }
    return out;
  });
  m.def("_reset_kernel_counters", &ascendc_host::ResetCounters);
  m.def("_set_log_callback", [](py::object cb) {
    Py_XINCREF(cb.ptr());
    g_log_callback = cb.ptr();
    npu_rt::log::SetSink(&PythonLogSink);
  });
  m.def("_log_level", &npu_rt::log::CurrentLevel);
  m.def("_set_log_level", &npu_rt::log::SetLevel);
  // Test hook: an asynchronous task on the current stream that fails with `message`, to test
  // deferred error reporting independently of any kernel.
  m.def("_test_enqueue_failure", [](const std::string& message) {
    NPU_RT_CALL(CurrentRuntimeStream().Enqueue("test_failing_task", [message] { throw std::runtime_error(message); }));
  });
  m.def("_test_enqueue_sleep", [](double ms) {
    NPU_RT_CALL(CurrentRuntimeStream().Enqueue("test_sleep", [ms] {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
    }));
  });
  m.def("_host_threads", [] { return npu_rt::GlobalThreadPool().size(); });
  m.def("_launch_blocking", &npu_rt::LaunchBlocking);
  m.def("_build_info", [] {
    py::dict d;
    d["compiler"] = std::string("g++ ") + __VERSION__;
    d["cplusplus"] = static_cast<long>(__cplusplus);
#ifdef TORCH_OPS_NN_CXX_FLAGS
    d["flags"] = TORCH_OPS_NN_CXX_FLAGS;
#else
    d["flags"] = "";
#endif
    d["simd"] = CpuSimdLevel();
    d["cube"] = std::string(ascendc_host::cube::CubeGemmIsa());
    d["runtime"] = "simulator";
    return d;
  });
}

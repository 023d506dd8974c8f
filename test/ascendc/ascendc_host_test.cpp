// Test driver for the Ascend C host model (csrc/ascendc). One binary, one case per argv[1]; each case
// prints lines the pytest file asserts on: "PASS <case>" on success, "FAIL <detail>" on a mismatch,
// "ERROR <KernelError::what()>" for the error-rule cases.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "kernel_operator.h"

using namespace AscendC;
using ascendc_host::CoreConfig;
using ascendc_host::CoreType;
using ascendc_host::KernelError;
using ascendc_host::RunBlock;

namespace ascendc_host {
const char* VecIsaName();
}

static int g_fail = 0;
#define EXPECT(cond, ...)                      \
  do {                                         \
    if (!(cond)) {                             \
      std::printf("FAIL %s:%d ", __FILE__, __LINE__); \
      std::printf(__VA_ARGS__);                \
      std::printf("\n");                       \
      ++g_fail;                                \
    }                                          \
  } while (0)

static CoreConfig Cfg(bool bounds = false, int arch = 2201) {
  CoreConfig c;
  c.npu_arch = arch;
  if (arch == 2002) { c.ub_bytes = 256 * 1024; c.l1_bytes = 1024 * 1024; c.l0c_bytes = 256 * 1024; }
  c.bounds_check = bounds;
  return c;
}

static void Run1(const char* name, const std::function<void()>& body, CoreConfig cfg = Cfg(),
                 CoreType type = CoreType::AIV) {
  RunBlock(name, cfg, type, 0, 1, body);
}

static void ExpectError(const char* name, const std::function<void()>& body, CoreConfig cfg = Cfg(),
                        CoreType type = CoreType::AIV) {
  try {
    RunBlock(name, cfg, type, 0, 1, body);
    std::printf("NOERROR %s\n", name);
  } catch (const KernelError& e) {
    std::printf("ERROR %s\n", e.what());
  }
}

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  uint32_t Next() { s = s * 6364136223846793005ull + 1442695040888963407ull; return uint32_t(s >> 33); }
  float Uniform(float lo, float hi) { return lo + (hi - lo) * float(Next() & 0xFFFFFF) / float(0x1000000); }
};

static uint32_t Bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
static int64_t UlpDiff(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (a == b) return 0;
  int64_t ia = int32_t(Bits(a)), ib = int32_t(Bits(b));
  if (ia < 0) ia = int64_t(0x80000000LL) - ia;
  if (ib < 0) ib = int64_t(0x80000000LL) - ib;
  return ia > ib ? ia - ib : ib - ia;
}

// =====================================================================================================
// The classic Add sample: double-buffered TQue pipeline over a tile loop, GetBlockIdx offsets,
// DataCopyPad for the unaligned tail.
struct AddTiling {
  uint32_t total;      // elements
  uint32_t per_block;  // elements per block (last block may get fewer)
  uint32_t tile;       // elements per tile (multiple of 32 B)
};

template <typename T>
class KernelAdd {
 public:
  static constexpr int BUFFER_NUM = 2;
  void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AddTiling& t) {
    tiling_ = t;
    uint64_t start = uint64_t(GetBlockIdx()) * t.per_block;
    len_ = start >= t.total ? 0 : (t.total - start < t.per_block ? t.total - start : t.per_block);
    xGm.SetGlobalBuffer(reinterpret_cast<T*>(x) + start, len_);
    yGm.SetGlobalBuffer(reinterpret_cast<T*>(y) + start, len_);
    zGm.SetGlobalBuffer(reinterpret_cast<T*>(z) + start, len_);
    pipe.InitBuffer(inQueueX, BUFFER_NUM, t.tile * sizeof(T));
    pipe.InitBuffer(inQueueY, BUFFER_NUM, t.tile * sizeof(T));
    pipe.InitBuffer(outQueueZ, BUFFER_NUM, t.tile * sizeof(T));
  }
  void Process() {
    uint32_t tiles = (len_ + tiling_.tile - 1) / tiling_.tile;
    for (uint32_t i = 0; i < tiles; ++i) {
      uint32_t n = len_ - i * tiling_.tile < tiling_.tile ? len_ - i * tiling_.tile : tiling_.tile;
      CopyIn(i, n);
      Compute(n);
      CopyOut(i, n);
    }
  }

 private:
  void CopyIn(uint32_t i, uint32_t n) {
    LocalTensor<T> xL = inQueueX.template AllocTensor<T>();
    LocalTensor<T> yL = inQueueY.template AllocTensor<T>();
    if (n == tiling_.tile) {
      DataCopy(xL, xGm[i * tiling_.tile], n);
      DataCopy(yL, yGm[i * tiling_.tile], n);
    } else {
      DataCopyExtParams p{1, uint32_t(n * sizeof(T)), 0, 0, 0};
      DataCopyPadExtParams<T> pad{false, 0, 0, T(0)};
      DataCopyPad(xL, xGm[i * tiling_.tile], p, pad);
      DataCopyPad(yL, yGm[i * tiling_.tile], p, pad);
    }
    inQueueX.EnQue(xL);
    inQueueY.EnQue(yL);
  }
  void Compute(uint32_t n) {
    LocalTensor<T> xL = inQueueX.template DeQue<T>();
    LocalTensor<T> yL = inQueueY.template DeQue<T>();
    LocalTensor<T> zL = outQueueZ.template AllocTensor<T>();
    Add(zL, xL, yL, n);
    outQueueZ.EnQue<T>(zL);
    inQueueX.FreeTensor(xL);
    inQueueY.FreeTensor(yL);
  }
  void CopyOut(uint32_t i, uint32_t n) {
    LocalTensor<T> zL = outQueueZ.template DeQue<T>();
    if (n == tiling_.tile) {
      DataCopy(zGm[i * tiling_.tile], zL, n);
    } else {
      DataCopyExtParams p{1, uint32_t(n * sizeof(T)), 0, 0, 0};
      DataCopyPad(zGm[i * tiling_.tile], zL, p);
    }
    outQueueZ.FreeTensor(zL);
  }
  TPipe pipe;
  TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
  TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
  GlobalTensor<T> xGm, yGm, zGm;
  AddTiling tiling_;
  uint32_t len_ = 0;
};

template <typename T>
void add_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling) {
  (void)workspace;
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  GET_TILING_DATA_WITH_STRUCT(AddTiling, t, tiling);
  KernelAdd<T> op;
  op.Init(x, y, z, t);
  op.Process();
}

template <typename T>
static void LaunchAdd(const char* name, std::vector<T>& x, std::vector<T>& y, std::vector<T>& z, uint32_t blocks,
                      uint32_t tile, int threads = 1, bool bounds = true) {
  AddTiling t;
  t.total = uint32_t(x.size());
  t.per_block = (t.total + blocks - 1) / blocks;
  t.per_block = (t.per_block + 7) / 8 * 8;  // keep block starts 32 B aligned for float/half
  t.tile = tile;
  CoreConfig cfg = Cfg(bounds);
  ascendc_host::CountLaunch(name);
  auto run_block = [&](uint32_t b) {
    RunBlock(name, cfg, CoreType::AIV, int32_t(b), int32_t(blocks), [&] {
      add_kernel<T>(reinterpret_cast<GM_ADDR>(x.data()), reinterpret_cast<GM_ADDR>(y.data()),
                    reinterpret_cast<GM_ADDR>(z.data()), nullptr, reinterpret_cast<GM_ADDR>(&t));
    });
  };
  if (threads <= 1) {
    for (uint32_t b = 0; b < blocks; ++b) run_block(b);
  } else {
    std::vector<std::thread> th;
    for (int k = 0; k < threads; ++k)
      th.emplace_back([&, k] {
        for (uint32_t b = uint32_t(k); b < blocks; b += uint32_t(threads)) run_block(b);
      });
    for (auto& h : th) h.join();
  }
}

template <typename T>
static void CaseAddPipeline(const char* dtype) {
  const uint32_t sizes[] = {8192, 8200, 1000, 77, 4096 * 3 + 5};
  for (uint32_t n : sizes)
    for (uint32_t blocks : {1u, 3u, 8u}) {
      std::vector<T> x(n), y(n), z(n, T(0));
      Rng r(n * 31 + blocks);
      for (uint32_t i = 0; i < n; ++i) { x[i] = T(r.Uniform(-10, 10)); y[i] = T(r.Uniform(-10, 10)); }
      LaunchAdd<T>("add_kernel", x, y, z, blocks, 256);
      for (uint32_t i = 0; i < n; ++i) {
        T ref = T(float(x[i]) + float(y[i]));
        if (std::memcmp(&ref, &z[i], sizeof(T)) != 0) {
          EXPECT(false, "add %s n=%u blocks=%u i=%u got %g want %g", dtype, n, blocks, i, double(float(z[i])),
                 double(float(ref)));
          break;
        }
      }
    }
}

// Thread-count independence: the same blocks from 1 vs 4 threads, bitwise.
static void CaseThreads() {
  const uint32_t n = 100003;
  std::vector<float> x(n), y(n), z1(n), z4(n);
  Rng r(7);
  for (uint32_t i = 0; i < n; ++i) { x[i] = r.Uniform(-1, 1); y[i] = r.Uniform(-1, 1); }
  LaunchAdd<float>("add_threads", x, y, z1, 16, 512, 1);
  LaunchAdd<float>("add_threads", x, y, z4, 16, 512, 4);
  EXPECT(std::memcmp(z1.data(), z4.data(), n * 4) == 0, "1 vs 4 threads differ");

  // A kernel that reads memory it never wrote: must still be deterministic across threads.
  auto sloppy = [](std::vector<float>& out, int threads) {
    std::vector<std::thread> th;
    for (int k = 0; k < threads; ++k)
      th.emplace_back([&, k] {
        for (int b = k; b < 8; b += threads)
          RunBlock("sloppy", Cfg(), CoreType::AIV, b, 8, [&] {
            TPipe pipe;
            TBuf<TPosition::VECCALC> buf;
            pipe.InitBuffer(buf, 1024 + 256 * b);
            LocalTensor<float> t = buf.Get<float>();
            Adds(t, t, float(b), 64);
            GlobalTensor<float> g;
            g.SetGlobalBuffer(out.data() + b * 64, 64);
            DataCopy(g, t, 64);
          });
      });
    for (auto& h : th) h.join();
  };
  std::vector<float> o1(512), o2(512);
  sloppy(o1, 1);
  sloppy(o2, 2);
  EXPECT(std::memcmp(o1.data(), o2.data(), 512 * 4) == 0, "uninitialised reads depend on the thread");
}

// Counters: bytes moved and element ops of the Add pipeline.
static void CaseCounters() {
  ascendc_host::ResetCounters();
  const uint32_t n = 1000;
  std::vector<float> x(n, 1.f), y(n, 2.f), z(n);
  LaunchAdd<float>("add_counted", x, y, z, 2, 256);
  auto snap = ascendc_host::CounterSnapshot();
  auto it = snap.find("add_counted");
  EXPECT(it != snap.end(), "no counters");
  if (it == snap.end()) return;
  const auto& k = it->second;
  EXPECT(k.launches == 1, "launches %llu", (unsigned long long)k.launches);
  EXPECT(k.blocks == 2, "blocks %llu", (unsigned long long)k.blocks);
  EXPECT(k.gm_to_local_bytes == 2ull * n * 4, "gm_to_local %llu", (unsigned long long)k.gm_to_local_bytes);
  EXPECT(k.local_to_gm_bytes == 1ull * n * 4, "local_to_gm %llu", (unsigned long long)k.local_to_gm_bytes);
  EXPECT(k.vector_elem_ops == n, "vector_elem_ops %llu", (unsigned long long)k.vector_elem_ops);
  ascendc_host::ResetCounters();
  EXPECT(ascendc_host::CounterSnapshot().empty(), "reset");
}

// =====================================================================================================
// Helpers for single-core vector tests: a UB arena carved with TBuf.
struct Arena {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  uint32_t used = 0;
  explicit Arena(uint32_t bytes = 160 * 1024) { pipe.InitBuffer(buf, bytes); }
  template <typename T>
  LocalTensor<T> Get(uint32_t n) {
    uint32_t bytes = (n * sizeof(T) + 31) / 32 * 32;
    LocalTensor<T> t = buf.GetWithOffset<T>(n, used);
    used += bytes;
    return t;
  }
};

template <typename T>
static void Fill(const LocalTensor<T>& t, uint32_t n, Rng& r, float lo, float hi) {
  for (uint32_t i = 0; i < n; ++i) t.HostPtr()[i] = T(r.Uniform(lo, hi));
}

// Reference element-wise semantics (float math, rounded to T).
template <typename T>
static T RefBinary(const char* op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    std::string o = op;
    if (o == "Add") return T(uint32_t(U(a)) + uint32_t(U(b)));
    if (o == "Sub") return T(uint32_t(U(a)) - uint32_t(U(b)));
    if (o == "Mul") return T(uint32_t(U(a)) * uint32_t(U(b)));
    if (o == "Max") return a > b ? a : b;
    if (o == "Min") return a < b ? a : b;
    return 0;
  } else {
    float x = float(a), y = float(b);
    std::string o = op;
    if (o == "Add") return T(x + y);
    if (o == "Sub") return T(x - y);
    if (o == "Mul") return T(x * y);
    if (o == "Div") return T(x / y);
    if (o == "Max") return T(x > y ? x : y);
    return T(x < y ? x : y);
  }
}

template <typename T>
static void RunBinaryCount(const char* op, const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b,
                           int32_t n) {
  std::string o = op;
  if (o == "Add") Add(d, a, b, n);
  else if (o == "Sub") Sub(d, a, b, n);
  else if (o == "Mul") Mul(d, a, b, n);
  else if (o == "Max") Max(d, a, b, n);
  else if (o == "Min") Min(d, a, b, n);
  else if constexpr (!std::is_integral_v<T>) Div(d, a, b, n);
}
template <typename T, typename M>
static void RunBinaryRep(const char* op, const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b,
                         M mask, uint8_t rep, const BinaryRepeatParams& p) {
  std::string o = op;
  if (o == "Add") Add(d, a, b, mask, rep, p);
  else if (o == "Sub") Sub(d, a, b, mask, rep, p);
  else if (o == "Mul") Mul(d, a, b, mask, rep, p);
  else if (o == "Max") Max(d, a, b, mask, rep, p);
  else if (o == "Min") Min(d, a, b, mask, rep, p);
  else if constexpr (!std::is_integral_v<T>) Div(d, a, b, mask, rep, p);
}

template <typename T>
static bool SameBits(T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }

template <typename T>
static void CaseBinary(const char* dtype, std::vector<const char*> ops) {
  Run1("vec_binary", [&] {
    Arena ar;
    Rng r(1);
    const int32_t sizes[] = {1, 7, 64, 100, 129, 1000, 4099};
    for (const char* op : ops)
      for (int32_t n : sizes) {
        auto a = ar.Get<T>(4160), b = ar.Get<T>(4160), d = ar.Get<T>(4160);
        Fill(a, 4160, r, -50, 50);
        Fill(b, 4160, r, 0.5f, 50);
        for (int i = 0; i < 4160; ++i) d.HostPtr()[i] = T(123);
        RunBinaryCount<T>(op, d, a, b, n);
        for (int32_t i = 0; i < 4160; ++i) {
          T want = i < n ? RefBinary<T>(op, a.HostPtr()[i], b.HostPtr()[i]) : T(123);
          if (!SameBits(want, d.HostPtr()[i])) {
            EXPECT(false, "%s %s count n=%d i=%d got %g want %g", op, dtype, n, i, double(d.HostPtr()[i]), double(want));
            break;
          }
        }
        ar.used = 0;
      }
    // mask/repeat forms: continuous and bitwise masks, strides, in-place.
    constexpr uint32_t EPB = 32 / sizeof(T), EPR = 256 / sizeof(T);
    struct P { uint8_t db, s0b, s1b, dr, s0r, s1r; };
    const P params[] = {{1, 1, 1, 8, 8, 8}, {2, 1, 3, 16, 8, 24}, {1, 0, 1, 8, 0, 8}, {1, 1, 1, 4, 8, 0}};
    for (const char* op : ops)
      for (const P& pp : params)
        for (int mk = 0; mk < 3; ++mk) {
          const uint32_t N = 12000 / sizeof(T);
          auto a = ar.Get<T>(N), b = ar.Get<T>(N), d = ar.Get<T>(N);
          Fill(a, N, r, -50, 50);
          Fill(b, N, r, 0.5f, 50);
          Fill(d, N, r, -1, 1);
          std::vector<T> before(d.HostPtr(), d.HostPtr() + N);
          uint64_t bits[2] = {0x9234567890ABCDEFull, 0x0F0F00FF12345678ull};
          uint64_t cont = mk == 0 ? EPR : EPR / 2 + 3;
          const uint8_t rep = 5;
          BinaryRepeatParams p(pp.db, pp.s0b, pp.s1b, pp.dr, pp.s0r, pp.s1r);
          if (mk == 2) RunBinaryRep<T>(op, d, a, b, bits, rep, p);
          else RunBinaryRep<T>(op, d, a, b, cont, rep, p);
          std::vector<T> want = before;
          for (uint32_t rr = 0; rr < rep; ++rr)
            for (uint32_t e = 0; e < EPR; ++e) {
              bool on = mk == 2 ? ((bits[e / 64] >> (e % 64)) & 1) && (sizeof(T) == 2 || e < 64) : e < cont;
              if (!on) continue;
              auto off = [&](uint32_t blk, uint32_t rs) { return (rr * rs + (e / EPB) * blk) * EPB + e % EPB; };
              want[off(pp.db, pp.dr)] =
                  RefBinary<T>(op, a.HostPtr()[off(pp.s0b, pp.s0r)], b.HostPtr()[off(pp.s1b, pp.s1r)]);
            }
          for (uint32_t i = 0; i < N; ++i)
            if (!SameBits(want[i], d.HostPtr()[i])) {
              EXPECT(false, "%s %s repeat mk=%d params=%d,%d,%d,%d,%d,%d i=%u got %g want %g", op, dtype, mk, pp.db,
                     pp.s0b, pp.s1b, pp.dr, pp.s0r, pp.s1r, i, double(d.HostPtr()[i]), double(want[i]));
              break;
            }
          ar.used = 0;
        }
  });
}

// Unary and scalar ops against std:: references.
template <typename T>
static void CaseUnary(const char* dtype) {
  Run1("vec_unary", [&] {
    Arena ar;
    Rng r(2);
    const int32_t n = 3001;
    auto a = ar.Get<T>(n), d = ar.Get<T>(n), pos = ar.Get<T>(n);
    Fill(a, n, r, -20, 20);
    Fill(pos, n, r, 1e-3f, 100);
    const bool is_half = sizeof(T) == 2;
    struct U { const char* name; std::function<void()> run; std::function<float(float)> ref; bool positive; int64_t ulps; };
    std::vector<U> us = {
        {"Exp", [&] { Exp(d, a, n); }, [](float x) { return std::exp(x); }, false, is_half ? 1 : 2},
        {"Ln", [&] { Ln(d, pos, n); }, [](float x) { return std::log(x); }, true, is_half ? 1 : 2},
        {"Sqrt", [&] { Sqrt(d, pos, n); }, [](float x) { return std::sqrt(x); }, true, 0},
        {"Rsqrt", [&] { Rsqrt(d, pos, n); }, [](float x) { return 1.0f / std::sqrt(x); }, true, is_half ? 1 : 0},
        {"Reciprocal", [&] { Reciprocal(d, pos, n); }, [](float x) { return 1.0f / x; }, true, 0},
        {"Abs", [&] { Abs(d, a, n); }, [](float x) { return std::fabs(x); }, false, 0},
        {"Relu", [&] { Relu(d, a, n); }, [](float x) { return x > 0 ? x : 0.0f; }, false, 0},
        {"Adds", [&] { Adds(d, a, T(1.5f), n); }, [](float x) { return x + float(T(1.5f)); }, false, 0},
        {"Muls", [&] { Muls(d, a, T(-0.75f), n); }, [](float x) { return x * float(T(-0.75f)); }, false, 0},
        {"Maxs", [&] { Maxs(d, a, T(2.0f), n); }, [](float x) { return x > 2.0f ? x : 2.0f; }, false, 0},
        {"Mins", [&] { Mins(d, a, T(2.0f), n); }, [](float x) { return x < 2.0f ? x : 2.0f; }, false, 0},
        {"LeakyRelu", [&] { LeakyRelu(d, a, T(0.125f), n); }, [](float x) { return x >= 0 ? x : x * 0.125f; }, false, 0},
    };
    for (auto& u : us) {
      u.run();
      const LocalTensor<T>& src = u.positive ? pos : a;
      for (int32_t i = 0; i < n; ++i) {
        float want_f = u.ref(float(src.HostPtr()[i]));
        T want = T(want_f);
        float got = float(d.HostPtr()[i]);
        int64_t diff;
        if constexpr (std::is_same_v<T, half>)
          diff = std::llabs(int64_t(want.bits) - int64_t(d.HostPtr()[i].bits));
        else
          diff = UlpDiff(got, float(want));
        if (diff > u.ulps) {
          EXPECT(false, "%s %s i=%d x=%.9g got %.9g want %.9g (%lld ulp)", u.name, dtype, i,
                 double(float(src.HostPtr()[i])), double(got), double(float(want)), (long long)diff);
          break;
        }
      }
    }
    // Exp/Ln edge values (float only).
    if constexpr (std::is_same_v<T, float>) {
      const float ex[] = {0.f, -0.f, 1.f, -1.f, 88.7f, 88.8f, 89.5f, -87.f, -100.f, -103.5f, -200.f, 1e-8f,
                          INFINITY, -INFINITY, NAN, -87.33655f, -87.3366f, -103.27893f, -103.9721f};
      const float lx[] = {1.f, 2.f, 0.5f, 1e-38f, 1e-45f, 3e38f, 0.f, -1.f, INFINITY, NAN, 1.0000001f, 0.99999994f};
      auto e = ar.Get<float>(64), o = ar.Get<float>(64);
      for (int i = 0; i < 19; ++i) e.HostPtr()[i] = ex[i];
      Exp(o, e, 19);
      for (int i = 0; i < 19; ++i)
        EXPECT(UlpDiff(o.HostPtr()[i], std::exp(ex[i])) <= 2, "Exp(%g) got %.9g want %.9g", double(ex[i]),
               double(o.HostPtr()[i]), double(std::exp(ex[i])));
      for (int i = 0; i < 12; ++i) e.HostPtr()[i] = lx[i];
      Ln(o, e, 12);
      for (int i = 0; i < 12; ++i)
        EXPECT(UlpDiff(o.HostPtr()[i], std::log(lx[i])) <= 2, "Ln(%g) got %.9g want %.9g", double(lx[i]),
               double(o.HostPtr()[i]), double(std::log(lx[i])));
      // Sweep Exp/Ln over a wide range.
      int64_t worst_e = 0, worst_l = 0;
      auto big = ar.Get<float>(8192), out = ar.Get<float>(8192);
      // Down to -106: subnormal results (below -87.34) are built in the integer domain, still rounded once.
      for (int k = 0; k < 8192; ++k) big.HostPtr()[k] = -106.f + 194.f * float(k) / 8191.f;
      Exp(out, big, 8192);
      for (int k = 0; k < 8192; ++k) {
        int64_t u = UlpDiff(out.HostPtr()[k], std::exp(big.HostPtr()[k]));
        if (u > worst_e) worst_e = u;
      }
      for (int k = 0; k < 8192; ++k) big.HostPtr()[k] = std::ldexp(1.0f + float(k % 997) / 997.f, (k % 200) - 100);
      Ln(out, big, 8192);
      for (int k = 0; k < 8192; ++k) {
        int64_t u = UlpDiff(out.HostPtr()[k], std::log(big.HostPtr()[k]));
        if (u > worst_l) worst_l = u;
      }
      EXPECT(worst_e <= 2, "Exp worst %lld ulp", (long long)worst_e);
      EXPECT(worst_l <= 2, "Ln worst %lld ulp", (long long)worst_l);
      std::printf("INFO exp worst %lld ulp, ln worst %lld ulp\n", (long long)worst_e, (long long)worst_l);
    }
    // Unary repeat form with strides and a bitwise mask, compared to the count form per element.
    {
      constexpr uint32_t EPB = 32 / sizeof(T), EPR = 256 / sizeof(T);
      const uint32_t N = 8192 / sizeof(T);
      auto s = ar.Get<T>(N), dd = ar.Get<T>(N), one = ar.Get<T>(EPB);
      Fill(s, N, r, 0.1f, 5);
      Fill(dd, N, r, -1, 1);
      std::vector<T> before(dd.HostPtr(), dd.HostPtr() + N);
      uint64_t bits[2] = {0xF0F0F0F0F0F0F0F1ull, 0x8000000000000001ull};
      UnaryRepeatParams p(2, 1, 16, 8);
      Sqrt(dd, s, bits, 3, p);
      for (uint32_t rr = 0; rr < 3; ++rr)
        for (uint32_t e = 0; e < EPR; ++e) {
          bool on = ((bits[e / 64] >> (e % 64)) & 1) && (sizeof(T) == 2 || e < 64);
          if (!on) continue;
          before[(rr * 16 + (e / EPB) * 2) * EPB + e % EPB] = T(std::sqrt(float(s.HostPtr()[(rr * 8 + e / EPB) * EPB + e % EPB])));
        }
      for (uint32_t i = 0; i < N; ++i)
        if (!SameBits(before[i], dd.HostPtr()[i])) {
          EXPECT(false, "Sqrt repeat %s i=%u got %g want %g", dtype, i, double(float(dd.HostPtr()[i])), double(float(before[i])));
          break;
        }
      (void)one;
    }
  });
}

// Duplicate, Axpy, int ops, And/Or/Not, Shift, counter-mode mask, operator overloads.
static void CaseMisc() {
  Run1("vec_misc", [&] {
    Arena ar;
    Rng r(3);
    auto f = ar.Get<float>(1024), g = ar.Get<float>(1024), h = ar.Get<float>(1024);
    Duplicate(f, 3.25f, 1000);
    for (int i = 0; i < 1000; ++i) EXPECT(f.HostPtr()[i] == 3.25f, "Duplicate %d", i);
    auto hb = ar.Get<bfloat16_t>(256);
    Duplicate(hb, bfloat16_t(1.5f), 256);
    EXPECT(float(hb.HostPtr()[255]) == 1.5f, "Duplicate bf16");
    // Duplicate repeat form, continuous mask 10 of 64, dst rep stride 16 blocks.
    Duplicate(g, 0.0f, 1024);
    Duplicate(g, 7.0f, uint64_t(10), 2, 1, 16);
    for (int i = 0; i < 1024; ++i) {
      bool on = (i < 10) || (i >= 128 && i < 138);
      EXPECT(g.HostPtr()[i] == (on ? 7.0f : 0.0f), "Duplicate repeat i=%d got %g", i, double(g.HostPtr()[i]));
    }
    // Axpy: dst = src * s + dst
    Fill(f, 1024, r, -1, 1);
    Fill(g, 1024, r, -1, 1);
    std::vector<float> g0(g.HostPtr(), g.HostPtr() + 1024);
    Axpy(g, f, 0.5f, 1000);
    for (int i = 0; i < 1000; ++i)
      EXPECT(std::fabs(g.HostPtr()[i] - (f.HostPtr()[i] * 0.5f + g0[i])) <= 1e-6f, "Axpy %d", i);
    // operator overloads
    Fill(f, 1024, r, -1, 1);
    Fill(g, 1024, r, -1, 1);
    h = f + g;
    for (int i = 0; i < 1024; ++i) EXPECT(h.HostPtr()[i] == f.HostPtr()[i] + g.HostPtr()[i], "operator+ %d", i);
    h = f * g;
    for (int i = 0; i < 1024; ++i) EXPECT(h.HostPtr()[i] == f.HostPtr()[i] * g.HostPtr()[i], "operator* %d", i);
    // int16 bit ops and shifts
    auto a16 = ar.Get<int16_t>(512), b16 = ar.Get<int16_t>(512), d16 = ar.Get<int16_t>(512);
    for (int i = 0; i < 512; ++i) { a16.HostPtr()[i] = int16_t(r.Next()); b16.HostPtr()[i] = int16_t(r.Next()); }
    And(d16, a16, b16, 500);
    for (int i = 0; i < 500; ++i) EXPECT(d16.HostPtr()[i] == int16_t(a16.HostPtr()[i] & b16.HostPtr()[i]), "And %d", i);
    Or(d16, a16, b16, 500);
    for (int i = 0; i < 500; ++i) EXPECT(d16.HostPtr()[i] == int16_t(a16.HostPtr()[i] | b16.HostPtr()[i]), "Or %d", i);
    Not(d16, a16, 500);
    for (int i = 0; i < 500; ++i) EXPECT(d16.HostPtr()[i] == int16_t(~a16.HostPtr()[i]), "Not %d", i);
    ShiftRight(d16, a16, int16_t(3), 500);
    for (int i = 0; i < 500; ++i) EXPECT(d16.HostPtr()[i] == int16_t(a16.HostPtr()[i] >> 3), "ShiftRight %d", i);
    ShiftLeft(d16, a16, int16_t(2), 500);
    for (int i = 0; i < 500; ++i) EXPECT(d16.HostPtr()[i] == int16_t(uint16_t(a16.HostPtr()[i]) << 2), "ShiftLeft %d", i);
    // int32 Relu and Adds
    auto a32 = ar.Get<int32_t>(300), d32 = ar.Get<int32_t>(300);
    for (int i = 0; i < 300; ++i) a32.HostPtr()[i] = int32_t(r.Next()) - (1 << 30);
    Relu(d32, a32, 300);
    for (int i = 0; i < 300; ++i) EXPECT(d32.HostPtr()[i] == (a32.HostPtr()[i] > 0 ? a32.HostPtr()[i] : 0), "Relu i32 %d", i);
    Adds(d32, a32, 5, 300);
    for (int i = 0; i < 300; ++i) EXPECT(d32.HostPtr()[i] == int32_t(uint32_t(a32.HostPtr()[i]) + 5u), "Adds i32 %d", i);
    // Counter mode: SetMaskCount + SetVectorMask<T, COUNTER>(n) ignores repeatTime.
    Duplicate(g, -1.0f, 1024);
    Fill(f, 1024, r, -1, 1);
    SetMaskCount();
    SetVectorMask<float, MaskMode::COUNTER>(150);
    Adds<float, false>(g, f, 1.0f, MASK_PLACEHOLDER, 1, UnaryRepeatParams());
    SetMaskNorm();
    ResetMask();
    for (int i = 0; i < 1024; ++i)
      EXPECT(g.HostPtr()[i] == (i < 150 ? f.HostPtr()[i] + 1.0f : -1.0f), "counter mode i=%d", i);
    // Normal mode with an externally set mask (isSetMask = false).
    Duplicate(g, -1.0f, 1024);
    SetVectorMask<float>(0, 0x5ull);
    Muls<float, false>(g, f, 2.0f, MASK_PLACEHOLDER, 2, UnaryRepeatParams());
    ResetMask();
    for (int i = 0; i < 128; ++i) {
      bool on = (i % 64) == 0 || (i % 64) == 2;
      EXPECT(g.HostPtr()[i] == (on ? f.HostPtr()[i] * 2.0f : -1.0f), "external mask i=%d", i);
    }
  });
}

// Cast: round modes and pairs.
static void CaseCast() {
  Run1("vec_cast", [&] {
    Arena ar;
    const float xs[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, -2.6f, 0.0f, -0.0f, 3.0f, 1e10f, -1e10f, 7.9f, -7.1f, 100.5f};
    const int n = 16;
    auto f = ar.Get<float>(64), fo = ar.Get<float>(64);
    auto i32 = ar.Get<int32_t>(64);
    for (int i = 0; i < n; ++i) f.HostPtr()[i] = xs[i];
    struct M { RoundMode m; double (*ref)(double); const char* name; };
    const M modes[] = {{RoundMode::CAST_RINT, [](double x) { return std::nearbyint(x); }, "RINT"},
                       {RoundMode::CAST_FLOOR, [](double x) { return std::floor(x); }, "FLOOR"},
                       {RoundMode::CAST_CEIL, [](double x) { return std::ceil(x); }, "CEIL"},
                       {RoundMode::CAST_ROUND, [](double x) { return std::round(x); }, "ROUND"},
                       {RoundMode::CAST_TRUNC, [](double x) { return std::trunc(x); }, "TRUNC"}};
    for (const M& m : modes) {
      Cast(i32, f, m.m, n);
      Cast(fo, f, m.m, n);
      for (int i = 0; i < n; ++i) {
        double rr = m.ref(xs[i]);
        int32_t want = rr >= 2147483647.0 ? 2147483647 : rr <= -2147483648.0 ? int32_t(-2147483647 - 1) : int32_t(rr);
        EXPECT(i32.HostPtr()[i] == want, "Cast f32->i32 %s x=%g got %d want %d", m.name, double(xs[i]), i32.HostPtr()[i], want);
        EXPECT(SameBits(fo.HostPtr()[i], float(rr)), "Cast f32->f32 %s x=%g got %g want %g", m.name, double(xs[i]),
               double(fo.HostPtr()[i]), rr);
      }
      // float -> int16 (saturating)
      auto i16 = ar.Get<int16_t>(64);
      Cast(i16, f, m.m, n);
      for (int i = 0; i < n; ++i) {
        double rr = m.ref(xs[i]);
        int16_t want = rr >= 32767 ? 32767 : rr <= -32768 ? -32768 : int16_t(rr);
        EXPECT(i16.HostPtr()[i] == want, "Cast f32->i16 %s x=%g got %d want %d", m.name, double(xs[i]), i16.HostPtr()[i], want);
      }
    }
    // float -> half: RINT (nearest even), FLOOR/CEIL/TRUNC/ODD.
    {
      auto h = ar.Get<half>(64);
      const float hx[] = {1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, -1.0f - 1.0f / 2048, 65519.0f, 65520.0f, 1e-8f, 3.14159f, -2.71828f};
      for (int i = 0; i < 8; ++i) f.HostPtr()[i] = hx[i];
      Cast(h, f, RoundMode::CAST_RINT, 8);
      EXPECT(float(h.HostPtr()[0]) == 1.0f, "half RINT tie to even down");
      EXPECT(float(h.HostPtr()[1]) == 1.0f + 2.0f / 1024, "half RINT tie to even up");
      EXPECT(float(h.HostPtr()[3]) == 65504.0f, "half RINT 65519");
      EXPECT(std::isinf(float(h.HostPtr()[4])), "half RINT 65520 -> inf");
      Cast(h, f, RoundMode::CAST_FLOOR, 8);
      EXPECT(float(h.HostPtr()[0]) == 1.0f && float(h.HostPtr()[2]) == -1.0f - 1.0f / 1024, "half FLOOR");
      EXPECT(float(h.HostPtr()[6]) == 3.140625f, "half FLOOR pi %g", double(float(h.HostPtr()[6])));
      Cast(h, f, RoundMode::CAST_CEIL, 8);
      EXPECT(float(h.HostPtr()[0]) == 1.0f + 1.0f / 1024 && float(h.HostPtr()[2]) == -1.0f, "half CEIL");
      Cast(h, f, RoundMode::CAST_TRUNC, 8);
      EXPECT(float(h.HostPtr()[6]) == 3.140625f && float(h.HostPtr()[7]) == -2.716796875f, "half TRUNC %g", double(float(h.HostPtr()[7])));
      Cast(h, f, RoundMode::CAST_ODD, 8);
      EXPECT(float(h.HostPtr()[0]) == 1.0f + 1.0f / 1024, "half ODD");
      // half -> float exact, half -> int32
      Cast(fo, h, RoundMode::CAST_NONE, 8);
      for (int i = 0; i < 8; ++i) EXPECT(fo.HostPtr()[i] == float(h.HostPtr()[i]), "half->float");
      for (int i = 0; i < 8; ++i) h.HostPtr()[i] = half(xs[i]);
      Cast(i32, h, RoundMode::CAST_ROUND, 8);
      for (int i = 0; i < 8; ++i) EXPECT(i32.HostPtr()[i] == int32_t(std::round(float(h.HostPtr()[i]))), "half->i32 ROUND %d", i);
    }
    // bf16 <-> float
    {
      auto b = ar.Get<bfloat16_t>(64);
      const float bx[] = {1.0f + 1.0f / 256, 1.0f + 3.0f / 256, 3.0e38f, -1.5f, 1e-40f, NAN, INFINITY, 0.1f};
      for (int i = 0; i < 8; ++i) f.HostPtr()[i] = bx[i];
      Cast(b, f, RoundMode::CAST_RINT, 8);
      EXPECT(float(b.HostPtr()[0]) == 1.0f, "bf16 tie even");
      EXPECT(float(b.HostPtr()[1]) == 1.0f + 4.0f / 256, "bf16 tie even up");
      EXPECT(std::isnan(float(b.HostPtr()[5])), "bf16 nan");
      EXPECT(std::isinf(float(b.HostPtr()[6])), "bf16 inf");
      Cast(fo, b, RoundMode::CAST_NONE, 8);
      EXPECT(fo.HostPtr()[3] == -1.5f, "bf16->float");
      Cast(b, f, RoundMode::CAST_TRUNC, 8);
      EXPECT(float(b.HostPtr()[7]) <= 0.1f, "bf16 TRUNC");
    }
    // int32 -> float, int16 -> half, uint8 -> half, int32 -> int16 saturation, int64 round trip
    {
      for (int i = 0; i < n; ++i) i32.HostPtr()[i] = (i % 2 ? -1 : 1) * (16777217 + i * 1000);
      Cast(fo, i32, RoundMode::CAST_RINT, n);
      for (int i = 0; i < n; ++i) EXPECT(fo.HostPtr()[i] == float(i32.HostPtr()[i]), "i32->f32 %d", i);
      auto i16 = ar.Get<int16_t>(64);
      Cast(i16, i32, RoundMode::CAST_NONE, n);
      EXPECT(i16.HostPtr()[0] == 32767 && i16.HostPtr()[1] == -32768, "i32->i16 saturates");
      auto h = ar.Get<half>(64);
      for (int i = 0; i < n; ++i) i16.HostPtr()[i] = int16_t(i * 1000 - 7000);
      Cast(h, i16, RoundMode::CAST_NONE, n);
      for (int i = 0; i < n; ++i) EXPECT(float(h.HostPtr()[i]) == float(half(float(i16.HostPtr()[i]))), "i16->half %d", i);
      auto u8 = ar.Get<uint8_t>(64);
      for (int i = 0; i < 32; ++i) u8.HostPtr()[i] = uint8_t(i * 8);
      Cast(h, u8, RoundMode::CAST_NONE, 32);
      for (int i = 0; i < 32; ++i) EXPECT(float(h.HostPtr()[i]) == float(i * 8), "u8->half %d", i);
      // int8 -> half exact; half -> int8 rounds to nearest even, saturates, NaN -> 0; int16 -> float
      auto i8 = ar.Get<int8_t>(64);
      for (int i = 0; i < 32; ++i) i8.HostPtr()[i] = int8_t(i * 8 - 128);
      Cast(h, i8, RoundMode::CAST_NONE, 32);
      for (int i = 0; i < 32; ++i) EXPECT(float(h.HostPtr()[i]) == float(i * 8 - 128), "i8->half %d", i);
      const float hx[] = {2.5f, 3.5f, -2.5f, 300.0f, -300.0f, __builtin_nanf(""), 127.4f, -128.6f};
      const int hw[] = {2, 4, -2, 127, -128, 0, 127, -128};
      for (int i = 0; i < 8; ++i) h.HostPtr()[i] = half(hx[i]);
      Cast(i8, h, RoundMode::CAST_NONE, 8);
      for (int i = 0; i < 8; ++i) EXPECT(i8.HostPtr()[i] == hw[i], "half->i8 x=%g got %d want %d", double(hx[i]), i8.HostPtr()[i], hw[i]);
      Cast(i32, h, RoundMode::CAST_RINT, 8);  // half -> int32 RINT (NaN -> 0)
      const int hw32[] = {2, 4, -2, 300, -300, 0, 127, -129};
      for (int i = 0; i < 8; ++i) EXPECT(i32.HostPtr()[i] == hw32[i], "half->i32 x=%g got %d", double(hx[i]), i32.HostPtr()[i]);
      for (int i = 0; i < n; ++i) i16.HostPtr()[i] = int16_t(i * 4000 - 32768);
      Cast(fo, i16, RoundMode::CAST_NONE, n);
      for (int i = 0; i < n; ++i) EXPECT(fo.HostPtr()[i] == float(i * 4000 - 32768), "i16->f32 %d", i);
      const float fx[] = {__builtin_nanf(""), 2147483648.0f, -2147483904.0f, 2147483520.0f, 0.5f, 1.5f, -0.5f, __builtin_inff()};
      const int32_t fw[] = {0, 2147483647, int32_t(-2147483647 - 1), 2147483520, 0, 2, 0, 2147483647};
      for (int i = 0; i < 8; ++i) f.HostPtr()[i] = fx[i];
      Cast(i32, f, RoundMode::CAST_RINT, 8);
      for (int i = 0; i < 8; ++i) EXPECT(i32.HostPtr()[i] == fw[i], "f32->i32 RINT x=%g got %d", double(fx[i]), i32.HostPtr()[i]);
      auto i64 = ar.Get<int64_t>(64);
      Cast(i64, i32, RoundMode::CAST_NONE, n);
      auto back = ar.Get<int32_t>(64);
      Cast(back, i64, RoundMode::CAST_NONE, n);
      for (int i = 0; i < n; ++i) EXPECT(back.HostPtr()[i] == i32.HostPtr()[i], "i64 round trip %d", i);
      // int64 <-> float32 / int32 over specials and every tail length (the vector tables: 16 int64 lanes)
      const float sx[] = {__builtin_nanf(""), __builtin_inff(), -__builtin_inff(), 9223372036854775808.0f,
                          -9223372036854775808.0f, 9.2233715e18f, -2.5f, 2.5f, 3.5f, -0.5f, 1e10f, -1e10f,
                          16777217.0f, 0.0f, -0.0f, 7.9f, -7.9f, 123456789.0f, 1.5f, -1.5f};
      const int ns = int(sizeof sx / sizeof sx[0]);
      auto i64o = ar.Get<int64_t>(64);
      for (int len = 1; len <= ns; ++len) {
        for (int i = 0; i < len; ++i) f.HostPtr()[i] = sx[i];
        for (int m : {1, 2, 3, 4, 5}) {
          for (int i = 0; i < 64; ++i) i64o.HostPtr()[i] = 42;
          Cast(i64o, f, RoundMode(m), len);
          for (int i = 0; i < len; ++i) {
            const float x = sx[i];
            const float r = m == 1 ? std::nearbyint(x) : m == 2 ? std::floor(x) : m == 3 ? std::ceil(x)
                          : m == 4 ? std::round(x) : std::trunc(x);
            const int64_t want = std::isnan(x) ? 0 : r >= 9223372036854775808.0f ? INT64_MAX
                               : r <= -9223372036854775808.0f ? INT64_MIN : int64_t(r);
            EXPECT(i64o.HostPtr()[i] == want, "f32->i64 mode %d x=%g got %lld want %lld", m, double(x),
                   (long long)i64o.HostPtr()[i], (long long)want);
          }
          EXPECT(i64o.HostPtr()[len] == 42, "f32->i64 wrote past count %d", len);
        }
      }
      const int64_t lx[] = {INT64_MAX, INT64_MIN, 16777217, 16777219, -16777217, (int64_t(1) << 40) + 1,
                            2147483648LL, -2147483649LL, 2147483647, -2147483648LL, 0, -1, 123456789012LL,
                            9007199254740993LL, -7, 5, 33554435, 1};
      const int nl = int(sizeof lx / sizeof lx[0]);
      auto i32o = ar.Get<int32_t>(64);
      for (int len = 1; len <= nl; ++len) {
        for (int i = 0; i < len; ++i) i64.HostPtr()[i] = lx[i];
        for (int i = 0; i < 64; ++i) fo.HostPtr()[i] = -3.0f, i32o.HostPtr()[i] = 42;
        Cast(fo, i64, RoundMode::CAST_RINT, len);
        Cast(i32o, i64, RoundMode::CAST_NONE, len);
        for (int i = 0; i < len; ++i) {
          EXPECT(fo.HostPtr()[i] == float(lx[i]), "i64->f32 %lld got %.9g", (long long)lx[i], double(fo.HostPtr()[i]));
          const int32_t w = lx[i] > INT32_MAX ? INT32_MAX : lx[i] < INT32_MIN ? INT32_MIN : int32_t(lx[i]);
          EXPECT(i32o.HostPtr()[i] == w, "i64->i32 %lld got %d", (long long)lx[i], i32o.HostPtr()[i]);
        }
        EXPECT(fo.HostPtr()[len] == -3.0f && i32o.HostPtr()[len] == 42, "i64 casts wrote past count %d", len);
        for (int i = 0; i < len; ++i) i32.HostPtr()[i] = int32_t(lx[i] * 7919);
        for (int i = 0; i < 64; ++i) i64o.HostPtr()[i] = 42;
        Cast(i64o, i32, RoundMode::CAST_NONE, len);
        for (int i = 0; i < len; ++i) EXPECT(i64o.HostPtr()[i] == i32.HostPtr()[i], "i32->i64 %d", i);
        EXPECT(i64o.HostPtr()[len] == 42, "i32->i64 wrote past count %d", len);
      }
    }
    // Cast repeat form: half -> float, element count per repeat follows float (64), src rep stride 4.
    {
      auto h = ar.Get<half>(512);
      auto o = ar.Get<float>(512);
      for (int i = 0; i < 512; ++i) h.HostPtr()[i] = half(float(i) * 0.5f);
      Duplicate(o, -1.0f, 512);
      Cast(o, h, RoundMode::CAST_NONE, uint64_t(64), 3, UnaryRepeatParams(1, 1, 8, 4));
      for (int i = 0; i < 512; ++i) EXPECT(o.HostPtr()[i] == (i < 192 ? float(i) * 0.5f : -1.0f), "cast repeat %d", i);
    }
  });
}

// Compare / CompareScalar / Select.
template <typename T>
static void CaseCompareSelect(const char* dtype) {
  Run1("vec_cmp", [&] {
    Arena ar;
    Rng r(4);
    const uint32_t n = 1024;
    auto a = ar.Get<T>(n), b = ar.Get<T>(n), d = ar.Get<T>(n);
    auto bits = ar.Get<uint8_t>(n / 8);
    for (uint32_t i = 0; i < n; ++i) {
      a.HostPtr()[i] = T(float(int(r.Next() % 7) - 3));
      b.HostPtr()[i] = T(float(int(r.Next() % 7) - 3));
    }
    const CMPMODE modes[] = {CMPMODE::LT, CMPMODE::GT, CMPMODE::EQ, CMPMODE::LE, CMPMODE::GE, CMPMODE::NE};
    auto ref = [](CMPMODE m, float x, float y) {
      switch (m) {
        case CMPMODE::LT: return x < y;
        case CMPMODE::GT: return x > y;
        case CMPMODE::EQ: return x == y;
        case CMPMODE::LE: return x <= y;
        case CMPMODE::GE: return x >= y;
        default: return x != y;
      }
    };
    for (CMPMODE m : modes) {
      Compare(bits, a, b, m, n);
      for (uint32_t i = 0; i < n; ++i) {
        bool got = (bits.HostPtr()[i / 8] >> (i % 8)) & 1;
        if (got != ref(m, float(a.HostPtr()[i]), float(b.HostPtr()[i]))) {
          EXPECT(false, "Compare %s mode %d i=%u", dtype, int(m), i);
          break;
        }
      }
      CompareScalar(bits, a, T(1.0f), m, n);
      for (uint32_t i = 0; i < n; ++i) {
        bool got = (bits.HostPtr()[i / 8] >> (i % 8)) & 1;
        if (got != ref(m, float(a.HostPtr()[i]), 1.0f)) {
          EXPECT(false, "CompareScalar %s mode %d i=%u", dtype, int(m), i);
          break;
        }
      }
    }
    // Compare repeat form with a stride on src1 (repeat stride 0 = reuse the same 8 blocks)
    {
      constexpr uint32_t EPR = 256 / sizeof(T);
      Compare(bits, a, b, CMPMODE::GT, uint64_t(EPR), 3, BinaryRepeatParams(1, 1, 1, 8, 8, 0));
      for (uint32_t i = 0; i < 3 * EPR; ++i) {
        bool got = (bits.HostPtr()[i / 8] >> (i % 8)) & 1;
        EXPECT(got == (float(a.HostPtr()[i]) > float(b.HostPtr()[i % EPR])), "Compare repeat i=%u", i);
      }
    }
    // Select modes: 2 (tensor-tensor), 1 (tensor-scalar), 0 (mask reused per repeat).
    Compare(bits, a, b, CMPMODE::GE, n);
    Select(d, bits, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    for (uint32_t i = 0; i < n; ++i) {
      float want = float(a.HostPtr()[i]) >= float(b.HostPtr()[i]) ? float(a.HostPtr()[i]) : float(b.HostPtr()[i]);
      EXPECT(float(d.HostPtr()[i]) == want, "Select mode 2 i=%u", i);
    }
    Select(d, bits, a, T(9.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
    for (uint32_t i = 0; i < n; ++i) {
      float want = float(a.HostPtr()[i]) >= float(b.HostPtr()[i]) ? float(a.HostPtr()[i]) : 9.0f;
      EXPECT(float(d.HostPtr()[i]) == want, "Select mode 1 i=%u", i);
    }
    constexpr uint32_t EPR = 256 / sizeof(T);
    Select(d, bits, a, b, SELMODE::VSEL_CMPMASK_SPR, n);
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t k = i % EPR;
      bool bit = (bits.HostPtr()[k / 8] >> (k % 8)) & 1;
      float want = bit ? float(a.HostPtr()[i]) : float(b.HostPtr()[i]);
      EXPECT(float(d.HostPtr()[i]) == want, "Select mode 0 i=%u", i);
    }
    // Select repeat form: mask gates dst, mode 2 consumes the bits continuously.
    Duplicate(d, T(-7.0f), n);
    Select(d, bits, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, uint64_t(EPR / 2), 2, BinaryRepeatParams());
    for (uint32_t i = 0; i < n; ++i) {
      bool on = i < 2 * EPR && (i % EPR) < EPR / 2;
      bool bit = (bits.HostPtr()[i / 8] >> (i % 8)) & 1;
      float want = !on ? -7.0f : (bit ? float(a.HostPtr()[i]) : float(b.HostPtr()[i]));
      EXPECT(float(d.HostPtr()[i]) == want, "Select repeat i=%u got %g want %g", i, double(float(d.HostPtr()[i])), double(want));
    }
  });
}

// Select with a uint8 mask in count form (modes 1, 2) and the uint8 <-> half casts, at every tail
// length: bit-exact against a scalar reference (the SIMD fast paths and the portable kernels agree).
template <typename T>
static void CaseSelectCastFast(const char* dtype) {
  Run1("vec_select_fast", [&] {
    Arena ar;
    Rng r(11);
    const uint32_t cap = 1024;
    auto a = ar.Get<T>(cap), b = ar.Get<T>(cap), d = ar.Get<T>(cap);
    auto bits = ar.Get<uint8_t>(cap / 8);
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>;
    for (uint32_t i = 0; i < cap; ++i) {
      U ua = U(r.Next()), ub = U(r.Next());  // arbitrary bit patterns, NaN payloads included
      std::memcpy(&a.HostPtr()[i], &ua, sizeof(U));
      std::memcpy(&b.HostPtr()[i], &ub, sizeof(U));
    }
    for (uint32_t i = 0; i < cap / 8; ++i) bits.HostPtr()[i] = uint8_t(r.Next());
    const T s = T(-3.5f);
    for (uint32_t n : {1u, 7u, 8u, 15u, 16u, 17u, 33u, 64u, 100u, 257u, 1000u, 1024u}) {
      for (int mode = 1; mode <= 2; ++mode) {
        Duplicate(d, T(7.0f), cap);
        if (mode == 2) Select(d, bits, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
        else Select(d, bits, a, s, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        for (uint32_t i = 0; i < cap; ++i) {
          const bool bit = (bits.HostPtr()[i / 8] >> (i % 8)) & 1;
          const T want = i >= n ? T(7.0f) : bit ? a.HostPtr()[i] : (mode == 2 ? b.HostPtr()[i] : s);
          if (std::memcmp(&d.HostPtr()[i], &want, sizeof(T)) != 0) {
            EXPECT(false, "Select %s mode %d n=%u i=%u", dtype, mode, n, i);
            break;
          }
        }
      }
    }
    if constexpr (sizeof(T) == 2) {
      auto u8 = ar.Get<uint8_t>(cap), u8o = ar.Get<uint8_t>(cap);
      for (uint32_t i = 0; i < 256; ++i) u8.HostPtr()[i] = uint8_t(i);
      Cast(d, u8, RoundMode::CAST_NONE, 256);
      for (uint32_t i = 0; i < 256; ++i) EXPECT(float(d.HostPtr()[i]) == float(i), "u8->half %u", i);
      const float xs[] = {-1.0f, -0.5f, -0.0f, 0.5f, 1.5f, 2.5f, 3.49f, 254.5f, 255.4f, 300.0f, 1e4f,
                          INFINITY, -INFINITY, NAN, 100.0f, 7.5f, 0.0f};
      const int want[] = {0, 0, 0, 0, 2, 2, 3, 254, 255, 255, 255, 255, 0, 0, 100, 8, 0};
      const uint32_t m = sizeof(xs) / sizeof(xs[0]);
      for (uint32_t n : {m, 5u}) {
        for (uint32_t i = 0; i < m; ++i) d.HostPtr()[i] = T(xs[i]);
        Duplicate(u8o.template ReinterpretCast<int16_t>(), int16_t(0x7777), 32);
        Cast(u8o, d, RoundMode::CAST_NONE, n);
        for (uint32_t i = 0; i < m; ++i)
          EXPECT(u8o.HostPtr()[i] == (i < n ? want[i] : 0x77), "half->u8 n=%u x=%g got %d", n, double(xs[i]),
                 int(u8o.HostPtr()[i]));
      }
    }
  });
}

// Reductions.
template <typename T>
static void CaseReduce(const char* dtype) {
  Run1("vec_reduce", [&] {
    Arena ar;
    Rng r(5);
    constexpr uint32_t EPR = 256 / sizeof(T), EPB = 32 / sizeof(T);
    const uint32_t n = 8 * EPR + 37;
    auto a = ar.Get<T>(n + EPR), d = ar.Get<T>(256), tmp = ar.Get<T>(4096);
    for (uint32_t i = 0; i < n + EPR; ++i) a.HostPtr()[i] = T(float(int(r.Next() % 2001) - 1000) / 64.0f);
    // WholeReduceSum over 4 repeats, mask 100 (clamped to EPR for float), dstRepStride 1.
    WholeReduceSum(d, a, int32_t(EPR), 4, 1, 1, 8);
    for (uint32_t rr = 0; rr < 4; ++rr) {
      double s = 0;
      for (uint32_t e = 0; e < EPR; ++e) s += float(a.HostPtr()[rr * EPR + e]);
      EXPECT(std::fabs(float(d.HostPtr()[rr]) - s) <= (sizeof(T) == 2 ? 0.5 + std::fabs(s) * 2e-3 : 1e-3), "WholeReduceSum %s r=%u got %g want %g", dtype, rr, double(float(d.HostPtr()[rr])), s);
    }
    // WholeReduceMax value+index (first extremum wins).
    for (uint32_t e = 0; e < EPR; ++e) a.HostPtr()[e] = T(float(e % 5));
    WholeReduceMax(d, a, int32_t(EPR), 1, 1, 1, 8);
    EXPECT(float(d.HostPtr()[0]) == 4.0f, "WholeReduceMax value");
    if constexpr (sizeof(T) == 2) EXPECT(reinterpret_cast<uint16_t*>(d.HostPtr())[1] == 4, "WholeReduceMax index");
    else EXPECT(reinterpret_cast<uint32_t*>(d.HostPtr())[1] == 4, "WholeReduceMax index");
    WholeReduceMin(d, a, int32_t(EPR), 1, 1, 1, 8, ReduceOrder::ORDER_ONLY_INDEX);
    EXPECT(reinterpret_cast<uint32_t*>(d.HostPtr())[0] == 0, "WholeReduceMin only index");
    // BlockReduceSum / Max: 8 results per repeat.
    for (uint32_t i = 0; i < 2 * EPR; ++i) a.HostPtr()[i] = T(float(i % 11));
    BlockReduceSum(d, a, 2, int32_t(EPR), 1, 1, 8);
    for (uint32_t blk = 0; blk < 16; ++blk) {
      float s = 0;
      for (uint32_t e = 0; e < EPB; ++e) s += float((blk * EPB + e) % 11);
      EXPECT(float(d.HostPtr()[blk]) == s, "BlockReduceSum %s blk=%u got %g want %g", dtype, blk, double(float(d.HostPtr()[blk])), double(s));
    }
    BlockReduceMax(d, a, 2, int32_t(EPR), 1, 1, 8);
    for (uint32_t blk = 0; blk < 16; ++blk) {
      float m = 0;
      for (uint32_t e = 0; e < EPB; ++e) m = std::max(m, float((blk * EPB + e) % 11));
      EXPECT(float(d.HostPtr()[blk]) == m, "BlockReduceMax blk=%u", blk);
    }
    // ReduceSum / ReduceMax / ReduceMin count form with calIndex.
    for (uint32_t i = 0; i < n; ++i) a.HostPtr()[i] = T(float(int(r.Next() % 2001) - 1000) / 64.0f);
    a.HostPtr()[n - 3] = T(100.0f);
    a.HostPtr()[5] = T(-100.0f);
    ReduceSum(d, a, tmp, int32_t(n));
    double s = 0;
    for (uint32_t i = 0; i < n; ++i) s += float(a.HostPtr()[i]);
    EXPECT(std::fabs(float(d.HostPtr()[0]) - s) <= (sizeof(T) == 2 ? 1.0 + std::fabs(s) * 4e-3 : 1e-2), "ReduceSum %s got %g want %g", dtype, double(float(d.HostPtr()[0])), s);
    ReduceMax(d, a, tmp, int32_t(n), true);
    EXPECT(float(d.HostPtr()[0]) == 100.0f, "ReduceMax value");
    uint32_t idx = sizeof(T) == 2 ? reinterpret_cast<uint16_t*>(d.HostPtr())[1] : reinterpret_cast<uint32_t*>(d.HostPtr())[1];
    EXPECT(idx == n - 3, "ReduceMax index %u", idx);
    ReduceMin(d, a, tmp, int32_t(n), true);
    idx = sizeof(T) == 2 ? reinterpret_cast<uint16_t*>(d.HostPtr())[1] : reinterpret_cast<uint32_t*>(d.HostPtr())[1];
    EXPECT(float(d.HostPtr()[0]) == -100.0f && idx == 5, "ReduceMin value/index %u", idx);
    // Repeat form: ReduceMax over 3 repeats with mask EPR/2.
    ReduceMax(d, a, tmp, int32_t(EPR / 2), 3, 8, true);
    float best = -1e30f;
    uint32_t bi = 0;
    for (uint32_t rr = 0; rr < 3; ++rr)
      for (uint32_t e = 0; e < EPR / 2; ++e) {
        float x = float(a.HostPtr()[rr * EPR + e]);
        if (x > best) { best = x; bi = rr * EPR + e; }
      }
    idx = sizeof(T) == 2 ? reinterpret_cast<uint16_t*>(d.HostPtr())[1] : reinterpret_cast<uint32_t*>(d.HostPtr())[1];
    EXPECT(float(d.HostPtr()[0]) == best && idx == bi, "ReduceMax repeat got %g/%u want %g/%u", double(float(d.HostPtr()[0])), idx, double(best), bi);
    ReduceSum(d, a, tmp, int32_t(EPR), 2, 8);
    s = 0;
    for (uint32_t i = 0; i < 2 * EPR; ++i) s += float(a.HostPtr()[i]);
    EXPECT(std::fabs(float(d.HostPtr()[0]) - s) <= (sizeof(T) == 2 ? 0.5 + std::fabs(s) * 2e-3 : 1e-3), "ReduceSum repeat");
  });
}

// Float reduction fast paths (srcBlkStride 1 WholeReduce, whole-block BlockReduce, count-form ReduceSum /
// ReduceMax without index) give bit for bit what the general per-lane path and the documented trees give.
static float TreeSum64(const float* v0, uint32_t n) {  // the model's pairwise tree over 64 lanes, lanes >= n = 0
  float v[64];
  for (uint32_t e = 0; e < 64; ++e) v[e] = e < n ? v0[e] : 0.0f;
  for (uint32_t w = 64; w > 1; w /= 2)
    for (uint32_t i = 0; i < w / 2; ++i) v[i] = v[2 * i] + v[2 * i + 1];
  return v[0];
}
static void CaseReduceFast() {
  // Brcb: element 8r + j of src fills block (r * dstRepStride + j * dstBlkStride) of dst; a repeat-form
  // Sub / Mul whose src1 block stride is 0 (one per-row block) gives the same bits on the fast path (prefix
  // masks, adjacent blocks) as on the general one (a bit mask, or a dst block stride of 2).
  Run1("brcb_row_broadcast", [&] {
    Arena ar;
    Rng r(5);
    const uint32_t rows = 19, P = 64;  // 19 rows of 64 floats, 3 Brcb repeats
    auto v = ar.Get<float>(32), vb = ar.Get<float>(8 * 24), x = ar.Get<float>(rows * P), d1 = ar.Get<float>(rows * P),
         d2 = ar.Get<float>(rows * 2 * P), spread = ar.Get<float>(2 * 8 * 24);
    for (uint32_t i = 0; i < 32; ++i) v.HostPtr()[i] = r.Uniform(-2.0f, 2.0f);
    for (uint32_t i = 0; i < rows * P; ++i) x.HostPtr()[i] = r.Uniform(-5.0f, 5.0f);
    Brcb(vb, v, 3, BrcbRepeatParams(1, 8));
    for (uint32_t i = 0; i < 24 * 8; ++i)
      EXPECT(vb.HostPtr()[i] == v.HostPtr()[i / 8], "Brcb lane %u got %g want %g", i, double(vb.HostPtr()[i]),
             double(v.HostPtr()[i / 8]));
    Duplicate(spread, 0.0f, 2 * 8 * 24);
    Brcb(spread, v, 3, BrcbRepeatParams(2, 16));  // every other block
    for (uint32_t i = 0; i < 2 * 8 * 24; ++i) {
      const uint32_t blk = i / 8;
      const float want = blk % 2 ? 0.0f : v.HostPtr()[blk / 2];
      EXPECT(spread.HostPtr()[i] == want, "Brcb strided lane %u", i);
    }
    for (int m : {64, 37}) {
      for (int op = 0; op < 2; ++op) {
        const BinaryRepeatParams fast(1, 1, 0, 8, 8, 1), general(2, 1, 0, 16, 8, 1);
        Duplicate(d1, -1.0f, int32_t(rows * P));
        Duplicate(d2, -1.0f, int32_t(rows * 2 * P));
        if (op == 0) { Sub(d1, x, vb, uint64_t(m), rows, fast); Sub(d2, x, vb, uint64_t(m), rows, general); }
        else { Mul(d1, x, vb, uint64_t(m), rows, fast); Mul(d2, x, vb, uint64_t(m), rows, general); }
        for (uint32_t rr = 0; rr < rows; ++rr)
          for (uint32_t e = 0; e < P; ++e) {
            const float xv = x.HostPtr()[rr * P + e], s = v.HostPtr()[rr];
            const float want = e < uint32_t(m) ? (op == 0 ? xv - s : xv * s) : -1.0f;
            const float got = d1.HostPtr()[rr * P + e];
            const float gen = d2.HostPtr()[rr * 2 * P + (e / 8) * 16 + e % 8];
            EXPECT(got == want && gen == want, "row broadcast op %d mask %d r=%u e=%u got %g / %g want %g", op, m, rr,
                   e, double(got), double(gen), double(want));
          }
      }
    }
  });
  Run1("vec_reduce_fast", [&] {
    Arena ar;
    Rng r(11);
    const uint32_t reps = 20, n = 64 * 40 + 37;
    auto a = ar.Get<float>(64 * reps), g = ar.Get<float>(128 * reps), d1 = ar.Get<float>(256),
         d2 = ar.Get<float>(256), tmp = ar.Get<float>(4096), big = ar.Get<float>(n + 64);
    for (uint32_t i = 0; i < 64 * reps; ++i) a.HostPtr()[i] = r.Uniform(-3.0f, 3.0f) * (i % 7 == 0 ? 1e4f : 1.0f);
    a.HostPtr()[64] = std::nanf("");  // repeat 1 starts with NaN (kept by Max/Min), repeat 2 has one inside
    a.HostPtr()[64 * 2 + 5] = std::nanf("");
    a.HostPtr()[64 * 3] = -0.0f;
    a.HostPtr()[64 * 3 + 1] = 0.0f;
    // g: the same repeats with each 32 B block followed by a junk block (srcBlkStride 2 -> general path).
    for (uint32_t rr = 0; rr < reps; ++rr)
      for (uint32_t b = 0; b < 8; ++b)
        for (uint32_t e = 0; e < 8; ++e) {
          g.HostPtr()[rr * 128 + b * 16 + e] = a.HostPtr()[rr * 64 + b * 8 + e];
          g.HostPtr()[rr * 128 + b * 16 + 8 + e] = 1e30f;
        }
    const uint64_t bits[2] = {0xF0F0F00F0F0F0FF1ull, 0};
    for (int m : {64, 49, 8, 3}) {
      WholeReduceSum(d1, a, m, int32_t(reps), 1, 1, 8);
      WholeReduceSum(d2, g, m, int32_t(reps), 1, 2, 16);
      EXPECT(std::memcmp(d1.HostPtr(), d2.HostPtr(), reps * 4) == 0, "WholeReduceSum fast != general (mask %d)", m);
      for (uint32_t rr = 0; rr < reps; ++rr) {
        float want = TreeSum64(a.HostPtr() + rr * 64, uint32_t(m));
        EXPECT(std::memcmp(&want, d1.HostPtr() + rr, 4) == 0 || (want != want && d1.HostPtr()[rr] != d1.HostPtr()[rr]),
               "WholeReduceSum tree r=%u mask %d", rr, m);
      }
      WholeReduceMax(d1, a, m, int32_t(reps), 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
      WholeReduceMax(d2, g, m, int32_t(reps), 1, 2, 16, ReduceOrder::ORDER_ONLY_VALUE);
      EXPECT(std::memcmp(d1.HostPtr(), d2.HostPtr(), reps * 4) == 0, "WholeReduceMax fast != general (mask %d)", m);
      WholeReduceMin(d1, a, m, int32_t(reps), 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
      WholeReduceMin(d2, g, m, int32_t(reps), 1, 2, 16, ReduceOrder::ORDER_ONLY_VALUE);
      EXPECT(std::memcmp(d1.HostPtr(), d2.HostPtr(), reps * 4) == 0, "WholeReduceMin fast != general (mask %d)", m);
    }
    WholeReduceSum(d1, a, bits, int32_t(reps), 1, 1, 8);
    WholeReduceSum(d2, g, bits, int32_t(reps), 1, 2, 16);
    EXPECT(std::memcmp(d1.HostPtr(), d2.HostPtr(), reps * 4) == 0, "WholeReduceSum fast != general (bit mask)");
    // BlockReduce over whole blocks: block b of repeat r is the 8 floats at (r * 16 + b * 2) blocks of g.
    for (int m : {64, 40}) {
      BlockReduceSum(d1, g, 3, m, 1, 2, 16);
      BlockReduceMax(d2, g, 3, m, 1, 2, 16);
      for (uint32_t rr = 0; rr < 3; ++rr)
        for (uint32_t b = 0; b < uint32_t(m) / 8; ++b) {
          const float* x = a.HostPtr() + rr * 64 + b * 8;
          float s = ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
          float mx = x[0];
          for (int i = 1; i < 8; ++i) mx = x[i] > mx ? x[i] : mx;
          float gs = d1.HostPtr()[rr * 8 + b], gm = d2.HostPtr()[rr * 8 + b];
          EXPECT(std::memcmp(&s, &gs, 4) == 0 || (s != s && gs != gs), "BlockReduceSum r=%u b=%u", rr, b);
          EXPECT(std::memcmp(&mx, &gm, 4) == 0 || (mx != mx && gm != gm), "BlockReduceMax r=%u b=%u", rr, b);
        }
    }
    // Count-form ReduceSum: per-64 trees added in order; ReduceMax/Min without index: the first-best scan.
    for (uint32_t i = 0; i < n; ++i) big.HostPtr()[i] = r.Uniform(-1.0f, 1.0f) * (i % 13 == 0 ? 300.0f : 1.0f);
    for (uint32_t cnt : {64u, 100u, 64u * 40u, n}) {
      ReduceSum(d1, big, tmp, int32_t(cnt));
      float acc = 0;
      for (uint32_t base = 0; base < cnt; base += 64) {
        float t = TreeSum64(big.HostPtr() + base, cnt - base < 64 ? cnt - base : 64);
        acc = base == 0 ? t : acc + t;
      }
      EXPECT(std::memcmp(&acc, d1.HostPtr(), 4) == 0, "ReduceSum count %u got %g want %g", cnt,
             double(d1.HostPtr()[0]), double(acc));
    }
    auto scan = [&](bool is_min, uint32_t cnt) {
      float best = big.HostPtr()[0];
      for (uint32_t i = 1; i < cnt; ++i) {
        float x = big.HostPtr()[i];
        if (is_min ? x < best : x > best) best = x;
      }
      return best;
    };
    auto check_ext = [&](const char* what) {
      for (uint32_t cnt : {1u, 17u, 64u * 40u, n}) {
        ReduceMax(d1, big, tmp, int32_t(cnt));
        ReduceMin(d2, big, tmp, int32_t(cnt));
        float mx = scan(false, cnt), mn = scan(true, cnt);
        EXPECT(std::memcmp(&mx, d1.HostPtr(), 4) == 0 || (mx != mx && d1.HostPtr()[0] != d1.HostPtr()[0]),
               "ReduceMax %s count %u", what, cnt);
        EXPECT(std::memcmp(&mn, d2.HostPtr(), 4) == 0 || (mn != mn && d2.HostPtr()[0] != d2.HostPtr()[0]),
               "ReduceMin %s count %u", what, cnt);
      }
    };
    check_ext("random");
    big.HostPtr()[700] = std::nanf("");
    check_ext("NaN inside");
    for (uint32_t i = 0; i < n; ++i) big.HostPtr()[i] = (i % 3 == 0) ? 0.0f : (i % 3 == 1 ? -0.0f : -1.0f);
    check_ext("signed zeros");
    big.HostPtr()[0] = std::nanf("");
    check_ext("NaN first");
  });
}

// The advanced math APIs (kernel_math.h): Tanh / Erf / Erfc / Sigmoid / Sign against double references, special
// values, the in-place and whole-tensor forms, the temporary-space helpers and what the API leaves in
// sharedTmpBuffer.
template <typename T>
static void CaseMathApi(const char* dtype) {
  Run1("math_api", [&] {
    Arena ar;
    const bool is_half = sizeof(T) == 2;
    const int32_t n = 8192 + 16;
    auto x = ar.Get<T>(n), y = ar.Get<T>(n);
    auto tmp = ar.Get<uint8_t>(5 * 256);  // the largest minimum: Erfc on half
    const float lim = is_half ? 8.0f : 12.0f;
    for (int32_t k = 0; k < 8192; ++k) x.HostPtr()[k] = T(-lim + 2 * lim * float(k) / 8191.0f);
    const float sp[16] = {0.0f, -0.0f, 1e-30f, -1e-30f, 0.3f, -0.3f, 0.29999998f, 0.5f,
                          -0.5f, 0.49999997f, 10.5f, -10.5f, INFINITY, -INFINITY, NAN, 9.9f};
    for (int k = 0; k < 16; ++k) x.HostPtr()[8192 + k] = T(is_half && std::fabs(sp[k]) == 1e-30f ? 1e-7f : sp[k]);
    struct M { const char* name; std::function<void()> run; double (*ref)(double); double rel; };
    const std::vector<M> ms = {
        {"Tanh", [&] { Tanh(y, x, tmp, n); }, [](double v) { return std::tanh(v); }, 3e-7},
        {"Erf", [&] { Erf(y, x, tmp, n); }, [](double v) { return std::erf(v); }, 4e-7},
        {"Erfc", [&] { Erfc(y, x, tmp, n); }, [](double v) { return std::erfc(v); }, 6e-7},
        {"Sigmoid", [&] { Sigmoid(y, x, tmp, n); }, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, 3e-7},
        {"Sign", [&] { Sign(y, x, tmp, n); }, [](double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; }, 0},
    };
    for (const M& m : ms) {
      m.run();
      double worst = 0;
      for (int32_t i = 0; i < n; ++i) {
        const float xi = float(x.HostPtr()[i]), got = float(y.HostPtr()[i]);
        const double want = m.ref(double(xi));
        if (std::isnan(want) || std::isinf(want)) {
          EXPECT(std::isnan(want) ? std::isnan(got) : got == float(want), "%s %s x=%g got %g want %g", m.name, dtype,
                 double(xi), double(got), want);
          continue;
        }
        // half: the float result rounded once to half; float: the API's relative bound (subnormal
        // results: a few of the smallest steps).
        const double tol = is_half ? std::fabs(want) * (1.0 / 1024) + 6e-8 : std::fabs(want) * m.rel + 3e-45;
        const double err = std::fabs(double(got) - want);
        if (std::fabs(want) > (is_half ? 1e-4 : 1e-30)) worst = std::max(worst, err / std::fabs(want));
        if (err > tol) {
          EXPECT(false, "%s %s x=%.9g got %.9g want %.12g (rel %.3g)", m.name, dtype, double(xi), double(got), want,
                 err / std::fabs(want));
          break;
        }
        if (want == 0.0) EXPECT(std::signbit(got) == std::signbit(want), "%s %s keeps the sign of zero", m.name, dtype);
      }
      std::printf("INFO %s %s worst relative error %.3g\n", m.name, dtype, worst);
      // The temporary space's contents afterwards are undefined; the model leaves NaN patterns.
      uint32_t mx = 0, mn = 0;
      if (std::string(m.name) == "Tanh") GetTanhMaxMinTmpSize(ge::Shape({n}), sizeof(T), false, mx, mn);
      if (std::string(m.name) == "Erf") GetErfMaxMinTmpSize(ge::Shape({n}), sizeof(T), false, mx, mn);
      if (std::string(m.name) == "Erfc") GetErfcMaxMinTmpSize(ge::Shape({n}), sizeof(T), false, mx, mn);
      if (std::string(m.name) == "Sigmoid") GetSigmoidMaxMinTmpSize(ge::Shape({n}), sizeof(T), false, mx, mn);
      if (std::string(m.name) == "Sign") GetSignMaxMinTmpSize(ge::Shape({n}), sizeof(T), false, mx, mn);
      EXPECT(mn >= 256 && mn <= tmp.GetSize() && mx >= uint32_t(n) * 4, "%s tmp sizes min %u max %u", m.name, mn, mx);
      for (uint32_t b = 0; b < mn; ++b)
        if (tmp.HostPtr()[b] != 0xFF) { EXPECT(false, "%s left sharedTmpBuffer byte %u = %u", m.name, b, tmp.HostPtr()[b]); break; }
    }
    // In place, and the whole-tensor form, give the same bits as out of place.
    auto z = ar.Get<T>(n);
    Erfc(y, x, tmp, n);
    for (int32_t i = 0; i < n; ++i) z.HostPtr()[i] = x.HostPtr()[i];
    Erfc(z, z, tmp);
    EXPECT(std::memcmp(z.HostPtr(), y.HostPtr(), n * sizeof(T)) == 0, "Erfc in place differs (%s)", dtype);
    // ClampMin / ClampMax: x < s ? s : x and x > s ? s : x, bit for bit (NaN and -0.0 pass).
    for (const float sc : {0.0f, -1.5f, 2.25f}) {
      ClampMin(y, x, tmp, T(sc), n);
      ClampMax(z, x, tmp, T(sc), n);
      for (int32_t i = 0; i < n; ++i) {
        const T xi = x.HostPtr()[i], s = T(sc);
        const T wmin = float(xi) < float(s) ? s : xi, wmax = float(xi) > float(s) ? s : xi;
        if (std::memcmp(&wmin, &y.HostPtr()[i], sizeof(T)) != 0 || std::memcmp(&wmax, &z.HostPtr()[i], sizeof(T)) != 0) {
          EXPECT(false, "Clamp %s x=%g s=%g min %g max %g", dtype, double(float(xi)), double(sc),
                 double(float(y.HostPtr()[i])), double(float(z.HostPtr()[i])));
          break;
        }
      }
    }
    uint32_t cmx = 0, cmn = 0;
    GetClampMaxMinTmpSize(ge::Shape({n}), sizeof(T), false, cmx, cmn);
    EXPECT(cmn == 256 && cmx >= uint32_t(n) * 4, "Clamp tmp sizes min %u max %u", cmn, cmx);
    uint32_t live = 0, extra = 1;
    GetErfcTmpBufferFactorSize(sizeof(T), live, extra);
    EXPECT(live * sizeof(T) == (is_half ? 5u : 4u) * 4 && extra == 0, "Erfc factor %u extra %u", live, extra);
  });
}

// =====================================================================================================
// The rules of item 6 / §8: each must raise KernelError naming the kernel, the instruction and numbers.
static void CaseErrors(const std::string& which) {
  static std::vector<float> gm(4096, 1.0f);
  std::map<std::string, std::function<void()>> cases = {
      {"initbuffer_pool", [] {
         TPipe pipe;
         TQue<TPosition::VECIN, 1> q;
         pipe.InitBuffer(q, 2, 100 * 1024);
       }},
      {"too_many_buffers", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b[65];
         for (auto& x : b) pipe.InitBuffer(x, 32);
       }},
      {"queue_position_8", [] {
         TPipe pipe;
         TQue<TPosition::VECIN, 1> q1, q2, q3;
         pipe.InitBuffer(q1, 4, 64);
         pipe.InitBuffer(q2, 4, 64);
         pipe.InitBuffer(q3, 1, 64);
       }},
      {"two_pipes", [] {
         TPipe a;
         TPipe b;
       }},
      {"deque_empty", [] {
         TPipe pipe;
         TQue<TPosition::VECIN, 1> q;
         pipe.InitBuffer(q, 2, 256);
         auto t = q.DeQue<float>();
       }},
      {"enque_full", [] {
         TPipe pipe;
         TQue<TPosition::VECIN, 1> q;
         pipe.InitBuffer(q, 2, 256);
         auto a = q.AllocTensor<float>();
         auto b = q.AllocTensor<float>();
         q.EnQue(a);
         q.EnQue(b);
       }},
      {"alloc_no_idle", [] {
         TPipe pipe;
         TQue<TPosition::VECIN, 1> q;
         pipe.InitBuffer(q, 2, 256);
         auto a = q.AllocTensor<float>();
         auto b = q.AllocTensor<float>();
         auto c = q.AllocTensor<float>();
       }},
      {"datacopy_not_32", [] {
         TPipe pipe;
         TQue<TPosition::VECIN, 1> q;
         pipe.InitBuffer(q, 1, 256);
         GlobalTensor<float> g;
         g.SetGlobalBuffer(gm.data(), 4096);
         auto t = q.AllocTensor<float>();
         DataCopy(t, g, 10);
       }},
      {"datacopy_misaligned", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 1024);
         GlobalTensor<float> g;
         g.SetGlobalBuffer(gm.data(), 4096);
         auto t = b.Get<float>()[4];
         DataCopy(t, g, 8);
       }},
      {"datacopy_blockcount", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 1024);
         GlobalTensor<float> g;
         g.SetGlobalBuffer(gm.data(), 4096);
         DataCopy(b.Get<float>(), g, DataCopyParams(5000, 1, 0, 0));
       }},
      {"datacopy_overflow", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 256);
         GlobalTensor<float> g;
         g.SetGlobalBuffer(gm.data(), 4096);
         DataCopy(b.Get<float>(), g, DataCopyParams(4, 2, 0, 1));
       }},
      {"datacopypad_blocklen", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 256);
         GlobalTensor<float> g;
         g.SetGlobalBuffer(gm.data(), 4096);
         DataCopyPad(b.Get<float>(), g, DataCopyExtParams(1, 6, 0, 0, 0), DataCopyPadExtParams<float>());
       }},
      {"vector_footprint", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 1024);
         auto t = b.Get<float>();
         Add(t, t, t, 300);
       }},
      {"vector_repeat_footprint", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 1024);
         auto t = b.Get<float>();
         Add(t, t, t, uint64_t(64), 2, BinaryRepeatParams(1, 1, 1, 8, 8, 40));
       }},
      {"repeat_range", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 1024);
         auto t = b.Get<float>();
         WholeReduceSum(t, t, 64, 300, 1, 1, 8);
       }},
      {"wrong_position", [] {
         TPipe pipe;
         TBuf<TPosition::A1> b;
         pipe.InitBuffer(b, 1024);
         auto t = b.Get<float>();
         Exp(t, t, 64);
       }},
      {"getvalue_position", [] {
         TPipe pipe;
         TBuf<TPosition::B1> b;
         pipe.InitBuffer(b, 1024);
         (void)b.Get<float>().GetValue(0);
       }},
      {"operator_index", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 1024);
         auto t = b.Get<float>();
         auto u = t[300];
       }},
      {"tbuf_get", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 1024);
         auto t = b.Get<float>(300);
       }},
      {"flag_unmatched", [] { SetFlag<HardEvent::V_MTE3>(0); }},
      {"flag_wait_without_set", [] { WaitFlag<HardEvent::MTE2_V>(1); }},
      {"flag_twice", [] {
         SetFlag<HardEvent::MTE2_V>(2);
         SetFlag<HardEvent::MTE2_V>(2);
       }},
      {"flag_pair_on_aiv", [] {
         SetFlag<HardEvent::M_MTE1>(0);
         WaitFlag<HardEvent::M_MTE1>(0);
       }},
      {"bounds_gm_getvalue", [] {
         GlobalTensor<float> g;
         g.SetGlobalBuffer(gm.data(), 100);
         (void)g.GetValue(100);
       }},
      {"bounds_gm_datacopy", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 1024);
         GlobalTensor<float> g;
         g.SetGlobalBuffer(gm.data(), 100);
         DataCopy(b.Get<float>(), g[96], 8);
       }},
      {"bounds_local_getvalue", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 1024);
         (void)b.Get<float>(16).GetValue(16);
       }},
      {"aiv_has_no_l1", [] {
         TPipe pipe;
         TQue<TPosition::A1, 1> q;
         pipe.InitBuffer(q, 1, 1024);
       }},
      {"cast_pair", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 1024);
         auto t = b.Get<float>();
         Cast(t.ReinterpretCast<int32_t>(), t, RoundMode::CAST_NONE, 8);
       }},
      {"brcb_footprint", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 1024);
         auto t = b.Get<float>();
         Brcb(t[128], t, 2, BrcbRepeatParams(1, 8));  // 2 repeats write 512 B into a 512 B tail: fits
         Brcb(t[192], t, 2, BrcbRepeatParams(1, 8));  // 512 B from byte 768: past the 1024 B buffer
       }},
      {"compare_256", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 1024);
         auto t = b.Get<float>();
         Compare(t.ReinterpretCast<uint8_t>(), t, t, CMPMODE::LT, 40);
       }},
      {"compare_int32_order", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 2048);
         auto t = b.Get<int32_t>();
         Compare(t.ReinterpretCast<uint8_t>(), t, t[64], CMPMODE::LT, 64);
       }},
      {"math_tmp_small", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 8192);
         auto t = b.Get<float>();
         Tanh(t, t, t[1024].template ReinterpretCast<uint8_t>()[0], 256);  // whole tail is 4096 B: fine
         auto tmp = t[1024].template ReinterpretCast<uint8_t>();
         tmp.SetSize(256);
         Tanh(t, t, tmp, 256);
       }},
      {"math_tmp_overlap", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 8192);
         auto t = b.Get<float>();
         Erf(t[512], t, t[256].template ReinterpretCast<uint8_t>(), 512);
       }},
      {"clamp_tmp_small", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 8192);
         auto t = b.Get<float>();
         auto tmp = t[1024].template ReinterpretCast<uint8_t>();
         tmp.SetSize(128);
         ClampMax(t, t, tmp, 6.0f, 256);
       }},
      {"math_dst_overlap", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 8192);
         auto t = b.Get<float>();
         auto tmp = t[1536].template ReinterpretCast<uint8_t>();
         Erfc(t[8], t, tmp, 512);
       }},
      {"reduce_tmp", [] {
         TPipe pipe;
         TBuf<TPosition::VECCALC> b;
         pipe.InitBuffer(b, 8192);
         auto t = b.Get<float>();
         ReduceMax(t, t, t[1024].template ReinterpretCast<float>()[1000], 1024, true);
       }},
  };
  auto it = cases.find(which);
  if (it == cases.end()) {
    std::printf("UNKNOWN %s\n", which.c_str());
    return;
  }
  bool bounds = which.rfind("bounds_", 0) == 0;
  CoreType type = (which == "wrong_position" || which == "getvalue_position") ? CoreType::MIX : CoreType::AIV;
  ExpectError(("err_kernel_" + which).c_str(), it->second, Cfg(bounds), type);
  // The thread stays usable after an error.
  Run1("after_error", [] {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 2, 256);
    auto t = q.AllocTensor<float>();
    q.EnQue(t);
    t = q.DeQue<float>();
    q.FreeTensor(t);
  });
  std::printf("REUSABLE\n");
}

static void CaseListErrors() {
  const char* names[] = {"initbuffer_pool", "too_many_buffers", "queue_position_8", "two_pipes", "deque_empty",
                         "enque_full", "alloc_no_idle", "datacopy_not_32", "datacopy_misaligned", "datacopy_blockcount",
                         "datacopy_overflow", "datacopypad_blocklen", "vector_footprint", "vector_repeat_footprint",
                         "repeat_range", "wrong_position", "getvalue_position", "operator_index", "tbuf_get",
                         "flag_unmatched", "flag_wait_without_set", "flag_twice", "flag_pair_on_aiv", "bounds_gm_getvalue",
                         "bounds_gm_datacopy", "bounds_local_getvalue", "aiv_has_no_l1", "cast_pair", "brcb_footprint", "compare_256",
                         "compare_int32_order", "reduce_tmp", "math_tmp_small", "math_tmp_overlap", "math_dst_overlap", "clamp_tmp_small"};
  for (const char* n : names) {
    std::printf("CASE %s\n", n);
    CaseErrors(n);
  }
}

// UB -> GM with SetL2CacheHint(CACHE_MODE_DISABLE) (streaming stores on the host): DataCopy, strided
// DataCopy and DataCopyPad write exactly the bytes the plain copies write, at every GM misalignment
// (head / aligned body / tail of each row), and nothing outside them.
static void CaseNoL2Copy() {
  constexpr int kN = 4096;
  std::vector<float> plain(kN + 64), hinted(kN + 64);
  Run1("no_l2_copy", [&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, kN * 4);
    LocalTensor<float> u = buf.Get<float>();
    for (int i = 0; i < kN; ++i) u.SetValue(i, float(i) * 0.5f + 1.0f);
    PipeBarrier<PIPE_ALL>();
    for (int shift = 0; shift < 16; shift += 3)
      for (int form = 0; form < 3; ++form) {
        std::fill(plain.begin(), plain.end(), -7.0f);
        std::fill(hinted.begin(), hinted.end(), -7.0f);
        for (int pass = 0; pass < 2; ++pass) {
          GlobalTensor<float> g;
          g.SetGlobalBuffer((pass ? hinted : plain).data() + shift, kN);
          if (pass) g.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);
          if (form == 0) DataCopy(g, u, 4000);                            // one run of 15.6 KB
          else if (form == 1) DataCopy(g, u, DataCopyParams(5, 40, 3, 2));  // 5 x 1280 B, gaps
          else DataCopyPad(g, u, DataCopyExtParams(7, 93 * 4, 1, 5 * 4, 0));  // 7 x 372 B rows
        }
        for (int i = 0; i < kN + 64; ++i)
          EXPECT(plain[i] == hinted[i], "shift %d form %d element %d: hinted %g plain %g", shift, form, i,
                 double(hinted[i]), double(plain[i]));
      }
  });
}

// Misc API: DataCopyPad with padding, strided DataCopy, queue introspection, TBuf, GetPhyAddr, 2002.
static void CaseApi() {
  std::vector<float> src(256), dst(256, -5.0f);
  for (int i = 0; i < 256; ++i) src[i] = float(i);
  Run1("api", [&] {
    TPipe pipe;
    TQue<TPosition::VECIN, 2> q;
    pipe.InitBuffer(q, 2, 1024);
    EXPECT(q.HasIdleBuffer() && !q.HasTensorInQue() && q.VacantInQue(), "fresh queue state");
    GlobalTensor<float> g, o;
    g.SetGlobalBuffer(src.data(), 256);
    o.SetGlobalBuffer(dst.data(), 256);
    auto t = q.AllocTensor<float>();
    EXPECT(t.GetSize() == 256, "AllocTensor size %u", t.GetSize());
    EXPECT(t.GetPhyAddr() == 0, "first buffer at 0");
    // 3 blocks of 5 floats from GM with 3 floats between them, left pad 2, right pad 1, pad value 9.
    DataCopyPad(t, g, DataCopyExtParams(3, 5 * 4, 3 * 4, 1, 0), DataCopyPadExtParams<float>(true, 2, 1, 9.0f));
    // UB block = roundup((2+5+1)*4, 32) = 32 B; dst stride 1 block -> step 64 B = 16 floats.
    for (int b = 0; b < 3; ++b)
      for (int e = 0; e < 8; ++e) {
        float want = (e < 2 || e >= 7) ? 9.0f : float(b * 8 + e - 2);
        EXPECT(t.GetValue(b * 16 + e) == want, "DataCopyPad b=%d e=%d got %g want %g", b, e, double(t.GetValue(b * 16 + e)), double(want));
      }
    q.EnQue(t);
    EXPECT(q.GetTensorCountInQue() == 1 && q.HasTensorInQue(), "queue count");
    auto u = q.DeQue<float>();
    // UB -> GM: 3 blocks of 7 floats from UB (src stride 1 block) to GM with 1 float gaps.
    DataCopyPad(o, u, DataCopyExtParams(3, 7 * 4, 1, 4, 0));
    for (int b = 0; b < 3; ++b)
      for (int e = 0; e < 7; ++e)
        EXPECT(dst[b * 8 + e] == u.GetValue(b * 16 + e), "DataCopyPad out b=%d e=%d", b, e);
    EXPECT(dst[7] == -5.0f, "gap untouched");
    q.FreeTensor(u);
    // Strided DataCopy: 4 blocks of 1 x 32 B, src gap 1 block, dst gap 0.
    auto v = q.AllocTensor<float>();
    DataCopy(v, g, DataCopyParams(4, 1, 1, 0));
    for (int b = 0; b < 4; ++b)
      for (int e = 0; e < 8; ++e) EXPECT(v.GetValue(b * 8 + e) == float(b * 16 + e), "strided DataCopy");
    // UB -> UB
    auto w = q.AllocTensor<float>();
    DataCopy(w, v, 32);
    EXPECT(w.GetValue(31) == v.GetValue(31), "UB->UB");
    EXPECT(v.GetPhyAddr() == 1024 && w.GetPhyAddr() == 0, "round-robin buffers: %llu %llu", (unsigned long long)v.GetPhyAddr(), (unsigned long long)w.GetPhyAddr());
    q.FreeTensor(v);
    q.FreeTensor(w);
    // TBuf GetWithOffset and ReinterpretCast
    TBuf<TPosition::VECCALC> tb;
    pipe.InitBuffer(tb, 100);  // rounded up to 128
    auto h = tb.GetWithOffset<half>(32, 64);
    EXPECT(h.GetSize() == 32 && h.ReinterpretCast<float>().GetSize() == 16, "GetWithOffset/ReinterpretCast");
    EXPECT(tb.Get<float>().GetSize() == 32, "TBuf len rounded to 32 B");
    // SetValue/GetValue and operator()
    auto f = tb.Get<float>();
    f.SetValue(3, 2.5);
    f(4) = 1.0f;
    EXPECT(f.GetValue(3) == 2.5f && f.GetValue(4) == 1.0f, "SetValue");
    // Event IDs
    TEventID e0 = pipe.AllocEventID<HardEvent::V_MTE3>();
    TEventID e1 = pipe.FetchEventID<HardEvent::V_MTE3>();
    EXPECT(e0 == 0 && e1 == 1, "event ids %d %d", int(e0), int(e1));
    SetFlag<HardEvent::V_MTE3>(e0);
    WaitFlag<HardEvent::V_MTE3>(e0);
    pipe.ReleaseEventID<HardEvent::V_MTE3>(e0);
    TQueSync<PIPE_MTE2, PIPE_V> sync;
    sync.SetFlag(3);
    sync.WaitFlag(3);
    PipeBarrier<PIPE_V>();
    // Reset and re-init
    pipe.Reset();
    TBuf<TPosition::VECCALC> big;
    pipe.InitBuffer(big, 190 * 1024);
    EXPECT(big.Get<uint8_t>().GetSize() == 190 * 1024, "after Reset");
    EXPECT(GetBlockIdx() == 0 && GetBlockNum() == 1, "block idx");
  });
  // Destroy lets another TPipe be created.
  Run1("api_destroy", [] {
    TPipe a;
    a.Destroy();
    TPipe b;
    TBuf<TPosition::VECCALC> x;
    b.InitBuffer(x, 64);
  });
  // 2002: UB 256 KB, C1 maps to UB.
  Run1("api_2002", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 250 * 1024);
    TBuf<TPosition::A1> l1;
    pipe.InitBuffer(l1, 1000 * 1024);
  }, Cfg(false, 2002), CoreType::AIV);
  // AIC on 2201: L1 and L0 but no UB; MIX: all.
  Run1("api_aic", [] {
    TPipe pipe;
    TQue<TPosition::A1, 1> a1;
    TQue<TPosition::A2, 1> a2;
    TQue<TPosition::CO1, 1> co1;
    pipe.InitBuffer(a1, 2, 256 * 1024);
    pipe.InitBuffer(a2, 2, 32 * 1024);
    pipe.InitBuffer(co1, 2, 64 * 1024);
    auto t = a2.AllocTensor<half>();
    EXPECT(t.GetPosition() == int32_t(TPosition::A2), "A2 position");
    a2.FreeTensor(t);
    // GM -> L1, count form and params form
    static std::vector<half> gsrc(4096);
    for (int i = 0; i < 4096; ++i) gsrc[i] = half(float(i % 100));
    GlobalTensor<half> g;
    g.SetGlobalBuffer(gsrc.data(), 4096);
    auto l1 = a1.AllocTensor<half>();
    DataCopy(l1, g, 4096);
    EXPECT(float(l1.HostPtr()[4095]) == float(4095 % 100), "GM->A1 count");
    DataCopy(l1, g[16], DataCopyParams(2, 1, 1, 0));
    EXPECT(float(l1.HostPtr()[16]) == float(48 % 100), "GM->A1 params %g", double(float(l1.HostPtr()[16])));
    a1.FreeTensor(l1);
  }, Cfg(), CoreType::AIC);
  ExpectError("aic_no_ub", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 64);
  }, Cfg(), CoreType::AIC);
}

// Rough throughput of the count form (informational).
static void CaseBench() {
  Run1("bench", [] {
    Arena ar;
    const int n = 8192;
    auto a = ar.Get<float>(n), b = ar.Get<float>(n), d = ar.Get<float>(n);
    auto ha = ar.Get<half>(n), hd = ar.Get<half>(n);
    Rng r(9);
    Fill(a, n, r, -5, 5);
    Fill(b, n, r, -5, 5);
    Fill(ha, n, r, -5, 5);
    auto time = [&](const char* name, const std::function<void()>& f) {
      const int iters = 2000;
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) f();
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("BENCH %-10s %7.2f Gelem/s\n", name, double(n) * iters / s * 1e-9);
    };
    time("Add f32", [&] { Add(d, a, b, n); });
    time("Exp f32", [&] { Exp(d, a, n); });
    time("Ln f32", [&] { Ln(d, b, n); });
    time("Add f16", [&] { Add(hd, ha, ha, n); });
    time("Exp f16", [&] { Exp(hd, ha, n); });
    time("Cast h2f", [&] { Cast(d, ha, RoundMode::CAST_NONE, n); });
    // Per-instruction overhead: 64-element instructions (one repeat of work each).
    auto small = [&](const char* name, const std::function<void()>& f) {
      const int iters = 200000;
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) f();
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("BENCH %-18s %7.1f ns/instr\n", name, s / iters * 1e9);
    };
    small("Add f32 x64", [&] { Add(d, a, b, 64); });
    small("Adds f32 x64", [&] { Adds(d, a, 1.0f, 64); });
    small("WholeReduceSum x1", [&] { WholeReduceSum(d, a, 64, 1, 1, 1, 8); });
    small("ReduceSum x64", [&] { ReduceSum(d, a, b, 64); });
    small("DataCopy UB 256B", [&] { DataCopy(d, a, 64); });
  });
  std::printf("ISA %s\n", ascendc_host::VecIsaName());
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::printf("usage: %s CASE\n", argv[0]);
    return 2;
  }
  std::string c = argv[1];
  try {
    if (c == "add_pipeline") { CaseAddPipeline<float>("float"); CaseAddPipeline<half>("half"); }
    else if (c == "threads") CaseThreads();
    else if (c == "counters") CaseCounters();
    else if (c == "binary") {
      CaseBinary<float>("float", {"Add", "Sub", "Mul", "Div", "Max", "Min"});
      CaseBinary<half>("half", {"Add", "Sub", "Mul", "Div", "Max", "Min"});
      CaseBinary<int16_t>("int16", {"Add", "Sub", "Mul", "Max", "Min"});
      CaseBinary<int32_t>("int32", {"Add", "Sub", "Mul", "Max", "Min"});
    }
    else if (c == "unary") { CaseUnary<float>("float"); CaseUnary<half>("half"); }
    else if (c == "math_api") { CaseMathApi<float>("float"); CaseMathApi<half>("half"); }
    else if (c == "misc") CaseMisc();
    else if (c == "cast") CaseCast();
    else if (c == "compare_select") { CaseCompareSelect<float>("float"); CaseCompareSelect<half>("half"); }
    else if (c == "select_cast_fast") { CaseSelectCastFast<float>("float"); CaseSelectCastFast<half>("half"); }
    else if (c == "reduce") { CaseReduce<float>("float"); CaseReduce<half>("half"); }
    else if (c == "reduce_fast") CaseReduceFast();
    else if (c == "errors") CaseListErrors();
    else if (c == "api") CaseApi();
    else if (c == "no_l2_copy") CaseNoL2Copy();
    else if (c == "bench") CaseBench();
    else { std::printf("UNKNOWN %s\n", c.c_str()); return 2; }
  } catch (const std::exception& e) {
    std::printf("FAIL exception: %s\n", e.what());
    return 1;
  }
  if (g_fail == 0) std::printf("PASS %s\n", c.c_str());
  return g_fail == 0 ? 0 : 1;
}

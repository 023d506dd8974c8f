// Test driver for the host-model instructions the nn kernels added: Gather (count form), GatherMask, Scatter,
// Sort32 / MrgSort / Extract, the fast
// half <-> uint8 Cast paths and ascendc_assert. Prints "PASS <case>" / "FAIL ..." / "ERROR <what()>".
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "kernel_operator.h"

using namespace AscendC;
using ascendc_host::CoreConfig;
using ascendc_host::CoreType;
using ascendc_host::KernelError;
using ascendc_host::RunBlock;

static int g_fail = 0;
#define EXPECT(cond, ...)                                   \
  do {                                                      \
    if (!(cond)) {                                          \
      std::printf("FAIL %s:%d ", __FILE__, __LINE__);       \
      std::printf(__VA_ARGS__);                             \
      std::printf("\n");                                    \
      ++g_fail;                                             \
    }                                                       \
  } while (0)

static void Run1(const char* name, const std::function<void()>& body) {
  RunBlock(name, CoreConfig{}, CoreType::AIV, 0, 1, body);
}
static void ExpectError(const char* name, const std::function<void()>& body) {
  try {
    RunBlock(name, CoreConfig{}, CoreType::AIV, 0, 1, body);
    std::printf("NOERROR %s\n", name);
  } catch (const KernelError& e) {
    std::printf("ERROR %s\n", e.what());
  }
}

static void CaseGather() {
  Run1("gather", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 16384);
    const int n = 100;
    auto src = b.Get<float>().operator[](0);
    auto off = b.Get<uint32_t>()[1024];
    auto dst = b.Get<float>()[2048];
    for (int i = 0; i < 256; ++i) src.SetValue(i, float(i) * 0.5f);
    for (int i = 0; i < n; ++i) off.SetValue(i, uint32_t(((i * 37) % 200) * 4));
    Gather(dst, src, off, 16u, n);  // base 16 B = 4 floats
    for (int i = 0; i < n; ++i)
      EXPECT(dst.GetValue(i) == float((i * 37) % 200 + 4) * 0.5f, "float gather %d: %f", i, dst.GetValue(i));
    auto hs = b.Get<half>()[6144];
    auto hd = b.Get<half>()[6400];
    for (int i = 0; i < 64; ++i) hs.SetValue(i, half(float(i)));
    for (int i = 0; i < 40; ++i) off.SetValue(i, uint32_t((63 - i) * 2));
    Gather(hd, hs, off, 0u, 40);
    for (int i = 0; i < 40; ++i) EXPECT(float(hd.GetValue(i)) == float(63 - i), "half gather %d", i);
  });
  ExpectError("err_gather_range", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    auto src = b.Get<float>(64);
    auto off = b.Get<uint32_t>()[256];
    auto dst = b.Get<float>()[512];
    for (int i = 0; i < 8; ++i) off.SetValue(i, uint32_t(i * 4));
    off.SetValue(5, 256u);
    Gather(dst, src, off, 0u, 8);
  });
  ExpectError("err_gather_align", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    auto src = b.Get<float>(64);
    auto off = b.Get<uint32_t>()[256];
    auto dst = b.Get<float>()[512];
    for (int i = 0; i < 8; ++i) off.SetValue(i, uint32_t(i * 4 + (i == 3 ? 2 : 0)));
    Gather(dst, src, off, 0u, 8);
  });
}

// GatherMask, user pattern, counter mode: float and half (odd counts, a pattern word boundary), then the
// rejected forms: normal mode, two repeats, a dst too small for the kept elements.
static void CaseGatherMask() {
  Run1("gather_mask", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 16384);
    const uint32_t n = 77;
    auto src = b.Get<float>();
    auto pat = b.Get<uint32_t>()[512];
    auto dst = b.Get<float>()[1024];
    for (uint32_t i = 0; i < 128; ++i) src.SetValue(i, float(i) + 0.25f);
    for (uint32_t w = 0; w < 4; ++w) pat.SetValue(w, 0u);
    uint32_t want = 0;
    for (uint32_t i = 0; i < 128; ++i)
      if (i % 3 == 0 || i == 31 || i == 32 || i == 76 || i == 77) {  // 77 is past the count: not kept
        pat.SetValue(i / 32, pat.GetValue(i / 32) | (1u << (i % 32)));
        if (i < n) ++want;
      }
    uint64_t kept = 99;
    GatherMask(dst, src, pat, true, n, GatherMaskParams(1, 1, 0, 0), kept);
    EXPECT(kept == want, "float kept %llu, want %u", (unsigned long long)kept, want);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; ++i)
      if ((pat.GetValue(i / 32) >> (i % 32)) & 1u) {
        EXPECT(dst.GetValue(k) == float(i) + 0.25f, "float dst[%u] = %f, want %f", k, dst.GetValue(k), float(i) + 0.25f);
        ++k;
      }
    auto hs = b.Get<half>()[4096];
    auto hp = b.Get<uint16_t>()[6144];
    auto hd = b.Get<half>()[7168];
    for (uint32_t i = 0; i < 40; ++i) hs.SetValue(i, half(float(i)));
    hp.SetValue(0, uint16_t(0x8001));  // elements 0 and 15
    hp.SetValue(1, uint16_t(0x0003));  // 16, 17
    hp.SetValue(2, uint16_t(0x0100));  // 40: past the count of 40
    GatherMask(hd, hs, hp, true, 40u, GatherMaskParams(1, 1, 0, 0), kept);
    EXPECT(kept == 4, "half kept %llu", (unsigned long long)kept);
    const float hw[4] = {0.f, 15.f, 16.f, 17.f};
    for (int i = 0; i < 4; ++i) EXPECT(float(hd.GetValue(i)) == hw[i], "half dst[%d]", i);
  });
  ExpectError("err_gather_mask_normal", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    uint64_t kept = 0;
    GatherMask(b.Get<float>()[512], b.Get<float>(), b.Get<uint32_t>()[256], false, 0u, GatherMaskParams(1, 1, 8, 0), kept);
  });
  ExpectError("err_gather_mask_repeats", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    uint64_t kept = 0;
    GatherMask(b.Get<float>()[512], b.Get<float>(), b.Get<uint32_t>()[256], true, 64u, GatherMaskParams(1, 2, 8, 0), kept);
  });
  ExpectError("err_gather_mask_dst", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    auto pat = b.Get<uint32_t>()[256];
    for (int w = 0; w < 8; ++w) pat.SetValue(w, 0xFFFFFFFFu);
    uint64_t kept = 0;
    GatherMask(b.Get<float>()[1000], b.Get<float>(), pat, true, 64u, GatherMaskParams(1, 1, 0, 0), kept);
  });
}

static void CaseScatter() {
  Run1("scatter", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 16384);
    const int n = 50;
    auto dst = b.Get<float>().operator[](0);
    auto off = b.Get<uint32_t>()[1024];
    auto src = b.Get<float>()[2048];
    Duplicate(dst, -1.0f, 256);
    for (int i = 0; i < n; ++i) {
      src.SetValue(i, float(i));
      off.SetValue(i, uint32_t(((i * 7) % 100) * 4));
    }
    Scatter(dst, src, off, 32u, n);  // base 32 B = 8 floats
    for (int i = 0; i < n; ++i)
      EXPECT(dst.GetValue(8 + (i * 7) % 100) == float(i), "scatter %d", i);
    EXPECT(dst.GetValue(0) == -1.0f, "untouched");
  });
  ExpectError("err_scatter_range", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    auto dst = b.Get<float>(64);
    auto off = b.Get<uint32_t>()[256];
    auto src = b.Get<float>()[512];
    for (int i = 0; i < 8; ++i) off.SetValue(i, uint32_t(i * 4));
    Scatter(dst, src, off, 240u, 8);
  });
}

static void CaseCastU8() {
  Run1("cast_u8", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 8192);
    const int n = 77;
    auto h = b.Get<half>(256);
    auto u = b.Get<uint8_t>()[1024];
    auto h2 = b.Get<half>()[1024];
    // (round to nearest even, saturating, NaN -> 0; 77 elements: whole vectors and a tail per ISA)
    const float vals[] = {0.0f, 1.0f, 2.5f, 3.5f, -4.0f, 300.0f, 254.6f, 17.0f, std::nanf(""), 0.5f, -0.6f, 128.0f};
    for (int i = 0; i < n; ++i) h.SetValue(i, half(vals[i % 12]));
    Cast(u, h, RoundMode::CAST_NONE, n);
    const int want[] = {0, 1, 2, 4, 0, 255, 255, 17, 0, 0, 0, 128};
    for (int i = 0; i < n; ++i) EXPECT(u.GetValue(i) == want[i % 12], "half->u8 %d: %d", i, int(u.GetValue(i)));
    Cast(h2, u, RoundMode::CAST_NONE, n);
    for (int i = 0; i < n; ++i) EXPECT(float(h2.GetValue(i)) == float(want[i % 12]), "u8->half %d", i);
  });
}

static void CaseAssert() {
  Run1("assert_ok", [] { ascendc_assert(1 + 1 == 2, "never %d", 1); });
  ExpectError("err_assert", [] {
    int t = 7, classes = 5;
    ascendc_assert(t < classes, "target %d is out of bounds [0, %d)\n", t, classes);
  });
  ExpectError("err_assert_plain", [] { ascendc_assert(false); });
}

// Rough per-element cost of the instructions the pooling kernels lean on (informational).
static void CaseBench() {
  Run1("bench", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 160 * 1024);
    const int n = 4096;
    auto x = b.Get<float>().operator[](0);
    auto y = b.Get<float>()[n];
    auto z = b.Get<float>()[2 * n];
    auto off = b.Get<uint32_t>()[3 * n];
    auto m = b.Get<uint8_t>()[16 * n];
    for (int i = 0; i < n; ++i) { x.SetValue(i, float(i % 17)); y.SetValue(i, float(i % 5)); off.SetValue(i, uint32_t(((i * 7) % n) * 4)); }
    auto time = [&](const char* name, const std::function<void()>& f) {
      const int iters = 2000;
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) f();
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("BENCH %-10s %7.3f ns/elem\n", name, s / iters / n * 1e9);
    };
    time("Add", [&] { Add(z, x, y, n); });
    time("Mins", [&] { Mins(z, x, 3.0f, n); });
    time("Compare", [&] { Compare(m, x, y, CMPMODE::EQ, n); });
    time("Select", [&] { Select(z, m, x, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, n); });
    time("SelectS", [&] { Select(z, m, x, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n); });
    time("Gather", [&] { Gather(z, x, off, 0u, n); });
    time("Scatter", [&] { Scatter(z, x, off, 0u, n); });
    // The sort instructions: 128 blocks of Sort32, then a 4-queue merge of 4 x 1024.
    auto pairs = b.Get<float>()[5 * n];
    auto merged = b.Get<float>()[7 * n];
    for (int i = 0; i < n; ++i) x.SetValue(i, float((i * 7919) % 1013));
    time("Sort32", [&] { Sort32(pairs, x, off, n / 32); });
    for (int q = 0; q < 4; ++q)
      for (int i = 0; i < 1024; ++i) pairs.SetValue(q * 2048 + 2 * i, float(4096 - i * 4 - q));
    const uint16_t cnt[4] = {1024, 1024, 1024, 1024};
    uint32_t got[4];
    time("MrgSort", [&] {
      MrgSort<float>(merged, MrgSortSrcList<float>(pairs, pairs[2048], pairs[4096], pairs[6144]), cnt, got, 0b1111, 1);
    });
  });
}

// Sort32 / MrgSort / Extract: float and half scores with ties (stable: the earlier element and the
// lower-numbered queue first), a 4-queue repeat form, exhausted suspension with sortedNum, then the
// rejected uses: NaN scores, an unsorted queue, a bad validBit, overlong queues, dst overlapping a queue.
static void CaseSort() {
  Run1("sort", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 65536);
    const uint32_t n = 128;  // 4 repeats of 32
    auto score = b.Get<float>();
    auto idx = b.Get<uint32_t>()[1024];
    auto pairs = b.Get<float>()[2048];   // n * 2 floats
    auto merged = b.Get<float>()[4096];
    auto val = b.Get<float>()[6144];
    auto ix = b.Get<uint32_t>()[7168];
    for (uint32_t i = 0; i < n; ++i) {
      score.SetValue(i, float((i * 37) % 11) - 5.0f);  // many ties
      idx.SetValue(i, 1000 + i);
    }
    Sort32(pairs, score, idx, int32_t(n / 32));
    // Four sorted queues of 32, adjacent, merged in one call.
    uint16_t cnt[4] = {32, 32, 32, 32};
    uint32_t got[4] = {9, 9, 9, 9};
    MrgSort<float>(merged, MrgSortSrcList<float>(pairs, pairs[64], pairs[128], pairs[192]), cnt, got, 0b1111, 1);
    Extract(val, ix, merged, int32_t(n / 32));
    // Reference: stable descending order of (score, position).
    uint32_t order[n];
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order, order + n, [&](uint32_t a, uint32_t c) { return score.GetValue(a) > score.GetValue(c); });
    for (uint32_t i = 0; i < n; ++i) {
      EXPECT(ix.GetValue(i) == 1000 + order[i], "float index[%u] = %u, want %u", i, ix.GetValue(i), 1000 + order[i]);
      EXPECT(val.GetValue(i) == score.GetValue(order[i]), "float value[%u]", i);
    }
    EXPECT(got[0] == 32 && got[3] == 32, "sortedNum %u %u", got[0], got[3]);
    // Exhausted suspension: queue 2 runs out first.
    auto qa = b.Get<float>()[8192];
    auto qb = b.Get<float>()[8448];
    auto out = b.Get<float>()[8704];
    for (uint32_t i = 0; i < 8; ++i) {
      qa.SetValue(2 * i, float(100 - i));  // 100..93
      qa.ReinterpretCast<uint32_t>().SetValue(2 * i + 1, i);
    }
    for (uint32_t i = 0; i < 3; ++i) {
      qb.SetValue(2 * i, float(98 - 2 * i));  // 98, 96, 94
      qb.ReinterpretCast<uint32_t>().SetValue(2 * i + 1, 100 + i);
    }
    uint16_t c2[4] = {8, 3, 0, 0};
    MrgSort<float, true>(out, MrgSortSrcList<float>(qa, qb), c2, got, 0b11, 1);
    // 100 99 98(a) 98(b) 97 96(a) 96(b) 95 94(a) 94(b) -> queue b exhausted after 94(b): a gave 7, b 3
    EXPECT(got[0] == 7 && got[1] == 3 && got[2] == 0, "suspension sortedNum %u %u %u", got[0], got[1], got[2]);
    EXPECT(out.ReinterpretCast<uint32_t>().GetValue(2 * 2 + 1) == 2, "tie: queue 1 first (got %u)",
           out.ReinterpretCast<uint32_t>().GetValue(5));
    EXPECT(out.ReinterpretCast<uint32_t>().GetValue(2 * 3 + 1) == 100, "tie: then queue 2");
    EXPECT(out.ReinterpretCast<uint32_t>().GetValue(2 * 9 + 1) == 102, "last taken is queue 2's 94");
    // Repeat form: 2 repeats of four adjacent queues of 32 (a 256-element buffer of runs of 32).
    uint16_t c32[4] = {32, 32, 32, 32};
    for (uint32_t i = 0; i < 256; ++i) {
      score.SetValue(i, float((i * 7919) % 97));
      idx.SetValue(i, i);
    }
    Sort32(pairs, score, idx, 8);
    MrgSort<float>(merged, MrgSortSrcList<float>(pairs, pairs[64], pairs[128], pairs[192]), c32, got, 0b1111, 2);
    for (uint32_t r = 0; r < 2; ++r)
      for (uint32_t i = 1; i < 128; ++i)
        EXPECT(merged.GetValue(r * 256 + 2 * i) <= merged.GetValue(r * 256 + 2 * i - 2), "repeat %u not sorted at %u",
               r, i);
    // Half scores: the index sits in bytes 4-7.
    auto hs = b.Get<half>()[20480];
    auto hp = b.Get<half>()[20992];
    auto hv = b.Get<half>()[22016];
    for (uint32_t i = 0; i < 32; ++i) {
      hs.SetValue(i, half(float(i % 5)));
      idx.SetValue(i, i);
    }
    Sort32(hp, hs, idx, 1);
    Extract(hv, ix, hp, 1);
    EXPECT(float(hv.GetValue(0)) == 4.0f && ix.GetValue(0) == 4 && ix.GetValue(1) == 9, "half order %u %u",
           ix.GetValue(0), ix.GetValue(1));
    EXPECT(float(hv.GetValue(31)) == 0.0f && ix.GetValue(31) == 30, "half last %u", ix.GetValue(31));
  });
  ExpectError("err_sort_nan", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    auto s = b.Get<float>();
    for (uint32_t i = 0; i < 32; ++i) s.SetValue(i, float(i));
    s.SetValue(7, __builtin_nanf(""));
    Sort32(b.Get<float>()[512], s, b.Get<uint32_t>()[64], 1);
  });
  ExpectError("err_mrgsort_unsorted", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    auto q = b.Get<float>();
    for (uint32_t i = 0; i < 16; ++i) q.SetValue(i, float(i));  // scores 0, 2, 4, ... ascending
    uint16_t c[4] = {4, 4, 0, 0};
    uint32_t got[4];
    MrgSort<float>(b.Get<float>()[512], MrgSortSrcList<float>(q, q[8]), c, got, 0b11, 1);
  });
  ExpectError("err_mrgsort_validbit", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    uint16_t c[4] = {1, 0, 0, 0};
    uint32_t got[4];
    MrgSort<float>(b.Get<float>()[512], MrgSortSrcList<float>(b.Get<float>(), b.Get<float>()[8]), c, got, 0b1, 1);
  });
  ExpectError("err_mrgsort_len", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    uint16_t c[4] = {4096, 1, 0, 0};
    uint32_t got[4];
    MrgSort<float>(b.Get<float>()[512], MrgSortSrcList<float>(b.Get<float>(), b.Get<float>()[8]), c, got, 0b11, 1);
  });
  ExpectError("err_mrgsort_overlap", [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    auto q = b.Get<float>();
    for (uint32_t i = 0; i < 32; ++i) q.SetValue(i, -float(i));
    uint16_t c[4] = {4, 4, 0, 0};
    uint32_t got[4];
    MrgSort<float>(q[8], MrgSortSrcList<float>(q, q[8]), c, got, 0b11, 1);
  });
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string c = argv[1];
  try {
    if (c == "gather") CaseGather();
    else if (c == "cast_u8") CaseCastU8();
    else if (c == "scatter") CaseScatter();
    else if (c == "gather_mask") CaseGatherMask();
    else if (c == "bench") CaseBench();
    else if (c == "assert") CaseAssert();
    else if (c == "sort") CaseSort();
    else { std::printf("UNKNOWN %s\n", c.c_str()); return 2; }
  } catch (const std::exception& e) {
    std::printf("FAIL exception: %s\n", e.what());
    return 1;
  }
  if (g_fail == 0) std::printf("PASS %s\n", c.c_str());
  return g_fail == 0 ? 0 : 1;
}

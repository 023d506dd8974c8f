// Shared by the host tiling functions of every kernel family: the SoC figures a tiling needs and
// small integer helpers. Layer 1: standard library only (layer 5 fills SocInfo from the runtime).
#pragma once
#include <cstdint>

namespace npu_kernels {

struct SocInfo {
  int npu_arch = 2201;
  int32_t vector_cores = 48;  // AIV (on a coupled SoC: the AI cores)
  int32_t cube_cores = 24;    // AIC
  uint32_t ub_bytes = 192 * 1024;
  uint32_t l1_bytes = 512 * 1024;
  uint32_t l0a_bytes = 64 * 1024;
  uint32_t l0b_bytes = 64 * 1024;
  uint32_t l0c_bytes = 128 * 1024;
};

template <typename T>
constexpr T CeilDivU(T a, T b) { return (a + b - 1) / b; }
template <typename T>
constexpr T AlignUp(T a, T b) { return CeilDivU(a, b) * b; }
template <typename T>
constexpr T AlignDown(T a, T b) { return a / b * b; }

constexpr uint32_t kBlockBytes = 32;    // DataBlock
constexpr uint32_t kRepeatBytes = 256;  // one vector repeat

// The host model runs a core's tile pipeline on one host core, where GM -> UB -> compute -> GM is
// two extra copies of every operand. They cost least when all UB a tile step touches stays in the
// host core's L1 data cache (32 KB on AMD Zen, 48 KB on Intel since Ice Lake): then the copies read
// the operands from L2 / memory once, as a CPU kernel does, and the vector instructions run on
// L1. Memory-bound kernels (element-wise, activations, casts, batch / layer / group norm, softmax,
// column reductions, the fused optimizers) size their tiles to this working set. On an NPU the
// whole UB is the fast memory and a bigger tile saves instruction issue, so this is a host-only
// choice that the kernels' UB rules do not depend on.
constexpr uint64_t kHostL1TileBytes = 32 * 1024;

// The largest tile (elements, a multiple of `align`, at least `align`) whose working set, `bytes_x8`
// eighths of a byte per element (bit masks count 1/8), fits kHostL1TileBytes.
constexpr uint64_t HostCacheTile(uint64_t bytes_x8, uint64_t align) {
  const uint64_t t = kHostL1TileBytes * 8 / (bytes_x8 ? bytes_x8 : 1) / align * align;
  return t < align ? align : t;
}

// How many rows of `row_bytes` of UB each fit kHostL1TileBytes (at least 1: a row is never split for it).
constexpr uint64_t HostCacheRows(uint64_t row_bytes) {
  const uint64_t r = kHostL1TileBytes / (row_bytes ? row_bytes : 1);
  return r < 1 ? 1 : r;
}

// Splits `total` elements into per-core ranges that are whole 32-byte blocks (so a core's GM
// start stays block aligned), using at most `max_cores` cores and at least `min_per_core`
// elements per core (small tensors use few cores: a launch costs more than it saves).
struct CoreSplit {
  uint32_t block_dim;       // cores used
  uint64_t per_core;        // elements per core (the last core takes the remainder)
};

inline CoreSplit SplitAcrossCores(uint64_t total, uint32_t elem_bytes, int32_t max_cores, uint64_t min_per_core) {
  const uint64_t align = kBlockBytes / elem_bytes;
  if (total == 0) return {1, 0};
  uint64_t cores = CeilDivU<uint64_t>(total, min_per_core);
  if (cores > static_cast<uint64_t>(max_cores)) cores = static_cast<uint64_t>(max_cores);
  if (cores < 1) cores = 1;
  uint64_t per = AlignUp<uint64_t>(CeilDivU<uint64_t>(total, cores), align);
  cores = CeilDivU<uint64_t>(total, per);
  return {static_cast<uint32_t>(cores), per};
}

// Splits `items` work items (rows, lines, ...) of `total_bytes` in all into contiguous per-core ranges:
// at most max_cores, at least ~min_bytes of work per core (a launch is not free), never more cores
// than items.
struct ItemSplit {
  uint64_t per_core;
  uint32_t block_dim;
};
inline ItemSplit SplitItems(uint64_t items, uint64_t total_bytes, int32_t max_cores, uint64_t min_bytes) {
  uint64_t cores = total_bytes / (min_bytes ? min_bytes : 1);
  if (cores > static_cast<uint64_t>(max_cores)) cores = static_cast<uint64_t>(max_cores);
  if (cores > items) cores = items;
  if (cores < 1) cores = 1;
  const uint64_t n = items ? items : 1;
  const uint64_t per = CeilDivU<uint64_t>(n, cores);
  return {per, static_cast<uint32_t>(CeilDivU<uint64_t>(n, per))};
}

// Width of the column chunks a reduction over a strided axis splits `inner` into: whole rows up to
// `max_chunk` columns, narrower (multiples of 64) when the outer rows alone give the cores too few
// work items.
inline uint64_t ColumnChunkWidth(uint64_t outer, uint64_t inner, uint64_t cores, uint64_t max_chunk) {
  uint64_t w = inner < max_chunk ? inner : max_chunk;
  if (outer * CeilDivU<uint64_t>(inner, w) < cores && inner > 128) {
    uint64_t nw = AlignUp<uint64_t>(CeilDivU<uint64_t>(inner, CeilDivU<uint64_t>(cores, outer)), 64);
    if (nw < 64) nw = 64;
    if (nw < w) w = nw;
  }
  return w;
}

// The window geometry shared by the pooling tilings (fields h, w, oh, ow, kh, kw, sh, sw, ph, pw,
// dh, dw of `t`).
template <typename Tiling>
inline void SetPoolWindow(Tiling& t, uint32_t h, uint32_t w, uint32_t oh, uint32_t ow, uint32_t kh, uint32_t kw,
                          uint32_t sh, uint32_t sw, uint32_t ph, uint32_t pw, uint32_t dh, uint32_t dw) {
  t.h = h; t.w = w; t.oh = oh; t.ow = ow;
  t.kh = kh; t.kw = kw; t.sh = sh; t.sw = sw;
  t.ph = ph; t.pw = pw; t.dh = dh; t.dw = dw;
}

// Outputs of at least this many bytes are written with the L2 cache hint off
// (GlobalTensor::SetL2CacheHint(CACHE_MODE_DISABLE)): they are larger than any core's cache, so
// caching them only evicts the operands the kernel is still reading.
constexpr uint64_t kNoL2OutputBytes = uint64_t(4) << 20;
// The same for the vector cores' streaming kernels (element-wise: one pass, the output written as
// it is computed), whose next consumer usually reads the output back: only outputs past the host's
// last-level cache share gain. Measured (out-of-place add / clamp, 2 threads): 16 MB outputs 5-20%
// slower with streaming stores, 32 MB even, 44 MB 33% and 64 MB 20-27% faster.
constexpr uint64_t kNoL2StreamOutputBytes = uint64_t(32) << 20;

}  // namespace npu_kernels

// The sort instructions of 2201 (Atlas A2/A3): Sort32, MrgSort, Extract, on the (score, index) structure
// that Sort32 writes and MrgSort merges: 8 bytes per element, the score in the low bytes (float: bytes 0-3;
// half: bytes 0-1, bytes 2-3 reserved) and the uint32 index in bytes 4-7. Order is descending by score;
// equal scores keep their order (the earlier element of a repeat, the lower-numbered queue first), as the
// documentation states for the sort instructions.
//
// What the model checks beyond the operand footprints: repeat ranges; MrgSort's queue count (validBit 0b11,
// 0b111 or 0b1111), queue lengths (at most 4095 structures), that every queue is sorted — MrgSort's input
// contract — and the repeat form's layout (four equal, adjacent queues; no exhausted suspension); that
// the destination overlaps no source; and that no score is NaN, whose place in the order the documentation
// leaves undefined (kernels replace NaN before sorting).
#include <cinttypes>
#include <cstdio>
#include <cstdint>
#include <cstring>

#include "ascendc_vec_kernels.h"

namespace ascendc_host {

namespace {

constexpr uint32_t kPair = 8;  // bytes per (score, index) structure
constexpr uint32_t kSortRepeat = 32;
constexpr uint32_t kMrgMaxLen = 4095;

inline float ScoreOf(DT dt, const uint8_t* p) {
  if (dt == DT::F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  half h;
  std::memcpy(&h, p, 2);
  return float(h);
}

void CheckUb(const char* instr, const char* role, const LocalOperand& op, uint64_t footprint) {
  CheckLocal(instr, role, op, PhysMask(PhysBuf::UB), 32, footprint);
}

bool Overlap(const uint8_t* a, uint64_t na, const uint8_t* b, uint64_t nb) {
  return na != 0 && nb != 0 && a < b + nb && b < a + na;
}

void CheckRepeat(const char* instr, int64_t repeat) {
  if (repeat < 0 || repeat > 255) Fail("%s repeatTime %" PRId64 " is out of range [0, 255]", instr, repeat);
}

[[noreturn]] void FailSortDtype(const char* instr) {
  Fail("%s: scores must be half or float on 2201", instr);
}

template <typename S>
inline float HeadScore(const uint8_t* p) {
  S s;
  std::memcpy(&s, p, sizeof(S));
  return float(s);
}

// MrgSort's input contract: each queue sorted in descending order, no NaN.
template <typename S>
void CheckQueueSorted(const char* instr, uint32_t q, const uint8_t* p, uint32_t count) {
  float prev = __builtin_inff();
  for (uint32_t i = 0; i < count; ++i) {
    const float s = HeadScore<S>(p + uint64_t(i) * kPair);
    if (__builtin_expect(!(s <= prev), 0)) {
      if (s != s) Fail("%s queue %u element %u: the score is NaN", instr, q + 1, i);
      Fail("%s queue %u is not sorted: element %u (%g) is greater than element %u (%g); MrgSort merges "
           "queues that are already sorted in descending order", instr, q + 1, i, double(s), i - 1, double(prev));
    }
    prev = s;
  }
}

// Merges K non-empty queues until one of them is used up (descending; ties to the lower-numbered
// queue). Branch-free selection over heads reloaded each step, so the K pointers stay in registers.
template <int K, typename S>
void MergeUntilOneEnds(const uint8_t** cur, const uint8_t* const* end, uint8_t*& out) {
  const uint8_t* p[K];
  const uint8_t* e[K];
  for (int k = 0; k < K; ++k) {
    p[k] = cur[k];
    e[k] = end[k];
  }
  uint8_t* o = out;
  for (;;) {
    int q = 0;
    float best = HeadScore<S>(p[0]);
#pragma GCC unroll 4
    for (int k = 1; k < K; ++k) {
      const float h = HeadScore<S>(p[k]);
      const bool g = h > best;  // strictly greater: ties stay with the lower-numbered queue
      q = g ? k : q;
      best = g ? h : best;
    }
    const uint8_t* src = p[0];
#pragma GCC unroll 4
    for (int k = 1; k < K; ++k) src = q == k ? p[k] : src;
    std::memcpy(o, src, kPair);
    o += kPair;
    bool ended = false;
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k) {
      p[k] += q == k ? kPair : 0;
      ended |= p[k] == e[k];
    }
    if (ended) break;
  }
  for (int k = 0; k < K; ++k) cur[k] = p[k];
  out = o;
}

// Merges the queues into out; with `suspend`, stops when the first queue is used up.
// taken[q] = structures taken from queue q.
template <typename S>
void Merge(const uint8_t* const qp[4], const uint16_t count[4], uint32_t queues, bool suspend, uint8_t* out,
           uint32_t taken[4]) {
  const uint8_t* cur[4];
  const uint8_t* end[4];
  uint32_t id[4];  // the queue behind each active slot, in queue order
  uint32_t k = 0;
  bool stop = false;
  const uint8_t* pos[4] = {nullptr, nullptr, nullptr, nullptr};
  for (uint32_t q = 0; q < queues; ++q) {
    pos[q] = qp[q];
    if (count[q] == 0) {
      stop = stop || suspend;
      continue;
    }
    cur[k] = qp[q];
    end[k] = qp[q] + uint64_t(count[q]) * kPair;
    id[k++] = q;
  }
  while (!stop && k > 1) {
    if (k == 4) MergeUntilOneEnds<4, S>(cur, end, out);
    else if (k == 3) MergeUntilOneEnds<3, S>(cur, end, out);
    else MergeUntilOneEnds<2, S>(cur, end, out);
    uint32_t j = 0;
    for (uint32_t a = 0; a < k; ++a) {
      pos[id[a]] = cur[a];
      if (cur[a] == end[a]) continue;
      cur[j] = cur[a];
      end[j] = end[a];
      id[j++] = id[a];
    }
    k = j;
    if (suspend) stop = true;
  }
  if (!stop && k == 1) {  // the last queue: the rest in one move
    std::memcpy(out, cur[0], uint64_t(end[0] - cur[0]));
    pos[id[0]] = end[0];
  }
  for (uint32_t q = 0; q < 4; ++q) taken[q] = q < queues ? uint32_t((pos[q] - qp[q]) / kPair) : 0;
}

}  // namespace

void VSort32(DT dt, const LO& d, const LO& score, const LO& index, int64_t repeat) {
  const char* instr = "Sort32";
  if (dt != DT::F32 && dt != DT::F16) FailSortDtype(instr);
  CheckRepeat(instr, repeat);
  if (repeat == 0) return;
  const uint32_t esz = dt == DT::F32 ? 4 : 2;
  const uint64_t n = uint64_t(repeat) * kSortRepeat;
  CheckUb(instr, "dst", d, n * kPair);
  CheckUb(instr, "src0 (scores)", score, n * esz);
  CheckUb(instr, "src1 (indices)", index, n * 4);
  if (Overlap(d.ptr, n * kPair, score.ptr, n * esz) || Overlap(d.ptr, n * kPair, index.ptr, n * 4))
    Fail("%s: dst overlaps a source; sort into a separate buffer", instr);
  // Scores as float (half widened exactly), ranked per block by the ISA kernel, then each structure
  // stored at its rank.
  float sf[255 * kSortRepeat];
  uint8_t rank[255 * kSortRepeat];
  const float* fs = reinterpret_cast<const float*>(score.ptr);
  if (esz == 2) {
    for (uint64_t i = 0; i < n; ++i) sf[i] = ScoreOf(dt, score.ptr + i * 2);
    fs = sf;
  }
  const size_t nan_at = vk::Kernels().sort32_rank(rank, fs, size_t(repeat));
  if (nan_at != SIZE_MAX)
    Fail("%s: score %zu is NaN; the device leaves the place of NaN undefined — replace NaN before sorting", instr,
         nan_at);
  for (uint64_t r = 0; r < uint64_t(repeat); ++r) {
    const uint8_t* sp = score.ptr + r * kSortRepeat * esz;
    const uint8_t* ip = index.ptr + r * kSortRepeat * 4;
    const uint8_t* rk = rank + r * kSortRepeat;
    uint8_t* out = d.ptr + r * kSortRepeat * kPair;
    for (uint32_t i = 0; i < kSortRepeat; ++i) {
      uint8_t* o = out + uint32_t(rk[i]) * kPair;
      uint32_t lo;  // the score; for half, bytes 2-3 are reserved (zero)
      if (esz == 4) {
        std::memcpy(&lo, sp + i * 4, 4);
      } else {
        uint16_t h;
        std::memcpy(&h, sp + i * 2, 2);
        lo = h;
      }
      std::memcpy(o, &lo, 4);
      std::memcpy(o + 4, ip + i * 4, 4);
    }
  }
  LocalCore().counters.vector_elem_ops += n * 5;  // ~log2(32) compare-exchange stages per element
}

void VMrgSort(DT dt, const LO& d, const LO* const src[4], const uint16_t count[4], uint32_t sorted_num[4],
              uint16_t valid_bit, int64_t repeat, bool exhausted_suspension) {
  const char* instr = "MrgSort";
  if (dt != DT::F32 && dt != DT::F16) FailSortDtype(instr);
  uint32_t queues = 0;
  if (valid_bit == 0b11) queues = 2;
  else if (valid_bit == 0b111) queues = 3;
  else if (valid_bit == 0b1111) queues = 4;
  else Fail("%s validBit 0x%x: it must be 0b11, 0b111 or 0b1111 (2 to 4 queues)", instr, unsigned(valid_bit));
  if (repeat < 1 || repeat > 255) Fail("%s repeatTime %" PRId64 " is out of range [1, 255]", instr, repeat);
  for (uint32_t q = 0; q < 4; ++q) sorted_num[q] = 0;
  for (uint32_t q = 0; q < queues; ++q)
    if (count[q] > kMrgMaxLen)
      Fail("%s elementCountList[%u] = %u exceeds %u structures", instr, q, unsigned(count[q]), kMrgMaxLen);
  if (repeat > 1) {
    if (queues != 4 || exhausted_suspension)
      Fail("%s repeatTime %" PRId64 " > 1 needs all four queues (validBit 0b1111) and no exhausted suspension",
           instr, repeat);
    for (uint32_t q = 1; q < 4; ++q)
      if (count[q] != count[0] || src[q]->ptr != src[q - 1]->ptr + uint64_t(count[0]) * kPair)
        Fail("%s repeatTime %" PRId64 " > 1 needs four adjacent queues of equal length (queue %u: %u structures "
             "at byte %td, expected %u at byte %td)", instr, repeat, q, unsigned(count[q]),
             src[q]->ptr - src[0]->ptr, unsigned(count[0]), std::ptrdiff_t(q * uint64_t(count[0]) * kPair));
  }
  uint64_t total = 0;
  for (uint32_t q = 0; q < queues; ++q) total += count[q];
  const uint64_t rep_bytes = total * kPair;  // dst and source advance per repeat
  const uint64_t span = rep_bytes * uint64_t(repeat - 1);
  CheckUb(instr, "dst", d, span + rep_bytes);
  for (uint32_t q = 0; q < queues; ++q) {
    char role[16];
    std::snprintf(role, sizeof role, "src%u", q + 1);
    CheckUb(instr, role, *src[q], span + uint64_t(count[q]) * kPair);
    if (Overlap(d.ptr, span + rep_bytes, src[q]->ptr, span + uint64_t(count[q]) * kPair))
      Fail("%s: dst overlaps queue %u; merge into a separate buffer", instr, q + 1);
  }
  for (int64_t r = 0; r < repeat; ++r) {
    const uint8_t* qp[4] = {nullptr, nullptr, nullptr, nullptr};
    for (uint32_t q = 0; q < queues; ++q) {
      qp[q] = src[q]->ptr + uint64_t(r) * rep_bytes;
      if (dt == DT::F32) CheckQueueSorted<float>(instr, q, qp[q], count[q]);
      else CheckQueueSorted<half>(instr, q, qp[q], count[q]);
    }
    uint8_t* out = d.ptr + uint64_t(r) * rep_bytes;
    if (dt == DT::F32) Merge<float>(qp, count, queues, exhausted_suspension, out, sorted_num);
    else Merge<half>(qp, count, queues, exhausted_suspension, out, sorted_num);
  }
  LocalCore().counters.vector_elem_ops += total * uint64_t(repeat) * 2;
}

void VExtract(DT dt, const LO& value, const LO& index, const LO& sorted, int64_t repeat) {
  const char* instr = "Extract";
  if (dt != DT::F32 && dt != DT::F16) FailSortDtype(instr);
  CheckRepeat(instr, repeat);
  if (repeat == 0) return;
  const uint32_t esz = dt == DT::F32 ? 4 : 2;
  const uint64_t n = uint64_t(repeat) * kSortRepeat;
  CheckUb(instr, "dstValue", value, n * esz);
  CheckUb(instr, "dstIndex", index, n * 4);
  CheckUb(instr, "sorted", sorted, n * kPair);
  if (Overlap(value.ptr, n * esz, sorted.ptr, n * kPair) || Overlap(index.ptr, n * 4, sorted.ptr, n * kPair))
    Fail("%s: a destination overlaps the sorted source", instr);
  const uint8_t* s = sorted.ptr;
  if (esz == 4) {
    float* v = reinterpret_cast<float*>(value.ptr);
    uint32_t* ix = reinterpret_cast<uint32_t*>(index.ptr);
    for (uint64_t i = 0; i < n; ++i) {
      std::memcpy(v + i, s + i * kPair, 4);
      std::memcpy(ix + i, s + i * kPair + 4, 4);
    }
  } else {
    for (uint64_t i = 0; i < n; ++i) {
      std::memcpy(value.ptr + i * 2, s + i * kPair, 2);
      std::memcpy(index.ptr + i * 4, s + i * kPair + 4, 4);
    }
  }
  LocalCore().counters.vector_elem_ops += n;
}

}  // namespace ascendc_host

// Cube instructions of the Ascend C host model (shared/ascendc.md §3.3-3.7, §5):
//   DataCopy GM->L1 with Nd2NzParams, LoadData 2D / 3D v2 (L1 -> L0A/L0B), Mmad (L0A x L0B -> L0C),
//   Fixpipe (L0C -> GM, 2201), DataCopy CO1 -> CO2 (2002), and AscendC::ext::FixpipeEpilogue (ours).
//
// Physical layouts of L0A / L0B / L0C are described in cube_gemm.h: L0A is documented Zz, L0C is
// documented Nz, and each L0B fractal is stored k-major (the transpose of the documented Zn fractal).
// Kernels cannot observe the difference: LoadData writes L0B in that order, Mmad reads it, nothing
// else reads L0A/L0B. The templates here only marshal operands; checks and data movement live in
// cube_ops.cpp.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ascendc_core_state.h"
#include "ascendc_types.h"
#include "kernel_tensor.h"

namespace AscendC {

// ---- §3.3 GM -> L1 with ND -> NZ ---------------------------------------------------------------
struct Nd2NzParams {
  uint16_t ndNum = 1;
  uint16_t nValue = 0;             // rows
  uint16_t dValue = 0;             // columns (elements)
  uint16_t srcNdMatrixStride = 0;  // elements
  uint16_t srcDValue = 0;          // source row pitch, elements
  uint16_t dstNzC0Stride = 0;      // 32 B units
  uint16_t dstNzNStride = 0;       // 32 B units
  uint16_t dstNzMatrixStride = 0;  // elements
  Nd2NzParams() = default;
  Nd2NzParams(uint16_t ndNum_, uint16_t nValue_, uint16_t dValue_, uint16_t srcNdMatrixStride_, uint16_t srcDValue_,
              uint16_t dstNzC0Stride_, uint16_t dstNzNStride_, uint16_t dstNzMatrixStride_)
      : ndNum(ndNum_), nValue(nValue_), dValue(dValue_), srcNdMatrixStride(srcNdMatrixStride_),
        srcDValue(srcDValue_), dstNzC0Stride(dstNzC0Stride_), dstNzNStride(dstNzNStride_),
        dstNzMatrixStride(dstNzMatrixStride_) {}
};

// ---- §3.4 LoadData 2D ---------------------------------------------------------------------------
struct LoadData2DParams {
  uint16_t startIndex = 0;
  uint16_t dstGap = 0;
  uint16_t srcStride = 0;
  bool ifTranspose = false;
  uint8_t repeatTimes = 0;
  uint8_t sid = 0;
  uint8_t addrMode = 0;
  LoadData2DParams() = default;
  LoadData2DParams(uint16_t startIndex_, uint8_t repeatTimes_, uint16_t srcStride_, uint8_t sid_, uint16_t dstGap_,
                   bool ifTranspose_, uint8_t addrMode_)
      : startIndex(startIndex_), dstGap(dstGap_), srcStride(srcStride_), ifTranspose(ifTranspose_),
        repeatTimes(repeatTimes_), sid(sid_), addrMode(addrMode_) {}
};

// ---- LoadDataWithTranspose (L1 -> L0A/L0B, 2201) ----------------------------------------------
// Each repeat reads one square from L1 (b16: one 16x16 fractal; b32: two consecutive 16x8 fractals
// forming a 16x16 square), transposes it, and writes it back as fractals: b16 one fractal at
// dst + i*(dstGap+1)*512 B; b32 two 16x8 fractals, the first at dst + i*(dstGap+1)*512 B and the
// second (dstFracGap+1)*512 B after the first. Source squares: startIndex + i*srcStride, in units
// of one square (512 B for b16, 1024 B for b32).
struct LoadData2dTransposeParams {
  uint16_t startIndex = 0;
  uint8_t repeatTimes = 0;
  uint16_t srcStride = 0;
  uint16_t dstGap = 0;
  uint16_t dstFracGap = 0;
  uint8_t addrMode = 0;
  LoadData2dTransposeParams() = default;
  LoadData2dTransposeParams(uint16_t startIndex_, uint8_t repeatTimes_, uint16_t srcStride_, uint16_t dstGap_,
                            uint16_t dstFracGap_, uint8_t addrMode_)
      : startIndex(startIndex_), repeatTimes(repeatTimes_), srcStride(srcStride_), dstGap(dstGap_),
        dstFracGap(dstFracGap_), addrMode(addrMode_) {}
};

// ---- §3.5 LoadData 3D v2 ------------------------------------------------------------------------
template <typename T>
struct LoadData3DParamsV2 {
  uint8_t padList[4] = {0, 0, 0, 0};  // left, right, top, bottom
  uint16_t l1H = 0, l1W = 0, channelSize = 0, kExtension = 0, mExtension = 0, kStartPt = 0, mStartPt = 0;
  uint8_t strideW = 1, strideH = 1, filterW = 1, filterH = 1, dilationFilterW = 1, dilationFilterH = 1;
  bool enTranspose = false, enSmallK = false;
  T padValue = T(0);
  bool filterSizeW = false, filterSizeH = false, fMatrixCtrl = false;
  LoadData3DParamsV2() = default;
  LoadData3DParamsV2(const uint8_t padList_[4], uint16_t l1H_, uint16_t l1W_, uint16_t channelSize_,
                     uint16_t kExtension_, uint16_t mExtension_, uint16_t kStartPt_, uint16_t mStartPt_,
                     uint8_t strideW_, uint8_t strideH_, uint8_t filterW_, uint8_t filterH_, uint8_t dilationFilterW_,
                     uint8_t dilationFilterH_, bool enTranspose_, bool enSmallK_, T padValue_,
                     bool filterSizeW_ = false, bool filterSizeH_ = false, bool fMatrixCtrl_ = false)
      : l1H(l1H_), l1W(l1W_), channelSize(channelSize_), kExtension(kExtension_), mExtension(mExtension_),
        kStartPt(kStartPt_), mStartPt(mStartPt_), strideW(strideW_), strideH(strideH_), filterW(filterW_),
        filterH(filterH_), dilationFilterW(dilationFilterW_), dilationFilterH(dilationFilterH_),
        enTranspose(enTranspose_), enSmallK(enSmallK_), padValue(padValue_), filterSizeW(filterSizeW_),
        filterSizeH(filterSizeH_), fMatrixCtrl(fMatrixCtrl_) {
    for (int i = 0; i < 4; ++i) padList[i] = padList_[i];
  }
};

struct IsResetLoad3dConfig {
  bool isSetFMatrix = true;
  bool isSetPadding = true;
};
inline constexpr IsResetLoad3dConfig IS_RESER_LOAD3D_DEFAULT_CONFIG = {true, true};

enum class FmatrixMode : uint8_t { FMATRIX_LEFT = 0, FMATRIX_RIGHT = 1 };

struct LoadDataRepeatParam {
  uint16_t repeatStride = 0;
  uint8_t repeatTime = 1;
  uint8_t repeatMode = 0;  // 0: step the M window, 1: step the K window
  LoadDataRepeatParam() = default;
  LoadDataRepeatParam(uint16_t repeatStride_, uint8_t repeatTime_, uint8_t repeatMode_)
      : repeatStride(repeatStride_), repeatTime(repeatTime_), repeatMode(repeatMode_) {}
};

// ---- §5 Mmad ------------------------------------------------------------------------------------
struct MmadParams {
  uint16_t m = 0, n = 0, k = 0;
  bool isBias = false;  // deprecated
  int32_t fmOffset = 0;
  bool enSsparse = false, enWinogradA = false, enWinogradB = false;
  uint8_t unitFlag = 0;
  bool kDirectionAlign = false, cmatrixSource = false, cmatrixInitVal = true;
  MmadParams() = default;
  MmadParams(uint16_t m_, uint16_t n_, uint16_t k_, bool isBias_, int32_t fmOffset_, bool enSsparse_,
             bool enWinogradA_, bool enWinogradB_)
      : m(m_), n(n_), k(k_), isBias(isBias_), fmOffset(fmOffset_), enSsparse(enSsparse_),
        enWinogradA(enWinogradA_), enWinogradB(enWinogradB_) {}
  MmadParams(uint16_t m_, uint16_t n_, uint16_t k_, uint8_t unitFlag_, bool cmatrixSource_, bool cmatrixInitVal_)
      : m(m_), n(n_), k(k_), unitFlag(unitFlag_), cmatrixSource(cmatrixSource_), cmatrixInitVal(cmatrixInitVal_) {}
};

enum class HF32Mode : uint8_t { DISABLE = 0, ENABLE = 1 };
enum class HF32TransMode : uint8_t { NEAREST_EVEN = 0, NEAREST_ZERO = 1 };

// ---- §3.6 Fixpipe -------------------------------------------------------------------------------
enum QuantMode_t : uint8_t { NoQuant = 0, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE, REQ8, VREQ8 };

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR = 1 };
struct FixpipeConfig {
  CO2Layout format = CO2Layout::ROW_MAJOR;
};
inline constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
inline constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};

struct FixpipeParamsV220 {
  uint16_t nSize = 0, mSize = 0, srcStride = 0;
  uint32_t dstStride = 0;
  QuantMode_t quantPre = NoQuant;
  uint64_t deqScalar = 0;
  uint16_t ndNum = 1, srcNdStride = 0, dstNdStride = 0;
  bool reluEn = false;
  uint8_t unitFlag = 0;
  bool isChannelSplit = false;
  FixpipeParamsV220() = default;
  FixpipeParamsV220(uint16_t nSize_, uint16_t mSize_, uint16_t srcStride_, uint32_t dstStride_, bool reluEn_)
      : nSize(nSize_), mSize(mSize_), srcStride(srcStride_), dstStride(dstStride_), reluEn(reluEn_) {}
};

// ---- §3.7 2002: L0C -> UB ----------------------------------------------------------------------
enum class BlockMode : uint8_t { BLOCK_MODE_NORMAL = 0, BLOCK_MODE_MATRIX, BLOCK_MODE_VECTOR, BLOCK_MODE_SMALL_CHANNEL,
                                 BLOCK_MODE_DEPTHWISE };
enum class DeqScale : uint8_t { DEQ_NONE = 0, DEQ, VDEQ, DEQ8, VDEQ8, DEQ16, VDEQ16 };
enum class pad_t : uint8_t { PAD_NONE = 0, PAD_MODE1, PAD_MODE2, PAD_MODE3, PAD_MODE4, PAD_MODE5 };
struct DataCopyEnhancedParams {
  BlockMode blockMode = BlockMode::BLOCK_MODE_NORMAL;
  DeqScale deqScale = DeqScale::DEQ_NONE;
  uint64_t deqValue = 0;
  uint8_t sidStoreMode = 0;
  bool isRelu = false;
  pad_t padMode = pad_t::PAD_NONE;
  uint64_t deqTensorAddr = 0;
  DataCopyEnhancedParams() = default;
  DataCopyEnhancedParams(BlockMode blockMode_, DeqScale deqScale_, uint64_t deqValue_, uint8_t sidStoreMode_,
                         bool isRelu_, pad_t padMode_, uint64_t deqTensorAddr_)
      : blockMode(blockMode_), deqScale(deqScale_), deqValue(deqValue_), sidStoreMode(sidStoreMode_),
        isRelu(isRelu_), padMode(padMode_), deqTensorAddr(deqTensorAddr_) {}
};

}  // namespace AscendC

namespace ascendc_host {

// Element type codes passed to the non-template implementations.
enum class CubeElem : uint8_t { F32, F16, BF16, I8, U8, I32, U32, I16, U16 };
template <typename T>
constexpr CubeElem CubeElemOf() {
  if constexpr (std::is_same_v<T, float>) return CubeElem::F32;
  else if constexpr (std::is_same_v<T, half>) return CubeElem::F16;
  else if constexpr (std::is_same_v<T, bfloat16_t>) return CubeElem::BF16;
  else if constexpr (std::is_same_v<T, int8_t>) return CubeElem::I8;
  else if constexpr (std::is_same_v<T, uint8_t>) return CubeElem::U8;
  else if constexpr (std::is_same_v<T, int32_t>) return CubeElem::I32;
  else if constexpr (std::is_same_v<T, uint32_t>) return CubeElem::U32;
  else if constexpr (std::is_same_v<T, int16_t>) return CubeElem::I16;
  else if constexpr (std::is_same_v<T, uint16_t>) return CubeElem::U16;
  else static_assert(sizeof(T) == 0, "cube instructions: unsupported element type");
}

template <typename T>
inline uint64_t CubeValueBits(const T& v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T) < 8 ? sizeof(T) : 8);
  return b;
}

void CubeNd2Nz(const LocalOperand& dst, const GlobalOperand& src, CubeElem t, const AscendC::Nd2NzParams& p);
void CubeLoad2D(const LocalOperand& dst, const LocalOperand* src_local, const GlobalOperand* src_gm, CubeElem t,
                const AscendC::LoadData2DParams& p);
void CubeLoad2DTranspose(const LocalOperand& dst, const LocalOperand& src, CubeElem t,
                         const AscendC::LoadData2dTransposeParams& p);
struct Load3DArgs {
  uint8_t pad[4];
  uint16_t l1H, l1W, channelSize, kExtension, mExtension, kStartPt, mStartPt;
  uint8_t strideW, strideH, dilW, dilH;
  uint16_t filterW, filterH;  // with the +256 of filterSize* applied
  bool enTranspose, enSmallK, fMatrixCtrl;
  bool useFmatrix, usePadding;  // take l1H/l1W/pad (resp. padValue) from SetFmatrix / SetLoadDataPaddingValue
  uint64_t padBits;
};
void CubeLoad3D(const LocalOperand& dst, const LocalOperand& src, CubeElem t, const Load3DArgs& a);
void CubeSetFmatrix(uint16_t l1H, uint16_t l1W, const uint8_t padList[4], AscendC::FmatrixMode m);
void CubeSetLoad3DPadding(uint64_t bits);
void CubeSetLoadDataRepeat(const AscendC::LoadDataRepeatParam& p);
void CubeMmad(const LocalOperand& dst, const LocalOperand& fm, const LocalOperand& filter, const LocalOperand* bias,
              CubeElem tc, CubeElem ta, CubeElem tb, CubeElem tbias, const AscendC::MmadParams& p);
void CubeSetHF32(bool enable);

// One column-wise epilogue for Fixpipe; all pointers may be null.
struct FixpipeEpilogueArgs {
  const float* scale = nullptr;  // per output column, indexed from the tile's first column
  const float* shift = nullptr;
  const void* residual = nullptr;  // GM, element type = destination type, row pitch residual_stride
  uint64_t residual_stride = 0;
  uint64_t scale_elems = 0, shift_elems = 0, residual_bytes = 0;  // known sizes (0 = unknown)
  bool relu = false;
  bool rowwise = false;  // scale / shift indexed by the tile's row instead of its column
};
void CubeFixpipe(const GlobalOperand& dst, const LocalOperand& src, CubeElem tdst, CubeElem tsrc, bool nz_out,
                 const AscendC::FixpipeParamsV220& p, const FixpipeEpilogueArgs* ep, const char* instr);
void CubeCopyCO1ToCO2(const LocalOperand& dst, const LocalOperand& src, CubeElem tdst, CubeElem tsrc,
                      const AscendC::DataCopyParams& p, const AscendC::DataCopyEnhancedParams& e);

}  // namespace ascendc_host

namespace AscendC {

// GM -> A1/B1 (L1) with ND -> NZ conversion.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p) {
  ascendc_host::CubeNd2Nz(dst.Operand(), src.Operand(), ascendc_host::CubeElemOf<T>(), p);
}

// L1 -> L0A/L0B, or GM -> L0A/L0B/L1, in 512 B fractals.
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p) {
  const ascendc_host::LocalOperand s = src.Operand();
  ascendc_host::CubeLoad2D(dst.Operand(), &s, nullptr, ascendc_host::CubeElemOf<T>(), p);
}
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const LoadData2DParams& p) {
  const ascendc_host::GlobalOperand s = src.Operand();
  ascendc_host::CubeLoad2D(dst.Operand(), nullptr, &s, ascendc_host::CubeElemOf<T>(), p);
}

// L1 -> L0A/L0B with a transpose of every 16x16 square (b16 and b32).
template <typename T>
inline void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                  const LoadData2dTransposeParams& p) {
  ascendc_host::CubeLoad2DTranspose(dst.Operand(), src.Operand(), ascendc_host::CubeElemOf<T>(), p);
}

// img2col: L1 feature map (NC1HWC0, N = 1) -> L0A (Zz) or L0B (transposed window).
template <typename T, const IsResetLoad3dConfig& cfg = IS_RESER_LOAD3D_DEFAULT_CONFIG>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2<T>& p) {
  ascendc_host::Load3DArgs a{};
  for (int i = 0; i < 4; ++i) a.pad[i] = p.padList[i];
  a.l1H = p.l1H; a.l1W = p.l1W; a.channelSize = p.channelSize;
  a.kExtension = p.kExtension; a.mExtension = p.mExtension; a.kStartPt = p.kStartPt; a.mStartPt = p.mStartPt;
  a.strideW = p.strideW; a.strideH = p.strideH; a.dilW = p.dilationFilterW; a.dilH = p.dilationFilterH;
  a.filterW = uint16_t(p.filterW + (p.filterSizeW ? 256 : 0));
  a.filterH = uint16_t(p.filterH + (p.filterSizeH ? 256 : 0));
  a.enTranspose = p.enTranspose; a.enSmallK = p.enSmallK; a.fMatrixCtrl = p.fMatrixCtrl;
  a.useFmatrix = !cfg.isSetFMatrix;
  a.usePadding = !cfg.isSetPadding;
  a.padBits = ascendc_host::CubeValueBits(p.padValue);
  ascendc_host::CubeLoad3D(dst.Operand(), src.Operand(), ascendc_host::CubeElemOf<T>(), a);
}

inline void SetFmatrix(uint16_t l1H, uint16_t l1W, const uint8_t padList[4], const FmatrixMode& m) {
  ascendc_host::CubeSetFmatrix(l1H, l1W, padList, m);
}
template <typename T>
inline void SetLoadDataPaddingValue(const T padValue) {
  ascendc_host::CubeSetLoad3DPadding(ascendc_host::CubeValueBits(padValue));
}
inline void SetLoadDataRepeat(const LoadDataRepeatParam& p) { ascendc_host::CubeSetLoadDataRepeat(p); }

// C (CO1) (+)= A (A2) x B (B2).
template <typename T, typename U, typename S>
inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter, const MmadParams& p) {
  ascendc_host::CubeMmad(dst.Operand(), fm.Operand(), filter.Operand(), nullptr, ascendc_host::CubeElemOf<T>(),
                         ascendc_host::CubeElemOf<U>(), ascendc_host::CubeElemOf<S>(), ascendc_host::CubeElem::F32, p);
}
// With a 1×N bias row from C2 (BiasTable on 2201) initialising every row of C.
template <typename T, typename U, typename S, typename V>
inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                 const LocalTensor<V>& bias, const MmadParams& p) {
  const ascendc_host::LocalOperand b = bias.Operand();
  ascendc_host::CubeMmad(dst.Operand(), fm.Operand(), filter.Operand(), &b, ascendc_host::CubeElemOf<T>(),
                         ascendc_host::CubeElemOf<U>(), ascendc_host::CubeElemOf<S>(), ascendc_host::CubeElemOf<V>(), p);
}
// HF32 rounding of float operands is not modelled: float Mmad always runs at full float precision.
inline void SetHF32Mode(HF32Mode mode) { ascendc_host::CubeSetHF32(mode == HF32Mode::ENABLE); }
inline void SetHF32TransMode(HF32TransMode) {}

// L0C (CO1) -> GM, NZ -> ND (CFG_ROW_MAJOR) or NZ kept (CFG_NZ), with quantPre and ReLU.
template <typename T, typename U, const FixpipeConfig& cfg = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p) {
  ascendc_host::CubeFixpipe(dst.Operand(), src.Operand(), ascendc_host::CubeElemOf<T>(), ascendc_host::CubeElemOf<U>(),
                            cfg.format == CO2Layout::NZ, p, nullptr, "Fixpipe");
}

// 2002: CO1 (L0C) -> CO2 (UB), BLOCK_MODE_MATRIX, optional float -> half and ReLU.
template <typename T, typename U>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const DataCopyParams& p,
                     const DataCopyEnhancedParams& e) {
  ascendc_host::CubeCopyCO1ToCO2(dst.Operand(), src.Operand(), ascendc_host::CubeElemOf<T>(),
                                 ascendc_host::CubeElemOf<U>(), p, e);
}

// ------------------------------------------------------------------------------------------------
// torch_ops_nn extension — NOT part of CANN's Ascend C API.
// A Fixpipe whose datapath also applies, per element of the accumulator tile and in this order:
//   y = acc * scale[col] + shift[col]   (per output column = output channel; either may be absent;
//                                         with `rowwise`, scale[row] / shift[row] instead)
//   y += residual[row * residualStride + col]   (optional, read from GM in the destination type)
//   y = max(y, 0)                                (relu, or p.reluEn)
// then converts (p.quantPre) and writes like Fixpipe<CFG_ROW_MAJOR>. It is what fused
// Conv+BN(+Add)+ReLU kernels use so the convolution result crosses GM once. scale/shift/residual
// are indexed from the tile's first column / row: pass GlobalTensor views offset to the tile.
namespace ext {

template <typename T>
struct FixpipeEpilogue {
  GlobalTensor<float> scale;     // empty (no buffer) = 1
  GlobalTensor<float> shift;     // empty = 0
  GlobalTensor<T> residual;      // empty = none
  uint64_t residualStride = 0;   // elements between residual rows (default: p.dstStride)
  bool relu = false;
  bool rowwise = false;          // scale / shift per row (tile row = output channel) instead of per column
};

template <typename T, typename U>
inline void FixpipeWithEpilogue(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p,
                                const FixpipeEpilogue<T>& e) {
  ascendc_host::FixpipeEpilogueArgs a;
  a.scale = e.scale.GetPhyAddr();
  a.shift = e.shift.GetPhyAddr();
  a.residual = e.residual.GetPhyAddr();
  a.residual_stride = e.residualStride ? e.residualStride : p.dstStride;
  a.scale_elems = e.scale.GetSize();
  a.shift_elems = e.shift.GetSize();
  a.residual_bytes = e.residual.GetSize() * sizeof(T);
  a.relu = e.relu;
  a.rowwise = e.rowwise;
  ascendc_host::CubeFixpipe(dst.Operand(), src.Operand(), ascendc_host::CubeElemOf<T>(),
                            ascendc_host::CubeElemOf<U>(), false, p, &a, "ext::FixpipeWithEpilogue");
}

}  // namespace ext
}  // namespace AscendC

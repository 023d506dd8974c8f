// The LSTM cell in one Ascend C kernel (ATen's _thnn_fused_lstm_cell, float32) on the vector cores:
//   gates = input_gates + hidden_gates (+ bias), chunks i, f, g, o of width H per row;
//   i, f, o = sigmoid, g = tanh; cy = f * cx + i * g; hy = o * tanh(cy); workspace = (i, f, g, o).
// A unit is `rows` batch rows. Each chunk of its rows loads chunk-major ([chunk][row][Hp], one strided
// DataCopyPad per chunk), so every step is one vector instruction over all the unit's rows. The
// activations are the elementwise kernel's instruction sequences (vec_math.h): the same bits as the
// separate sigmoid / tanh ops.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct LstmCellTiling {
  uint32_t batch, hidden;
  uint32_t hp;         // hidden padded to 64 lanes (whole 256 B repeats for Compare / Select)
  uint32_t rows;       // batch rows per unit
  uint32_t has_bias;
  uint64_t units, units_per_core;
  uint32_t block_dim;
  uint32_t ok;         // 0: one row does not fit the UB
};

LstmCellTiling lstm_cell_tiling(uint32_t batch, uint32_t hidden, bool has_bias, const SocInfo& soc);

}  // namespace npu_kernels

// ig, hg: [batch][4H]; bias: [4H] (the sum of both biases; unused unless has_bias); cx: [batch][H];
// hy, cy: [batch][H]; ws: [batch][4H]. All float32, contiguous.
extern "C" void lstm_cell_kernel(uint8_t* ig, uint8_t* hg, uint8_t* bias, uint8_t* cx, uint8_t* hy, uint8_t* cy,
                                 uint8_t* ws, uint8_t* tiling);

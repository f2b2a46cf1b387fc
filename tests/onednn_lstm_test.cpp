// oneDNN's LSTM (the CPU `cudnn` row) against PyTorch's references, forward and backward.
#include "runtime/ops/onednn_lstm.h"
#include "tests/support/build_config.h"
#include "tests/support/library_lstm.h"

#include <gtest/gtest.h>

namespace gj {
namespace {

TEST(OnednnLstm, OneLayerMatchesPyTorch) {
  SKIP_WITHOUT_ONEDNN();
  test::checkLibraryLstm<ops::OnednnLstm>("lstm_1layer", DeviceKind::Cpu);
}

TEST(OnednnLstm, ThreeLayersMatchPyTorch) {
  SKIP_WITHOUT_ONEDNN();
  test::checkLibraryLstm<ops::OnednnLstm>("lstm_3layer", DeviceKind::Cpu);
}

TEST(OnednnLstm, WrongShapesAreClearErrors) {
  SKIP_WITHOUT_ONEDNN();
  ops::OnednnLstm lstm(3, 2, 4, 5, 1);
  Tensor x = Tensor::rand({3, 2, 5}, DType::Float32, 1);
  Tensor h = Tensor::rand({1, 2, 5}, DType::Float32, 2);
  EXPECT_THROW(lstm.forward(x, h, h, {}), Error);
  EXPECT_THROW(lstm.backward(x, h, h), Error);
}

}  // namespace
}  // namespace gj

#pragma once
// GPU tests skip themselves, with the reason, where no CUDA device can be used.
#include <gtest/gtest.h>

#define SKIP_UNLESS_CUDA() GTEST_SKIP() << "no CUDA device: this build runs CUDA kernels only on a GPU machine"

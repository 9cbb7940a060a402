// Training data: synthetic determinism and the .npy loader's errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/error.hpp"
#include "core/npy.hpp"
#include "net/data.hpp"

namespace convlab::train {
namespace {

class Npy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("convlab_train_data_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, std::vector<int64_t> shape, float fill_step = 1.f) {
    Tensor t(std::move(shape));
    for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = float(i % 3) * fill_step;
    const std::string p = (dir_ / name).string();
    write_npy(p, t);
    return p;
  }
  void expect_error(const std::string& images, const std::string& labels, const std::string& fragment,
                    Shape4 in = {2, 3, 4, 4}) {
    try {
      make_npy(images, labels, in, 3);
      ADD_FAILURE() << "no error, expected '" << fragment << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
  std::filesystem::path dir_;
};

TEST_F(Npy, LoadsAndWrapsAround) {
  const std::string im = write("im.npy", {3, 3, 4, 4}), lb = write("lb.npy", {3});
  auto d = make_npy(im, lb, {2, 3, 4, 4}, 3);
  Batch b0, b1;
  d->batch(0, b0);
  d->batch(1, b1);  // samples 2, 0
  EXPECT_EQ(b0.labels, (std::vector<int>{0, 1}));
  EXPECT_EQ(b1.labels, (std::vector<int>{2, 0}));
  EXPECT_EQ(b0.images.shape, (std::vector<int64_t>{2, 3, 4, 4}));
  EXPECT_EQ(b1.images.data()[48], b0.images.data()[0]);
}

TEST_F(Npy, Errors) {
  const std::string im = write("im.npy", {3, 3, 4, 4}), lb = write("lb.npy", {3});
  expect_error((dir_ / "missing.npy").string(), lb, "cannot open");
  expect_error(write("im3.npy", {3, 48}), lb, "must be (N, C, H, W)");
  expect_error(write("im5.npy", {3, 3, 5, 5}), lb, "no resizing");
  expect_error(im, write("lb2.npy", {2}), "must have shape (3,)");
  expect_error(im, write("lbf.npy", {3}, 0.5f), "not an integer");
  expect_error(im, write("lbr.npy", {3}, 2.f), "not an integer in [0, 3)");  // 4 is out of range
  expect_error(im, lb, "fewer than the batch", {4, 3, 4, 4});
}

// A NaN or Inf pixel is refused on load, naming the file, the first bad element and its value
// (ReLU and max pooling would otherwise turn it into a finite loss that "agrees").
TEST_F(Npy, NonFiniteImagesAreRefusedNamingTheFirst) {
  const std::string lb = write("lb.npy", {3});
  for (float bad : {std::nanf(""), std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}) {
    Tensor t({3, 3, 4, 4});
    for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = 0.5f;
    t.data()[1 * 48 + 2 * 16 + 3 * 4 + 1] = bad;  // sample 1, channel 2, row 3, column 1
    t.data()[2 * 48] = bad;                        // a later one is not the first
    const std::string im = (dir_ / "bad.npy").string();
    write_npy(im, t);
    const std::string value = std::isnan(bad) ? "nan" : bad > 0 ? "inf" : "-inf";
    expect_error(im, lb, "images '" + im + "': element 93 (sample 1, channel 2, row 3, column 1) is " + value +
                             ": images must be finite");
  }
}

TEST(Synthetic, DeterministicAndLabelled) {
  auto a = make_synthetic("pattern", {4, 3, 8, 8}, 10, 7), b = make_synthetic("pattern", {4, 3, 8, 8}, 10, 7);
  Batch x, y, z;
  a->batch(3, x);
  b->batch(3, y);
  a->batch(4, z);
  EXPECT_EQ(x.labels, y.labels);
  EXPECT_TRUE(std::equal(x.images.buf.begin(), x.images.buf.end(), y.images.buf.begin()));
  EXPECT_FALSE(std::equal(x.images.buf.begin(), x.images.buf.end(), z.images.buf.begin()));
  for (int l : x.labels) EXPECT_TRUE(l >= 0 && l < 10);
  EXPECT_THROW(make_synthetic("imagenet", {1, 3, 8, 8}, 10, 1), Error);
}

}  // namespace
}  // namespace convlab::train

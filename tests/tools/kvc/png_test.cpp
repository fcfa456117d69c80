// The PNG reader behind png-check, and png-check as a command.
#include <gtest/gtest.h>
#include <zlib.h>

#include "command.hpp"
#include "png.hpp"

namespace {

png::Image canvas(int w, int h) {
  png::Image img;
  img.width = w;
  img.height = h;
  img.rgb.assign(size_t(w) * h * 3, 255);
  return img;
}

void paint(png::Image& img, int x, int y, uint32_t color) {
  uint8_t* p = img.rgb.data() + (size_t(y) * img.width + x) * 3;
  p[0] = color >> 16;
  p[1] = (color >> 8) & 0xff;
  p[2] = color & 0xff;
}

TEST(png, round_trip_and_counts) {
  png::Image img = canvas(40, 30);
  for (int x = 0; x < 40; ++x) paint(img, x, 10, 0x1f6fb4);
  for (int y = 0; y < 30; ++y) paint(img, 5, y, 0xd62728);
  const png::Image back = png::decode(png::encode_rgb(img));
  EXPECT_EQ(back.width, 40);
  EXPECT_EQ(back.height, 30);
  EXPECT_EQ(back.rgb, img.rgb);
  const png::Counts c = png::count_pixels(back, {0x1f6fb4, 0xd62728, 0x00ff00}, 40);
  EXPECT_EQ(c.total, 1200);
  EXPECT_EQ(c.background, 1200 - 40 - 29);
  EXPECT_EQ(c.near_color, (std::vector<long>{39, 30, 0}));
}

// Filtered rows (Sub, Up, Average, Paeth), written by hand, decode to the same pixels.
TEST(png, every_row_filter_is_undone) {
  png::Image img = canvas(3, 5);
  for (int i = 0; i < 15; ++i) paint(img, i % 3, i / 3, 0x102030u * (i + 1));
  std::string encoded = png::encode_rgb(img);
  const png::Image plain = png::decode(encoded);
  // Re-filter: row y with filter y (0 = None .. 4 = Paeth), then rebuild the file.
  std::string raw;
  const int stride = 9;
  auto at = [&](int y, int i) -> int { return (y < 0 || i < 0) ? 0 : img.rgb[size_t(y) * stride + i]; };
  for (int y = 0; y < 5; ++y) {
    raw += static_cast<char>(y);
    for (int i = 0; i < stride; ++i) {
      const int a = at(y, i - 3), b = at(y - 1, i), c = at(y - 1, i - 3);
      int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
      const int pred = y == 0 ? 0 : y == 1 ? a : y == 2 ? b : y == 3 ? (a + b) / 2
                     : (pa <= pb && pa <= pc ? a : (pb <= pc ? b : c));
      raw += static_cast<char>((at(y, i) - pred) & 0xff);
    }
  }
  std::string z(compressBound(raw.size()), '\0');
  uLongf n = z.size();
  compress(reinterpret_cast<Bytef*>(z.data()), &n, reinterpret_cast<const Bytef*>(raw.data()), raw.size());
  z.resize(n);
  // Replace the IDAT chunk (after the signature and the 25-byte IHDR chunk).
  const size_t idat = 8 + 25;
  std::string file = encoded.substr(0, idat);
  std::string body = "IDAT" + z;
  for (int s = 24; s >= 0; s -= 8) file += static_cast<char>((z.size() >> s) & 0xff);
  file += body;
  const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size());
  for (int s = 24; s >= 0; s -= 8) file += static_cast<char>((crc >> s) & 0xff);
  file += encoded.substr(encoded.size() - 12);  // IEND
  EXPECT_EQ(png::decode(file).rgb, plain.rgb);
}

TEST(png, malformed_files_are_errors) {
  const std::string good = png::encode_rgb(canvas(4, 4));
  std::string bad_crc = good;
  bad_crc[30] ^= 1;
  std::string huge = good;
  huge[16] = 0x7f;  // width's top byte
  for (const std::string& bytes : {std::string(), std::string("GIF89a"), good.substr(0, 20),
                                   good.substr(0, good.size() - 12), bad_crc, huge}) {
    EXPECT_THROW(png::decode(bytes), png::Error) << bytes.size();
  }
}

TEST(png, png_check_command_tells_blank_from_drawn) {
  gen_test::TempDir dir;
  png::Image drawn = canvas(100, 100);
  for (int x = 0; x < 100; ++x)
    for (int y = 40; y < 45; ++y) paint(drawn, x, y, 0x1f6fb4);
  gen_test::write_file(dir / "drawn.png", png::encode_rgb(drawn));
  gen_test::write_file(dir / "blank.png", png::encode_rgb(canvas(100, 100)));
  gen_test::write_file(dir / "junk.png", "not a png");
  const std::string tool = gen_test::bin("png-check");
  auto run = [&](const std::string& args) { return gen_test::run(tool, args); };
  const gen_test::Output ok = run(gen_test::quote((dir / "drawn.png").string()) + " --color 1f6fb4");
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("500 of 10000 pixels"), std::string::npos) << ok.out;
  EXPECT_EQ(run(gen_test::quote((dir / "drawn.png").string()) + " --color d62728").exit_code, 1);
  EXPECT_EQ(run(gen_test::quote((dir / "blank.png").string())).exit_code, 1);
  EXPECT_EQ(run(gen_test::quote((dir / "junk.png").string())).exit_code, 2);
  EXPECT_EQ(run(gen_test::quote((dir / "none.png").string())).exit_code, 2);
  EXPECT_EQ(run("").exit_code, 2);
  EXPECT_EQ(run("x.png --color blue").exit_code, 2);
}

}  // namespace

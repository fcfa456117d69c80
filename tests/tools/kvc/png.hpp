// A small PNG reader for checking screenshots (scripts/chart-check.sh): 8-bit RGB, RGBA,
// grey or grey+alpha, not interlaced, which is what Chromium writes. Bounded: sizes are
// checked against the file before anything is allocated, every chunk's CRC is checked,
// and the pixels are inflated with zlib into a buffer of exactly the expected size.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace png {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // [height, width, 3]
};

// Decodes a PNG file's bytes; throws png::Error saying what is wrong. Alpha is dropped
// (Chromium's screenshots are opaque).
Image decode(const std::string& bytes);

// An 8-bit RGB PNG of the image, rows unfiltered (for tests).
std::string encode_rgb(const Image& image);

struct Counts {
  long total = 0;
  long background = 0;  // pixels within `tolerance` of the top-left pixel's colour
  std::vector<long> near_color;  // per colour asked for: pixels within `tolerance` of it
};

// Counts pixels close to the background (the top-left pixel) and to each colour given as
// 0xRRGGBB; "close" is every channel within `tolerance`.
Counts count_pixels(const Image& image, const std::vector<uint32_t>& colors, int tolerance);

}  // namespace png

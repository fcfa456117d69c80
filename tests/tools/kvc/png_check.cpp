// png-check: is a screenshot blank? Used by scripts/chart-check.sh on Chromium's
// screenshot of kvc chart's SVG.
//
//   png-check FILE.png [--color RRGGBB]... [--min-ink FRACTION] [--min-color-pixels N]
//
// Prints the image size, how many pixels differ from the background (the top-left
// pixel's colour) and how many are close to each --color (every channel within 40).
// Exit 0 when at least FRACTION of the pixels (default 0.01) differ from the background
// and each --color has at least N pixels (default 200); 1 when not (blank, or a line is
// missing); 2 when the file cannot be read or is not a PNG it can read.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "png.hpp"
#include "test_support.hpp"

int main(int argc, char** argv) {
  std::string path;
  std::vector<uint32_t> colors;
  std::vector<std::string> names;
  double min_ink = 0.01;
  long min_color_pixels = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--color" && has_value) {
      names.push_back(argv[++i]);
      char* end = nullptr;
      colors.push_back(static_cast<uint32_t>(std::strtoul(names.back().c_str(), &end, 16)));
      if (names.back().size() != 6 || *end != '\0') {
        std::fprintf(stderr, "png-check: --color takes RRGGBB, e.g. 1f6fb4, not '%s'\n", names.back().c_str());
        return 2;
      }
    } else if (arg == "--min-ink" && has_value) {
      min_ink = std::atof(argv[++i]);
    } else if (arg == "--min-color-pixels" && has_value) {
      min_color_pixels = std::atol(argv[++i]);
    } else if (path.empty() && arg[0] != '-') {
      path = arg;
    } else {
      std::fprintf(stderr, "usage: png-check FILE.png [--color RRGGBB]... [--min-ink F] [--min-color-pixels N]\n");
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: png-check FILE.png [--color RRGGBB]... [--min-ink F] [--min-color-pixels N]\n");
    return 2;
  }
  png::Image image;
  try {
    if (!std::filesystem::exists(path)) throw png::Error("no such file");
    image = png::decode(testing_support::read_file(path));
  } catch (const png::Error& e) {
    std::fprintf(stderr, "png-check: %s: %s\n", path.c_str(), e.what());
    return 2;
  }
  const png::Counts c = png::count_pixels(image, colors, 40);
  const long ink = c.total - c.background;
  bool ok = ink >= min_ink * c.total;
  std::printf("png-check: %s: %dx%d, %ld of %ld pixels (%.2f%%) differ from the background",
              path.c_str(), image.width, image.height, ink, c.total, 100.0 * ink / c.total);
  for (size_t k = 0; k < colors.size(); ++k) {
    std::printf("; #%s: %ld pixels", names[k].c_str(), c.near_color[k]);
    ok = ok && c.near_color[k] >= min_color_pixels;
  }
  std::printf("\n");
  if (!ok) std::printf("png-check: FAILED: the image looks blank or a colour is missing\n");
  return ok ? 0 : 1;
}

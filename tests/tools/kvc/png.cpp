// PNG reading and writing for the screenshot check (png.hpp). The format: an 8-byte
// signature, then chunks (4-byte big-endian length, 4-byte type, data, CRC-32 of type and
// data): IHDR first, the zlib stream of the filtered rows split over IDAT chunks, IEND.
#include "png.hpp"

#include <zlib.h>

#include <cstdlib>
#include <cstring>

namespace png {

namespace {

const char SIGNATURE[] = "\x89PNG\r\n\x1a\n";
constexpr int MAX_SIDE = 16384;

uint32_t read_u32(const std::string& s, size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data() + at);
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

void put_u32(std::string& s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((v >> shift) & 0xff);
}

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
}

struct Header {
  int width = 0, height = 0, channels = 0;
};

Header read_header(const std::string& data) {
  if (data.size() != 13) throw Error("IHDR has " + std::to_string(data.size()) + " bytes, not 13");
  Header h;
  const uint32_t w = read_u32(data, 0), hgt = read_u32(data, 4);
  const int depth = static_cast<unsigned char>(data[8]), color = static_cast<unsigned char>(data[9]);
  if (w == 0 || hgt == 0 || w > MAX_SIDE || hgt > MAX_SIDE) {
    throw Error("image size " + std::to_string(w) + "x" + std::to_string(hgt) + " is outside 1 .. 16384");
  }
  if (depth != 8) throw Error("bit depth " + std::to_string(depth) + " (only 8 is read)");
  switch (color) {
    case 0: h.channels = 1; break;
    case 2: h.channels = 3; break;
    case 4: h.channels = 2; break;
    case 6: h.channels = 4; break;
    default: throw Error("colour type " + std::to_string(color) + " (palette images are not read)");
  }
  if (data[10] != 0 || data[11] != 0) throw Error("unknown compression or filter method");
  if (data[12] != 0) throw Error("interlaced images are not read");
  h.width = static_cast<int>(w);
  h.height = static_cast<int>(hgt);
  return h;
}

// Undoes the per-row filters in place. raw: [height, 1 + width * channels].
void unfilter(std::vector<uint8_t>& raw, const Header& h) {
  const size_t stride = size_t(h.width) * h.channels, bpp = h.channels;
  for (int y = 0; y < h.height; ++y) {
    uint8_t* row = raw.data() + y * (stride + 1);
    const uint8_t* up = y ? row - (stride + 1) + 1 : nullptr;
    const int filter = row[0];
    uint8_t* px = row + 1;
    if (filter > 4) throw Error("row " + std::to_string(y) + " has filter type " + std::to_string(filter));
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= bpp ? px[i - bpp] : 0, b = up ? up[i] : 0, c = (up && i >= bpp) ? up[i - bpp] : 0;
      const int add = filter == 1 ? a : filter == 2 ? b : filter == 3 ? (a + b) / 2 : filter == 4 ? paeth(a, b, c) : 0;
      px[i] = static_cast<uint8_t>(px[i] + add);
    }
  }
}

}  // namespace

Image decode(const std::string& bytes) {
  if (bytes.size() < 8 || bytes.compare(0, 8, SIGNATURE, 8) != 0) throw Error("not a PNG file (no signature)");
  Header h;
  std::string idat;
  bool ended = false;
  for (size_t at = 8; !ended;) {
    if (at + 12 > bytes.size()) throw Error("truncated: no IEND chunk");
    const uint32_t length = read_u32(bytes, at);
    if (length > bytes.size() - at - 12) throw Error("truncated chunk at byte " + std::to_string(at));
    const std::string type = bytes.substr(at + 4, 4), data = bytes.substr(at + 8, length);
    const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(bytes.data() + at + 4), length + 4);
    if (crc != read_u32(bytes, at + 8 + length)) throw Error("bad CRC in chunk " + type);
    if (at == 8 && type != "IHDR") throw Error("the first chunk is " + type + ", not IHDR");
    if (type == "IHDR") h = read_header(data);
    if (type == "IDAT") idat += data;
    ended = type == "IEND";
    at += 12 + length;
  }
  const size_t stride = size_t(h.width) * h.channels;
  std::vector<uint8_t> raw((stride + 1) * h.height);
  uLongf size = raw.size();
  if (uncompress(raw.data(), &size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      size != raw.size()) {
    throw Error("the pixel data does not inflate to " + std::to_string(raw.size()) + " bytes");
  }
  unfilter(raw, h);
  Image img;
  img.width = h.width;
  img.height = h.height;
  img.rgb.resize(size_t(h.width) * h.height * 3);
  for (int y = 0; y < h.height; ++y) {
    for (int x = 0; x < h.width; ++x) {
      const uint8_t* p = raw.data() + y * (stride + 1) + 1 + size_t(x) * h.channels;
      uint8_t* q = img.rgb.data() + (size_t(y) * h.width + x) * 3;
      const bool grey = h.channels < 3;
      q[0] = p[0];
      q[1] = grey ? p[0] : p[1];
      q[2] = grey ? p[0] : p[2];
    }
  }
  return img;
}

std::string encode_rgb(const Image& image) {
  std::string out(SIGNATURE, 8);
  auto chunk = [&out](const std::string& type, const std::string& data) {
    put_u32(out, static_cast<uint32_t>(data.size()));
    const std::string body = type + data;
    out += body;
    put_u32(out, crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size()));
  };
  std::string ihdr;
  put_u32(ihdr, image.width);
  put_u32(ihdr, image.height);
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);
  chunk("IHDR", ihdr);
  std::string raw;
  for (int y = 0; y < image.height; ++y) {
    raw += '\0';
    raw.append(reinterpret_cast<const char*>(image.rgb.data()) + size_t(y) * image.width * 3, size_t(image.width) * 3);
  }
  std::string z(compressBound(raw.size()), '\0');
  uLongf z_size = z.size();
  compress(reinterpret_cast<Bytef*>(z.data()), &z_size, reinterpret_cast<const Bytef*>(raw.data()), raw.size());
  z.resize(z_size);
  chunk("IDAT", z);
  chunk("IEND", "");
  return out;
}

Counts count_pixels(const Image& image, const std::vector<uint32_t>& colors, int tolerance) {
  Counts c;
  c.near_color.assign(colors.size(), 0);
  if (image.rgb.empty()) return c;
  auto near = [tolerance](const uint8_t* p, int r, int g, int b) {
    return std::abs(p[0] - r) <= tolerance && std::abs(p[1] - g) <= tolerance && std::abs(p[2] - b) <= tolerance;
  };
  const uint8_t* bg = image.rgb.data();
  const int bg_r = bg[0], bg_g = bg[1], bg_b = bg[2];
  for (size_t i = 0; i < image.rgb.size(); i += 3) {
    const uint8_t* p = image.rgb.data() + i;
    ++c.total;
    c.background += near(p, bg_r, bg_g, bg_b);
    for (size_t k = 0; k < colors.size(); ++k)
      c.near_color[k] += near(p, (colors[k] >> 16) & 0xff, (colors[k] >> 8) & 0xff, colors[k] & 0xff);
  }
  return c;
}

}  // namespace png

#include "safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "gpt2.hpp"
#include "numerics.hpp"

namespace gpt2::safetensors {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian and is used in place");

namespace {

// The format's own limit on the header size.
constexpr uint64_t MAX_HEADER_BYTES = 100u * 1024 * 1024;

}  // namespace

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

size_t dtype_size(const std::string& dtype) {
  static const std::unordered_map<std::string, size_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2},  {"BF16", 2},    {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},   {"U64", 8},     {"U32", 4},
      {"U16", 2}, {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1},
  };
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf or NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // 112 = 127 - 15
  } else if (mantissa == 0) {
    bits = sign;  // +-0
  } else {
    // Subnormal half: mantissa * 2^-24. Normalise it for float.
    int e = 113;  // exponent field the value would have with the leading 1 at bit 10
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (static_cast<uint32_t>(e) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return numerics::float_from_bits(bits);
}

float bf16_to_f32(uint16_t h) { return numerics::float_from_bits(static_cast<uint32_t>(h) << 16); }

struct File::Impl {
  std::string path;
  void* map = nullptr;
  size_t map_size = 0;
  std::string owned;  // the bytes, for File::from_bytes
  std::vector<TensorInfo> tensors;
  std::unordered_map<std::string, size_t> by_name;
  std::map<std::string, std::string> metadata;

  ~Impl() {
    if (map) munmap(map, map_size);
  }
};

File::File(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

const std::string& File::path() const { return impl_->path; }
const std::vector<TensorInfo>& File::tensors() const { return impl_->tensors; }
const std::map<std::string, std::string>& File::metadata() const { return impl_->metadata; }

const TensorInfo* File::find(const std::string& name) const {
  auto it = impl_->by_name.find(name);
  return it == impl_->by_name.end() ? nullptr : &impl_->tensors[it->second];
}

namespace {

// The header nests 3 levels (object, tensor entry, shape list); anything deeper is refused
// while parsing, before it is built.
constexpr int MAX_HEADER_DEPTH = 8;

using Json = nlohmann::ordered_json;  // keeps the file's order of tensors

// A problem found while parsing the header, turned into a ModelError by the caller.
struct HeaderProblem {
  std::string what;
};

// Parses the header, refusing a key that appears twice in one object (the reference
// implementation refuses a file whose tensor name appears twice) and deep nesting.
Json parse_header(const unsigned char* first, const unsigned char* last) {
  std::vector<std::unordered_set<std::string>> keys;  // the keys of the open object at each depth
  std::string tensor;                                 // the top-level key being read
  const Json::parser_callback_t check = [&](int depth, Json::parse_event_t event, Json& parsed) {
    const size_t d = static_cast<size_t>(depth);
    if (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) {
      if (depth >= MAX_HEADER_DEPTH) throw HeaderProblem{"malformed JSON header: nested too deeply"};
      if (keys.size() < d + 2) keys.resize(d + 2);
      keys[d + 1].clear();
    } else if (event == Json::parse_event_t::key) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (depth == 1) tensor = key;
      if (!keys[d].insert(key).second) {
        if (depth == 1) throw HeaderProblem{"tensor '" + key + "' appears twice in the header"};
        throw HeaderProblem{(tensor == "__metadata__" ? std::string("__metadata__") : "tensor '" + tensor + "'") +
                            ": the key '" + key + "' appears twice"};
      }
    }
    return true;
  };
  try {
    return Json::parse(first, last, check);
  } catch (const nlohmann::json::exception& e) {
    throw HeaderProblem{std::string("malformed JSON header: ") + e.what()};
  }
}

void read_metadata(const Json& entry, File::Impl& impl, const std::function<ModelError(const std::string&)>& fail) {
  if (!entry.is_object()) throw fail("malformed JSON header: __metadata__ is not an object");
  for (auto m = entry.begin(); m != entry.end(); ++m) {
    if (!m.value().is_string()) {
      throw fail("malformed JSON header: __metadata__ value '" + m.key() + "' is not a string");
    }
    impl.metadata[m.key()] = m.value().get<std::string>();
  }
}

// One tensor's header entry, checked against itself and the size of the data area.
TensorInfo read_entry(const std::string& name, const Json& entry, uint64_t data_size,
                      const std::function<ModelError(const std::string&)>& bad) {
  if (!entry.is_object()) throw bad("header entry is not a JSON object");
  TensorInfo info;
  info.name = name;
  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) throw bad("header entry has no string 'dtype'");
  info.dtype = dtype->get<std::string>();
  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) throw bad("header entry has no array 'shape'");
  // Element count, refusing anything that could overflow 64 bits.
  unsigned __int128 numel = 1;
  for (const auto& d : *shape) {
    if (!d.is_number_unsigned()) throw bad("'shape' holds something other than a whole number >= 0");
    const uint64_t dim = d.get<uint64_t>();
    if (dim > (uint64_t{1} << 40)) throw bad("a dimension of 'shape' is implausibly large");
    info.shape.push_back(static_cast<int64_t>(dim));
    numel *= dim;
    if (numel > (static_cast<unsigned __int128>(1) << 62)) throw bad("'shape' is implausibly large");
  }
  const auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
    throw bad("header entry has no 'data_offsets' [begin, end] of two whole numbers >= 0");
  }
  info.begin = (*offsets)[0].get<uint64_t>();
  info.end = (*offsets)[1].get<uint64_t>();
  if (info.begin > info.end || info.end > data_size) {
    throw bad("data_offsets [" + std::to_string(info.begin) + ", " + std::to_string(info.end) +
              "] lie outside the data area, which has " + std::to_string(data_size) + " bytes (truncated file?)");
  }
  const size_t esize = dtype_size(info.dtype);
  if (esize != 0) {
    const unsigned __int128 expected = numel * esize;
    if (expected != info.end - info.begin) {
      throw bad("data_offsets [" + std::to_string(info.begin) + ", " + std::to_string(info.end) + "] hold " +
                std::to_string(info.end - info.begin) + " bytes, but shape " + shape_string(info.shape) + " of " +
                info.dtype + " needs " + std::to_string(static_cast<uint64_t>(expected)));
    }
  }
  return info;
}

std::string range_string(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

// As the reference implementation requires: every byte of the data area belongs to exactly
// one tensor. In the order of their offsets, each tensor begins where the previous one
// ends, the first at 0, and the last ends at the end of the data area.
void check_offsets(const std::vector<TensorInfo>& tensors, uint64_t data_size,
                   const std::function<ModelError(const std::string&)>& fail) {
  std::vector<const TensorInfo*> order;
  for (const TensorInfo& t : tensors) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t at = 0;
  const TensorInfo* previous = nullptr;
  for (const TensorInfo* t : order) {
    const std::string offsets = "tensor '" + t->name + "': data_offsets " + range_string(t->begin, t->end);
    if (t->begin < at)
      throw fail(offsets + " overlap those of tensor '" + previous->name + "' " +
                 range_string(previous->begin, previous->end) + " (each byte of data belongs to one tensor)");
    if (t->begin > at)
      throw fail(offsets + " leave the " + std::to_string(t->begin - at) + " bytes from offset " + std::to_string(at) +
                 " of the data area to no tensor" + (previous ? " (after tensor '" + previous->name + "')" : ""));
    at = t->end;
    previous = t;
  }
  if (at != data_size)
    throw fail("the data area has " + std::to_string(data_size - at) + " bytes after " +
               (previous ? "the end of the last tensor, '" + previous->name + "'," : "the header, which lists no tensor,") +
               " that belong to no tensor");
}

// Reads the header of the file in `bytes` into impl (tensors, names, metadata).
void read_layout(File::Impl& impl, const unsigned char* bytes, uint64_t size) {
  const std::string& path = impl.path;
  const std::function<ModelError(const std::string&)> fail = [&](const std::string& why) {
    return ModelError("safetensors file '" + path + "': " + why);
  };
  if (size < 8) {
    throw fail("truncated: the file has " + std::to_string(size) +
               " bytes, fewer than the 8-byte header length that starts every safetensors file");
  }
  uint64_t header_len;
  std::memcpy(&header_len, bytes, 8);
  if (header_len > size - 8) {
    throw fail("header length " + std::to_string(header_len) + " goes past the end of the file (" +
               std::to_string(size) + " bytes): truncated or not a safetensors file");
  }
  if (header_len > MAX_HEADER_BYTES) {
    throw fail("header length " + std::to_string(header_len) + " is over the 100 MB limit");
  }
  const unsigned char* data = bytes + 8 + header_len;
  const uint64_t data_size = size - 8 - header_len;
  Json header;
  try {
    header = parse_header(bytes + 8, bytes + 8 + header_len);
  } catch (const HeaderProblem& p) {
    throw fail(p.what);
  }
  if (!header.is_object()) throw fail("malformed JSON header: not a JSON object");
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") {
      read_metadata(it.value(), impl, fail);
      continue;
    }
    const std::function<ModelError(const std::string&)> bad = [&](const std::string& why) {
      return fail("tensor '" + name + "': " + why);
    };
    TensorInfo info = read_entry(name, it.value(), data_size, bad);
    info.data = data + info.begin;
    impl.by_name[name] = impl.tensors.size();
    impl.tensors.push_back(std::move(info));
  }
  check_offsets(impl.tensors, data_size, fail);
}

}  // namespace

File File::open(const std::string& path) {
  auto fail = [&](const std::string& why) -> ModelError {
    return ModelError("safetensors file '" + path + "': " + why);
  };
  auto impl = std::make_unique<Impl>();
  impl->path = path;

  // O_NONBLOCK: a FIFO opens at once (and is then refused) instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw fail(std::string("cannot stat: ") + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw fail(std::string("not a regular file (") +
               (S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket") + ")");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    read_layout(*impl, nullptr, size);  // throws: truncated
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);
  if (map == MAP_FAILED) throw fail(std::string("cannot mmap: ") + std::strerror(map_errno));
  impl->map = map;
  impl->map_size = size;
  read_layout(*impl, static_cast<const unsigned char*>(map), size);
  return File(std::move(impl));
}

File File::from_bytes(std::string bytes, const std::string& name) {
  auto impl = std::make_unique<Impl>();
  impl->path = name;
  impl->owned = std::move(bytes);
  read_layout(*impl, reinterpret_cast<const unsigned char*>(impl->owned.data()), impl->owned.size());
  return File(std::move(impl));
}

void write_f32(const std::string& path, const std::vector<F32Tensor>& tensors,
               const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const F32Tensor& t : tensors) {
    uint64_t numel = 1;
    for (int64_t d : t.shape) numel *= static_cast<uint64_t>(d);
    header[t.name] = {
        {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + 4 * numel}}};
    offset += 4 * numel;
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw ModelError("safetensors file '" + path + "': cannot create");
  const uint64_t n = text.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const F32Tensor& t : tensors) {
    uint64_t numel = 1;
    for (int64_t d : t.shape) numel *= static_cast<uint64_t>(d);
    out.write(reinterpret_cast<const char*>(t.data), static_cast<std::streamsize>(4 * numel));
  }
  out.close();
  if (!out) throw ModelError("safetensors file '" + path + "': write failed");
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace gpt2::safetensors

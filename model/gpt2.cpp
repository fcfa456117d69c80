// Model: weight storage (synthetic or safetensors), the per-block pieces and forward().
#include "gpt2.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <unordered_map>

#include "detail.hpp"
#include "kernels.hpp"
#include "numerics.hpp"
#include "ops.hpp"
#include "safetensors.hpp"
#include "synthetic.hpp"
#include "synthetic_file.hpp"
#include "synthetic_file_header.hpp"
#include "tensors.hpp"
#include "threads.hpp"

namespace gpt2 {

Config gpt2_small() { return Config{}; }

namespace {

using detail::LayerWeights;

struct Weights {
  kernels::Matrix wte;           // wte transposed: [d_model, vocab], always panels, so the
                                 // logits are a product like every other one
  const float* wpe = nullptr;    // [n_ctx, d_model]
  const float* lnf_w = nullptr;  // [d_model]
  const float* lnf_b = nullptr;  // [d_model]
  std::vector<LayerWeights> layers;

  // Points tensor `id` (tensors.hpp) at its data: floats, except a matrix stored as
  // bfloat16 panels when `bf16` (then `panels` too).
  void set(const TensorSpec& spec, const void* bytes, bool panels, bool bf16 = false) {
    const float* data = static_cast<const float*>(bytes);
    auto matrix = [&](bool transposed) {
      kernels::Matrix m;
      m.n_in = static_cast<int>(spec.shape[transposed ? 1 : 0]);
      m.n_out = static_cast<int>(spec.shape[transposed ? 0 : 1]);
      m.panels = panels;
      if (bf16) {
        m.bf16 = static_cast<const uint16_t*>(bytes);
      } else {
        m.data = data;
      }
      return m;
    };
    switch (spec.id) {
      case 0:
        wte = matrix(true);
        return;
      case 1:
        wpe = data;
        return;
      case 2:
        lnf_w = data;
        return;
      case 3:
        lnf_b = data;
        return;
      default:
        break;
    }
    LayerWeights& l = layers[(spec.id - FIRST_LAYER_TENSOR) / TENSORS_PER_LAYER];
    switch ((spec.id - FIRST_LAYER_TENSOR) % TENSORS_PER_LAYER) {
      case 0:
        l.ln1_w = data;
        break;
      case 1:
        l.ln1_b = data;
        break;
      case 2:
        l.attn_w = matrix(false);
        break;
      case 3:
        l.attn_b = data;
        break;
      case 4:
        l.attn_proj_w = matrix(false);
        break;
      case 5:
        l.attn_proj_b = data;
        break;
      case 6:
        l.ln2_w = data;
        break;
      case 7:
        l.ln2_b = data;
        break;
      case 8:
        l.fc_w = matrix(false);
        break;
      case 9:
        l.fc_b = data;
        break;
      case 10:
        l.mlp_proj_w = matrix(false);
        break;
      case 11:
        l.mlp_proj_b = data;
        break;
    }
  }
};

bool is_matrix(const TensorSpec& spec) { return spec.shape.size() == 2 && spec.id != 1; }

// Zero-filled anonymous memory, asked to be backed by huge pages (fewer page faults while
// filling it, fewer TLB misses while streaming it).
class Arena {
 public:
  Arena() = default;
  explicit Arena(size_t n_bytes) : bytes_(std::max<size_t>(n_bytes, 1)) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      throw ModelError("cannot allocate " + std::to_string(bytes_ >> 20) + " MiB for weights");
    }
#ifdef MADV_HUGEPAGE
    madvise(p, bytes_, MADV_HUGEPAGE);
#endif
    data_ = static_cast<unsigned char*>(p);
  }
  Arena(Arena&& o) noexcept { swap(o); }
  Arena& operator=(Arena&& o) noexcept {
    swap(o);
    return *this;
  }
  ~Arena() {
    if (data_) munmap(data_, bytes_);
  }
  unsigned char* data() const { return data_; }
  size_t bytes() const { return bytes_; }

  // Touches every page, each thread a contiguous share, so that the kernel's page faults
  // (which zero the memory) run in parallel and not on pages another thread is filling.
  void prefault(ThreadPool& pool) {
    const int n = pool.size();
    const size_t per = (bytes_ / n + 4095) / 4096 * 4096;
    unsigned char* p = data_;
    pool.run(n, [&](int t, int) {
      const size_t b = std::min(bytes_, t * per), e = std::min(bytes_, b + per);
      for (size_t i = b; i < e; i += 4096) p[i] = 0;
    });
  }

 private:
  void swap(Arena& o) {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
  }
  unsigned char* data_ = nullptr;
  size_t bytes_ = 0;
};

// Offsets in bytes, each tensor starting on a 64-byte boundary.
size_t round_up64(size_t n) { return (n + 63) / 64 * 64; }

// Bytes a tensor takes in the arena: matrices in the panel layout (wte transposed), as
// bfloat16 when `bf16`, else floats.
size_t stored_bytes(const TensorSpec& spec, bool bf16) {
  if (!is_matrix(spec)) return static_cast<size_t>(spec.numel()) * sizeof(float);
  const bool wte = spec.id == 0;
  return kernels::panel_floats(static_cast<int>(spec.shape[wte ? 1 : 0]),
                               static_cast<int>(spec.shape[wte ? 0 : 1])) *
         (bf16 ? sizeof(uint16_t) : sizeof(float));
}

// Where each tensor of `ids` (in that order) starts in the arena, in bytes; `total`: its
// bytes.
std::vector<size_t> arena_offsets(const std::vector<TensorSpec>& specs, const std::vector<int>& ids,
                                  bool bf16, size_t& total) {
  std::vector<size_t> offset(specs.size());
  total = 0;
  for (int id : ids) {
    offset[id] = total;
    total += round_up64(stored_bytes(specs[id], bf16));
  }
  return offset;
}

// Order in which the arena holds tensors: blocks first (in order), then ln_f, wte and
// wpe: roughly the order one decode step reads them.
std::vector<int> storage_order(const std::vector<TensorSpec>& specs) {
  std::vector<int> order;
  for (size_t id = FIRST_LAYER_TENSOR; id < specs.size(); ++id)
    order.push_back(static_cast<int>(id));
  for (int id : {2, 3, 0, 1}) order.push_back(id);
  return order;
}

// Element i of a safetensors tensor of dtype F32, F16 or BF16, as float.
float read_element(const unsigned char* data, const std::string& dtype, size_t i) {
  if (dtype == "F32") {
    float f;
    std::memcpy(&f, data + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, data + 2 * i, 2);
  return dtype == "F16" ? safetensors::f16_to_f32(h) : safetensors::bf16_to_f32(h);
}

// Where the values of a tensor come from: elements [begin, end) in the Hugging Face
// row-major layout, written to out.
using Source =
    std::function<void(const TensorSpec& spec, uint64_t begin, uint64_t end, float* out)>;

// A piece of work for fill(): elements, panels or wte panels [begin, end) of one tensor.
struct FillJob {
  int id = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
};

constexpr uint64_t FILL_JOB_ELEMENTS = 1 << 16;

// Writes the tensors `ids` into the arena at byte `offset[id]` (vectors as they are,
// matrices in the panel layout, wte transposed into panels, as bfloat16 when `bf16`), on
// all the pool's threads. Throws ModelError if `bf16` and a matrix value is not exactly
// a bfloat16 (keeping its top 16 bits would lose the others).
void fill(const std::vector<TensorSpec>& specs, const std::vector<int>& ids,
          const std::vector<size_t>& offset, unsigned char* base, bool bf16, const Source& source,
          ThreadPool& pool) {
  using kernels::PANEL;
  std::atomic<uint32_t> cut_bits{0};  // the low 16 bits of every matrix value, ORed
  std::vector<FillJob> jobs;
  for (int id : ids) {
    const TensorSpec& spec = specs[id];
    uint64_t units, per_job;
    if (!is_matrix(spec)) {
      units = static_cast<uint64_t>(spec.numel());
      per_job = FILL_JOB_ELEMENTS;
    } else {
      const uint64_t cols = static_cast<uint64_t>(spec.shape[id == 0 ? 0 : 1]);  // wte: vocab
      const uint64_t rows = static_cast<uint64_t>(spec.shape[id == 0 ? 1 : 0]);
      units = (cols + PANEL - 1) / PANEL;
      per_job = std::max<uint64_t>(1, FILL_JOB_ELEMENTS / (rows * PANEL));
    }
    for (uint64_t b = 0; b < units; b += per_job)
      jobs.push_back({id, b, std::min(units, b + per_job)});
  }
  pool.run(static_cast<int>(jobs.size()), [&](int j, int) {
    const FillJob& job = jobs[j];
    const TensorSpec& spec = specs[job.id];
    float* dst = reinterpret_cast<float*>(base + offset[job.id]);
    uint16_t* dst16 = reinterpret_cast<uint16_t*>(base + offset[job.id]);
    uint32_t cut = 0;
    // Matrix element `at` (an index in the panel layout) = v.
    auto put = [&](size_t at, float v) {
      if (!bf16) {
        dst[at] = v;
        return;
      }
      const uint32_t bits = numerics::float_bits(v);
      cut |= bits & 0xffffu;
      dst16[at] = static_cast<uint16_t>(bits >> 16);
    };
    if (!is_matrix(spec)) {
      source(spec, job.begin, job.end, dst + job.begin);
    } else if (job.id != 0) {
      // W[k][jb .. jb + valid) is contiguous in both layouts.
      const int n_in = static_cast<int>(spec.shape[0]), n_out = static_cast<int>(spec.shape[1]);
      float staged[PANEL];
      for (uint64_t p = job.begin; p < job.end; ++p) {
        const int jb = static_cast<int>(p) * PANEL;
        const int valid = std::min(PANEL, n_out - jb);
        for (int k = 0; k < n_in; ++k) {
          const uint64_t first = static_cast<uint64_t>(k) * n_out + jb;
          const size_t at = kernels::panel_index(n_in, k, jb);
          if (!bf16) {
            source(spec, first, first + valid, dst + at);
            continue;
          }
          source(spec, first, first + valid, staged);
          for (int v = 0; v < valid; ++v) put(at + v, staged[v]);
        }
      }
    } else {
      // wte [vocab, d_model] becomes the matrix [d_model, vocab]: a panel holds 32 vocab
      // entries, i.e. 32 rows of wte, transposed.
      const int vocab = static_cast<int>(spec.shape[0]), d = static_cast<int>(spec.shape[1]);
      thread_local std::vector<float> rows;
      rows.resize(static_cast<size_t>(PANEL) * d);
      for (uint64_t p = job.begin; p < job.end; ++p) {
        const int v0 = static_cast<int>(p) * PANEL;
        const int valid = std::min(PANEL, vocab - v0);
        source(spec, static_cast<uint64_t>(v0) * d, static_cast<uint64_t>(v0 + valid) * d,
               rows.data());
        const size_t panel = kernels::panel_index(d, 0, v0);
        for (int c = 0; c < d; ++c) {
          for (int v = 0; v < valid; ++v)
            put(panel + static_cast<size_t>(c) * PANEL + v, rows[static_cast<size_t>(v) * d + c]);
        }
      }
    }
    if (cut != 0) cut_bits.fetch_or(cut, std::memory_order_relaxed);
  });
  if (cut_bits.load() != 0)
    throw ModelError("weights: a matrix value is not a bfloat16 (its low 16 bits are not 0)");
}

void check_layer(const Config& c, int layer, const char* what) {
  if (layer < 0 || layer >= c.n_layer) {
    throw ModelError(std::string(what) + ": layer " + std::to_string(layer) + " is outside 0 .. " +
                     std::to_string(c.n_layer - 1));
  }
}

void check_rows(int n_rows, const char* what) {
  if (n_rows < 0)
    throw ModelError(std::string(what) + ": n_rows " + std::to_string(n_rows) + " < 0");
}

}  // namespace

// WorkCounts as relaxed atomics, laid out [embed, logits, forward, qkv[n_layer],
// finish_block[n_layer]].
class WorkCounters {
 public:
  explicit WorkCounters(int n_layer)
      : n_layer_(n_layer), n_(3 + 2 * static_cast<size_t>(n_layer)),
        c_(std::make_unique<std::atomic<uint64_t>[]>(n_)) {
    reset();
  }
  void add_embed(int rows) { add(0, rows); }
  void add_logits(int rows) { add(1, rows); }
  void add_forward(int rows) { add(2, rows); }
  void add_qkv(int layer, int rows) { add(3 + static_cast<size_t>(layer), rows); }
  void add_finish_block(int layer, int rows) { add(3 + n_layer_ + static_cast<size_t>(layer), rows); }
  void reset() {
    for (size_t i = 0; i < n_; ++i) c_[i].store(0, std::memory_order_relaxed);
  }
  WorkCounts read() const {
    WorkCounts w;
    w.embed = get(0);
    w.logits = get(1);
    w.forward = get(2);
    for (size_t l = 0; l < n_layer_; ++l) {
      w.qkv.push_back(get(3 + l));
      w.finish_block.push_back(get(3 + n_layer_ + l));
    }
    return w;
  }

 private:
  void add(size_t i, int rows) {
    c_[i].fetch_add(static_cast<uint64_t>(rows), std::memory_order_relaxed);
  }
  uint64_t get(size_t i) const { return c_[i].load(std::memory_order_relaxed); }
  size_t n_layer_;
  size_t n_;
  std::unique_ptr<std::atomic<uint64_t>[]> c_;
};

struct Model::Impl {
  Config config;
  std::unique_ptr<WorkCounters> work;  // set once the config is known
  Weights w;
  Arena arena;                            // weights the model owns
  std::shared_ptr<void> mapping;          // a weights file mapped read-only, used in place
  std::optional<safetensors::File> file;  // mapped F32 weights used in place
  std::unique_ptr<ThreadPool> pool;

  // A model's state before its weights are placed: config, counters, threads, layer slots.
  explicit Impl(const Config& c)
      : config(c),
        work(std::make_unique<WorkCounters>(c.n_layer)),
        pool(std::make_unique<ThreadPool>(default_thread_count())) {
    w.layers.resize(static_cast<size_t>(c.n_layer));
  }

  // Gives the tensors `ids` (in that order) room in the arena, each 64-byte aligned
  // (matrices as bfloat16 when `bf16`), and points the weights at it. Returns each id's
  // byte offset in the arena.
  std::vector<size_t> place_in_arena(const std::vector<TensorSpec>& specs,
                                     const std::vector<int>& ids, bool bf16) {
    size_t total = 0;
    const std::vector<size_t> offset = arena_offsets(specs, ids, bf16, total);
    arena = Arena(total);
    arena.prefault(*pool);
    for (int id : ids) {
      const bool matrix = is_matrix(specs[id]);
      w.set(specs[id], arena.data() + offset[id], matrix, matrix && bf16);
    }
    return offset;
  }

  size_t d() const { return static_cast<size_t>(config.d_model); }
};

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

const Config& Model::config() const { return impl_->config; }

void Model::set_threads(int n_threads) {
  impl_->pool = std::make_unique<ThreadPool>(std::max(1, n_threads));
}

int Model::threads() const { return impl_->pool->size(); }

WorkCounts Model::work() const { return impl_->work->read(); }

void Model::reset_work() const { impl_->work->reset(); }

uint64_t Model::decode_weight_bytes() const {
  uint64_t bytes = 0;
  for (const TensorSpec& s : tensor_specs(impl_->config)) {
    if (s.id != 1 && !is_matrix(s)) bytes += 4 * static_cast<uint64_t>(s.numel());
  }
  auto matrix = [&bytes](const kernels::Matrix& m) {
    bytes += static_cast<uint64_t>(m.n_in) * static_cast<uint64_t>(m.n_out) * (m.bf16 ? 2 : 4);
  };
  matrix(impl_->w.wte);
  for (const LayerWeights& l : impl_->w.layers) {
    for (const kernels::Matrix* m : {&l.attn_w, &l.attn_proj_w, &l.fc_w, &l.mlp_proj_w}) matrix(*m);
  }
  return bytes + 4 * static_cast<uint64_t>(impl_->config.d_model);  // and one row of wpe
}

Model Model::synthetic(uint64_t seed, const Config& config) {
  const std::vector<TensorSpec> specs = tensor_specs(config);  // validates
  auto impl = std::make_unique<Impl>(config);
  const std::vector<int> order = storage_order(specs);
  const std::vector<size_t> offset = impl->place_in_arena(specs, order, true);
  fill(
      specs, order, offset, impl->arena.data(), true,
      [seed](const TensorSpec& spec, uint64_t begin, uint64_t end, float* out) {
        synthetic_fill(seed, spec.id, spec.kind, begin, end, out);
      },
      *impl->pool);
  return Model(std::move(impl));
}

Model Model::with_token_row_copied(int from, int to) const {
  const Config& c = impl_->config;
  for (int token : {from, to})
    if (token < 0 || token >= c.vocab)
      throw ModelError("with_token_row_copied: token " + std::to_string(token) + " is not in [0, " +
                       std::to_string(c.vocab) + ")");
  auto impl = std::make_unique<Impl>(c);
  impl->w = impl_->w;                         // every other tensor stays where this model keeps it
  const kernels::Matrix& wte = impl_->w.wte;  // [d_model, vocab]: column `token` is its row
  const size_t n = wte.panels ? kernels::panel_floats(wte.n_in, wte.n_out)
                              : static_cast<size_t>(wte.n_in) * static_cast<size_t>(wte.n_out);
  auto index = [&wte](int k, int token) {
    return wte.panels ? kernels::panel_index(wte.n_in, k, token)
                      : static_cast<size_t>(k) * static_cast<size_t>(wte.n_out) + size_t(token);
  };
  if (wte.bf16) {
    impl->arena = Arena(n * sizeof(uint16_t));
    uint16_t* own = reinterpret_cast<uint16_t*>(impl->arena.data());
    std::copy_n(wte.bf16, n, own);
    for (int k = 0; k < wte.n_in; ++k) own[index(k, to)] = wte.bf16[index(k, from)];
    impl->w.wte.bf16 = own;
  } else {
    impl->arena = Arena(n * sizeof(float));
    float* own = reinterpret_cast<float*>(impl->arena.data());
    std::copy_n(wte.data, n, own);
    for (int k = 0; k < wte.n_in; ++k) own[index(k, to)] = wte.data[index(k, from)];
    impl->w.wte.data = own;
  }
  impl->pool = std::make_unique<ThreadPool>(impl_->pool->size());
  return Model(std::move(impl));
}

// ---- synthetic weights kept in a file ----------------------------------------------------

namespace {

using synthetic_file::HEADER_BYTES;
// layout: layout_signature(); digest: bytes_digest() of the arena
using WeightsHeader = synthetic_file::Header;

// A hash of how the arena is laid out (tensor ids, sizes and byte offsets, the panel width,
// bfloat16 matrices) and of the generator (a few of its values): a file from another
// layout or formula differs.
uint64_t layout_signature(const std::vector<TensorSpec>& specs, const std::vector<size_t>& offset,
                          uint64_t seed) {
  uint64_t h = 1469598103934665603ull;
  auto mix_in = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix_in(static_cast<uint64_t>(kernels::PANEL));
  mix_in(sizeof(uint16_t));  // a matrix element's bytes
  for (const TensorSpec& s : specs) {
    mix_in(static_cast<uint64_t>(s.id));
    mix_in(static_cast<uint64_t>(s.numel()));
    mix_in(offset[s.id]);
    const float v = synthetic_value(seed, s.id, s.kind, 0);
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    mix_in(bits);
  }
  return h;
}

// Four interleaved FNV-style lanes over 64-bit words: every byte counts.
uint64_t bytes_digest(const unsigned char* p, size_t bytes) {
  const size_t words = bytes / 8;
  uint64_t lane[4] = {1469598103934665603ull, 0x9e3779b97f4a7c15ull, 0xbf58476d1ce4e5b9ull,
                      0x94d049bb133111ebull};
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, p + 8 * i, 8);
    uint64_t& l = lane[i & 3];
    l = (l ^ w) * 0x100000001b3ull;
    l ^= l >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + 8 * words, bytes - 8 * words);
  uint64_t h = tail ^ bytes;
  for (uint64_t l : lane) h = (h ^ l) * 0x100000001b3ull;
  return h;
}

ModelError weights_file_error(const std::string& path, const std::string& why) {
  return ModelError("weights file '" + path + "': " + why);
}

// The weights file's arena: synthetic weights, matrices as bfloat16 panels.
struct ArenaPlan {
  std::vector<TensorSpec> specs;
  std::vector<int> order;
  std::vector<size_t> offset;  // bytes
  size_t bytes = 0;
  uint64_t layout = 0;
};

ArenaPlan arena_plan(uint64_t seed, const Config& config) {
  ArenaPlan a;
  a.specs = tensor_specs(config);  // validates
  a.order = storage_order(a.specs);
  a.offset = arena_offsets(a.specs, a.order, true, a.bytes);
  a.layout = layout_signature(a.specs, a.offset, seed);
  return a;
}

WeightsHeader expected_header(uint64_t seed, const Config& c, const ArenaPlan& a) {
  WeightsHeader h{};
  std::memcpy(h.magic, synthetic_file::MAGIC, sizeof h.magic);
  h.seed = seed;
  const int32_t cfg[6] = {c.n_layer, c.n_head, c.head_dim, c.d_model, c.n_ctx, c.vocab};
  std::memcpy(h.config, cfg, sizeof cfg);
  h.bytes = a.bytes;
  h.layout = a.layout;
  return h;
}

// The header's fields against what (seed, config) needs; "" when they agree.
std::string header_problem(const WeightsHeader& got, const WeightsHeader& want) {
  if (!synthetic_file::has_magic(got))
    return "not a synthetic weights file of this format (bad magic)";
  if (got.seed != want.seed)
    return "made for seed " + std::to_string(got.seed) + ", not " + std::to_string(want.seed);
  if (std::memcmp(got.config, want.config, sizeof got.config) != 0)
    return "made for another model shape";
  if (got.bytes != want.bytes || got.layout != want.layout)
    return "made by another version of the model (its layout or generator differs): it is stale";
  return "";
}

// A file mapped read-only, unmapped when the last owner lets go.
std::shared_ptr<void> map_file(const std::string& path, size_t& bytes, bool populate) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw weights_file_error(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(HEADER_BYTES)) {
    ::close(fd);
    throw weights_file_error(path, "shorter than its header: cut off?");
  }
  bytes = static_cast<size_t>(st.st_size);
  void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
  ::close(fd);
  if (p == MAP_FAILED)
    throw weights_file_error(path, std::string("cannot map: ") + std::strerror(errno));
  return std::shared_ptr<void>(p, [bytes](void* q) { ::munmap(q, bytes); });
}

// Where HF element `i` of tensor `s` is among the tensor's stored elements (the layout
// fill() writes).
size_t element_index(const TensorSpec& s, uint64_t i) {
  if (!is_matrix(s)) return static_cast<size_t>(i);
  const int64_t cols = s.shape[1];
  const int k = static_cast<int>(static_cast<int64_t>(i) / cols),
            j = static_cast<int>(static_cast<int64_t>(i) % cols);
  if (s.id != 0) return kernels::panel_index(static_cast<int>(s.shape[0]), k, j);
  // wte [vocab, d_model] is stored transposed: W[c][v] of a [d_model, vocab] matrix.
  return kernels::panel_index(static_cast<int>(cols), j, k);
}

// HF element `i` of tensor `s` in a weights file's arena (matrices as bfloat16).
float stored_value(const unsigned char* arena, const ArenaPlan& a, const TensorSpec& s, uint64_t i) {
  const unsigned char* at = arena + a.offset[s.id];
  if (is_matrix(s)) {
    uint16_t top;
    std::memcpy(&top, at + sizeof top * element_index(s, i), sizeof top);
    return numerics::float_from_bits(static_cast<uint32_t>(top) << 16);
  }
  float f;
  std::memcpy(&f, at + sizeof f * element_index(s, i), sizeof f);
  return f;
}

// Spot checks: 33 elements of every tensor, spread over it, against the generator.
std::string sample_problem(const unsigned char* arena, const ArenaPlan& a, uint64_t seed) {
  constexpr int SAMPLES = 33;
  for (const TensorSpec& s : a.specs) {
    const uint64_t n = static_cast<uint64_t>(s.numel());
    for (int k = 0; k < SAMPLES; ++k) {
      const uint64_t i = n <= 1 ? 0 : (n - 1) * static_cast<uint64_t>(k) / (SAMPLES - 1);
      const float want = synthetic_value(seed, s.id, s.kind, i);
      const float got = stored_value(arena, a, s, i);
      if (std::memcmp(&want, &got, sizeof want) != 0)
        return "element " + std::to_string(i) + " of " + s.name +
               " is not the generator's: the file is corrupt";
    }
  }
  return "";
}

}  // namespace

void write_synthetic_file(const std::string& path, uint64_t seed, const Config& config) {
  const Model model = Model::synthetic(seed, config);
  const std::span<const unsigned char> arena = detail::Access::owned_weights(model);
  const ArenaPlan a = arena_plan(seed, config);
  if (a.bytes != arena.size())
    throw weights_file_error(path, "the arena's size is not the plan's");
  WeightsHeader h = expected_header(seed, config, a);
  h.digest = bytes_digest(arena.data(), a.bytes);
  std::vector<char> header(HEADER_BYTES, 0);
  std::memcpy(header.data(), &h, sizeof h);
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw weights_file_error(tmp, std::string("cannot create: ") + std::strerror(errno));
  bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size();
  ok = ok && std::fwrite(arena.data(), 1, a.bytes, f) == a.bytes;
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw weights_file_error(path, std::string("cannot write: ") + std::strerror(errno));
  }
  verify_synthetic_file(path, seed, config);
}

void verify_synthetic_file(const std::string& path, uint64_t seed, const Config& config) {
  const ArenaPlan a = arena_plan(seed, config);
  size_t bytes = 0;
  const std::shared_ptr<void> map = map_file(path, bytes, false);
  WeightsHeader h{};
  std::memcpy(&h, map.get(), sizeof h);
  const WeightsHeader want = expected_header(seed, config, a);
  if (const std::string p = header_problem(h, want); !p.empty()) throw weights_file_error(path, p);
  if (bytes != HEADER_BYTES + a.bytes)
    throw weights_file_error(path, "has the wrong size: cut off?");
  const unsigned char* arena = static_cast<const unsigned char*>(map.get()) + HEADER_BYTES;
  if (bytes_digest(arena, a.bytes) != h.digest)
    throw weights_file_error(path, "its weights do not match its digest: corrupt");
  if (const std::string p = sample_problem(arena, a, seed); !p.empty())
    throw weights_file_error(path, p);
}

namespace {

// map_synthetic_file, and with `copy` (from, to) token `to`'s row of wte made a copy of
// `from`'s in this mapping: the pages of that row, and only those, become private.
Model map_checked(const std::string& path, uint64_t seed, const Config& config,
                  const std::pair<int, int>* copy) {
  const ArenaPlan a = arena_plan(seed, config);
  size_t bytes = 0;
  std::shared_ptr<void> map = map_file(path, bytes, true);
  WeightsHeader h{};
  std::memcpy(&h, map.get(), sizeof h);
  if (const std::string p = header_problem(h, expected_header(seed, config, a)); !p.empty())
    throw weights_file_error(path, p);
  if (bytes != HEADER_BYTES + a.bytes)
    throw weights_file_error(path, "has the wrong size: cut off?");
  unsigned char* arena = static_cast<unsigned char*>(map.get()) + HEADER_BYTES;
  if (const std::string p = sample_problem(arena, a, seed); !p.empty())
    throw weights_file_error(path, p);
  if (copy) {
    for (int token : {copy->first, copy->second})
      if (token < 0 || token >= config.vocab)
        throw ModelError("map_synthetic_file: token " + std::to_string(token) + " is not in [0, " +
                         std::to_string(config.vocab) + ")");
    // wte transposed, [d_model, vocab] in bfloat16 panels: column `to` lies in one panel.
    uint16_t* wte = reinterpret_cast<uint16_t*>(arena + a.offset[0]);
    const int n_in = config.d_model;
    const size_t first = kernels::panel_index(n_in, 0, copy->second);
    const size_t last = kernels::panel_index(n_in, n_in - 1, copy->second);
    const uintptr_t page = 4096;
    const uintptr_t lo = reinterpret_cast<uintptr_t>(wte + first) & ~(page - 1);
    const uintptr_t hi = (reinterpret_cast<uintptr_t>(wte + last + 1) + page - 1) & ~(page - 1);
    if (::mprotect(reinterpret_cast<void*>(lo), hi - lo, PROT_READ | PROT_WRITE) != 0)
      throw weights_file_error(path,
                               std::string("cannot copy a token's row: ") + std::strerror(errno));
    for (int k = 0; k < n_in; ++k)
      wte[kernels::panel_index(n_in, k, copy->second)] =
          wte[kernels::panel_index(n_in, k, copy->first)];
    ::mprotect(reinterpret_cast<void*>(lo), hi - lo, PROT_READ);
  }
  return detail::Access::on_mapped_weights(config, std::move(map), arena);
}

}  // namespace

Model map_synthetic_file(const std::string& path, uint64_t seed, const Config& config) {
  return map_checked(path, seed, config, nullptr);
}

Model map_synthetic_file_with_token_row_copied(const std::string& path, uint64_t seed, int from,
                                               int to, const Config& config) {
  const std::pair<int, int> copy{from, to};
  return map_checked(path, seed, config, &copy);
}

Model detail::Access::on_mapped_weights(const Config& config, std::shared_ptr<void> mapping,
                                        const unsigned char* arena) {
  const std::vector<TensorSpec> specs = tensor_specs(config);
  const std::vector<int> order = storage_order(specs);
  size_t total = 0;
  const std::vector<size_t> offset = arena_offsets(specs, order, true, total);
  auto impl = std::make_unique<Model::Impl>(config);
  for (int id : order) {
    const bool matrix = is_matrix(specs[id]);
    impl->w.set(specs[id], arena + offset[id], matrix, matrix);
  }
  impl->mapping = std::move(mapping);
  return Model(std::move(impl));
}

namespace {

// Reading a GPT-2 safetensors file, in steps; each error names the file.
using NamedTensors = std::unordered_map<std::string, const safetensors::TensorInfo*>;

ModelError file_error(const std::string& path, const std::string& why) {
  return ModelError("safetensors file '" + path + "': " + why);
}

// The file's tensors by name, without the optional "transformer." prefix.
NamedTensors tensors_by_name(const safetensors::File& file, const std::string& path) {
  NamedTensors named;
  for (const auto& t : file.tensors()) {
    std::string name = t.name;
    if (name.rfind("transformer.", 0) == 0) name = name.substr(12);
    if (!named.emplace(name, &t).second) {
      throw file_error(path, "tensor '" + name + "' appears twice (with and without 'transformer.')");
    }
  }
  return named;
}

const safetensors::TensorInfo& need(const NamedTensors& named, const std::string& name,
                                    const std::string& path) {
  auto it = named.find(name);
  if (it == named.end()) throw file_error(path, "missing tensor '" + name + "'");
  return *it->second;
}

// One more than the highest block index i of a tensor named "h.<i>.*" (0 if none).
int64_t block_count(const NamedTensors& named) {
  int64_t n_layer = 0;
  for (const auto& [name, info] : named) {
    if (name.rfind("h.", 0) != 0) continue;
    int64_t i = 0;
    size_t p = 2;
    while (p < name.size() && name[p] >= '0' && name[p] <= '9' && i < 1000000) {
      i = i * 10 + (name[p] - '0');
      ++p;
    }
    if (p > 2 && p < name.size() && name[p] == '.') n_layer = std::max(n_layer, i + 1);
  }
  return n_layer;
}

// The number of heads: __metadata__'s "n_head" if present, else GPT-2's 64-wide heads.
int64_t head_count(const std::map<std::string, std::string>& meta, int64_t d_model,
                   const std::string& path) {
  auto it = meta.find("n_head");
  if (it == meta.end()) {
    if (d_model == 768) return 12;
    if (d_model % 64 == 0) return d_model / 64;
    throw file_error(path, "cannot tell n_head for d_model " + std::to_string(d_model) +
                               ": add __metadata__ {\"n_head\": \"...\"}");
  }
  int64_t n_head = 0;
  try {
    size_t used = 0;
    n_head = std::stoll(it->second, &used);
    if (used != it->second.size()) n_head = 0;
  } catch (const std::exception&) {
    n_head = 0;
  }
  if (n_head <= 0 || d_model % n_head != 0) {
    throw file_error(path, "__metadata__ n_head '" + it->second + "' is not a divisor of d_model " +
                               std::to_string(d_model));
  }
  return n_head;
}

// The config, from the shapes of wte and wpe, the block names and the metadata.
Config config_from_file(const NamedTensors& named, const safetensors::File& file,
                        const std::string& path) {
  const auto& wte = need(named, "wte.weight", path);
  if (wte.shape.size() != 2) {
    throw file_error(path, "tensor 'wte.weight': wrong shape " + safetensors::shape_string(wte.shape) +
                               ", expected [vocab, d_model]");
  }
  const auto& wpe = need(named, "wpe.weight", path);
  if (wpe.shape.size() != 2 || wpe.shape[1] != wte.shape[1]) {
    throw file_error(path, "tensor 'wpe.weight': wrong shape " + safetensors::shape_string(wpe.shape) +
                               ", expected [n_ctx, " + std::to_string(wte.shape[1]) + "]");
  }
  const int64_t n_layer = block_count(named);
  if (n_layer == 0) throw file_error(path, "missing tensor 'h.0.ln_1.weight' (no transformer blocks h.*)");
  const int64_t d_model = wte.shape[1];
  const int64_t n_head = head_count(file.metadata(), d_model, path);
  const int64_t too_big = int64_t{1} << 30;
  if (wte.shape[0] >= too_big || d_model >= too_big || wpe.shape[0] >= too_big) {
    throw file_error(path, "implausibly large shapes in wte.weight / wpe.weight");
  }
  if (n_layer > 10000) {
    throw file_error(path, "implausible block index h." + std::to_string(n_layer - 1) + " (over 10000 blocks)");
  }
  Config config;
  config.n_layer = static_cast<int>(n_layer);
  config.n_head = static_cast<int>(n_head);
  config.head_dim = static_cast<int>(d_model / n_head);
  config.d_model = static_cast<int>(d_model);
  config.n_ctx = static_cast<int>(wpe.shape[0]);
  config.vocab = static_cast<int>(wte.shape[0]);
  return config;
}

// Each spec's tensor in the file, checked for shape and dtype.
std::vector<const safetensors::TensorInfo*> file_tensors(const std::vector<TensorSpec>& specs,
                                                         const NamedTensors& named,
                                                         const std::string& path) {
  std::vector<const safetensors::TensorInfo*> info(specs.size());
  for (const TensorSpec& spec : specs) {
    const auto& t = need(named, spec.name, path);
    if (t.shape != spec.shape) {
      throw file_error(path, "tensor '" + t.name + "': wrong shape " + safetensors::shape_string(t.shape) +
                                 ", expected " + safetensors::shape_string(spec.shape));
    }
    if (t.dtype != "F32" && t.dtype != "F16" && t.dtype != "BF16") {
      throw file_error(path, "tensor '" + t.name + "': unsupported dtype '" + t.dtype +
                                 "' (supported: F32, F16, BF16)");
    }
    info[spec.id] = &t;
  }
  return info;
}

// A tensor is used in place, in the mapped file, when it is F32, aligned and not wte
// (whose transposed copy the logits read); the others are converted into the arena.
bool used_in_place(const TensorSpec& spec, const safetensors::TensorInfo& t) {
  return spec.id != 0 && t.dtype == "F32" && reinterpret_cast<uintptr_t>(t.data) % alignof(float) == 0;
}

}  // namespace

Model Model::load_safetensors(const std::string& path) {
  safetensors::File file = safetensors::File::open(path);
  const NamedTensors named = tensors_by_name(file, path);
  const Config config = config_from_file(named, file, path);
  std::vector<TensorSpec> specs;
  try {
    specs = tensor_specs(config);
  } catch (const ModelError& e) {
    throw file_error(path, e.what());
  }
  const std::vector<const safetensors::TensorInfo*> info = file_tensors(specs, named, path);

  auto impl = std::make_unique<Impl>(config);
  std::vector<int> copied;
  for (const TensorSpec& spec : specs) {
    if (used_in_place(spec, *info[spec.id])) {  // F32 in the mapped file, row-major
      impl->w.set(spec, reinterpret_cast<const float*>(info[spec.id]->data), false);
    } else {
      copied.push_back(spec.id);
    }
  }
  const std::vector<size_t> offset = impl->place_in_arena(specs, copied, false);
  fill(
      specs, copied, offset, impl->arena.data(), false,
      [&info](const TensorSpec& spec, uint64_t begin, uint64_t end, float* out) {
        const safetensors::TensorInfo& t = *info[spec.id];
        for (uint64_t i = begin; i < end; ++i) out[i - begin] = read_element(t.data, t.dtype, i);
      },
      *impl->pool);
  impl->file = std::move(file);
  return Model(std::move(impl));
}

void Model::embed(const int* tokens, const int* positions, int n_rows, float* x) const {
  const Config& c = impl_->config;
  check_rows(n_rows, "embed");
  for (int r = 0; r < n_rows; ++r) {
    if (tokens[r] < 0 || tokens[r] >= c.vocab) {
      throw ModelError("embed: row " + std::to_string(r) + ": token id " +
                       std::to_string(tokens[r]) + " is outside 0 .. " +
                       std::to_string(c.vocab - 1));
    }
    if (positions[r] < 0 || positions[r] >= c.n_ctx) {
      throw ModelError("embed: row " + std::to_string(r) + ": position " +
                       std::to_string(positions[r]) + " is outside 0 .. " +
                       std::to_string(c.n_ctx - 1) + " (n_ctx " + std::to_string(c.n_ctx) + ")");
    }
  }
  impl_->work->add_embed(n_rows);
  const size_t d = impl_->d();
  const kernels::Matrix& wte = impl_->w.wte;  // [d_model, vocab]: column `token` is its row
  for (int r = 0; r < n_rows; ++r) {
    const float* pos = impl_->w.wpe + static_cast<size_t>(positions[r]) * d;
    float* out = x + static_cast<size_t>(r) * d;
    for (size_t i = 0; i < d; ++i) out[i] = wte.at(static_cast<int>(i), tokens[r]) + pos[i];
  }
}

void Model::qkv(int layer, const float* x, int n_rows, float* q, float* k, float* v) const {
  const Config& c = impl_->config;
  check_layer(c, layer, "qkv");
  check_rows(n_rows, "qkv");
  if (n_rows == 0) return;
  impl_->work->add_qkv(layer, n_rows);
  const auto& lw = impl_->w.layers[layer];
  const size_t d = impl_->d();
  // Scratch kept by the calling thread (a prefill's would be MBs to allocate and zero).
  thread_local std::vector<float> h, t;
  h.resize(n_rows * d);      // [n_rows, d_model]
  t.resize(n_rows * 3 * d);  // [n_rows, 3 d_model]
  kernels::layer_norm_rows(x, lw.ln1_w, lw.ln1_b, n_rows, c.d_model, h.data(), impl_->pool.get());
  kernels::matmul(h.data(), n_rows, lw.attn_w, lw.attn_b, t.data(), kernels::Epilogue::store,
                  impl_->pool.get());
  // q, k, v: t's three column blocks, rows shared over the threads (a prefill's are MBs).
  const float* qkv_rows = t.data();  // (each thread has its own `t`: pass the pointer)
  auto split = [&](int r0, int r1) {
    for (int r = r0; r < r1; ++r) {
      const float* src = qkv_rows + r * 3 * d;
      std::memcpy(q + r * d, src, d * sizeof(float));
      std::memcpy(k + r * d, src + d, d * sizeof(float));
      std::memcpy(v + r * d, src + 2 * d, d * sizeof(float));
    }
  };
  const int n_tasks = std::min(impl_->pool->size(), n_rows / 16);
  if (n_tasks <= 1) return split(0, n_rows);
  const int per = (n_rows + n_tasks - 1) / n_tasks;
  impl_->pool->run(n_tasks,
                   [&](int task, int) { split(task * per, std::min(n_rows, (task + 1) * per)); });
}

void Model::finish_block(int layer, const float* attn, int n_rows, float* x) const {
  const Config& c = impl_->config;
  check_layer(c, layer, "finish_block");
  check_rows(n_rows, "finish_block");
  if (n_rows == 0) return;
  impl_->work->add_finish_block(layer, n_rows);
  const auto& lw = impl_->w.layers[layer];
  const size_t d = impl_->d();
  ThreadPool* pool = impl_->pool.get();
  thread_local std::vector<float> h, f;  // scratch kept by the calling thread, as in qkv
  h.resize(n_rows * d);                  // [n_rows, d_model]
  f.resize(n_rows * 4 * d);              // [n_rows, 4 d_model]
  // x = x + (c_proj.bias + attn . c_proj.weight)
  kernels::matmul(attn, n_rows, lw.attn_proj_w, lw.attn_proj_b, x, kernels::Epilogue::add, pool);
  kernels::layer_norm_rows(x, lw.ln2_w, lw.ln2_b, n_rows, c.d_model, h.data(), pool);
  // f = gelu(c_fc.bias + h . c_fc.weight)
  kernels::matmul(h.data(), n_rows, lw.fc_w, lw.fc_b, f.data(), kernels::Epilogue::gelu, pool);
  // x = x + (mlp.c_proj.bias + f . mlp.c_proj.weight)
  kernels::matmul(f.data(), n_rows, lw.mlp_proj_w, lw.mlp_proj_b, x, kernels::Epilogue::add, pool);
}

void Model::logits(const float* x, int n_rows, float* logits) const {
  const Config& c = impl_->config;
  check_rows(n_rows, "logits");
  if (n_rows == 0) return;
  impl_->work->add_logits(n_rows);
  std::vector<float> h(n_rows * impl_->d());
  kernels::layer_norm_rows(x, impl_->w.lnf_w, impl_->w.lnf_b, n_rows, c.d_model, h.data(),
                           impl_->pool.get());
  // logits[r][v] = 0 + sum_k h[r][k] * wte[v][k], k in order
  kernels::matmul(h.data(), n_rows, impl_->w.wte, nullptr, logits, kernels::Epilogue::store,
                  impl_->pool.get());
}

void check_tokens(std::span<const int> tokens, const Config& c) {
  if (tokens.size() > static_cast<size_t>(c.n_ctx)) {
    throw ModelError("forward: " + std::to_string(tokens.size()) +
                     " tokens, more than n_ctx = " + std::to_string(c.n_ctx));
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.vocab) {
      throw ModelError("forward: token " + std::to_string(i) + " has id " +
                       std::to_string(tokens[i]) + ", outside 0 .. " + std::to_string(c.vocab - 1));
    }
  }
}

std::vector<float> Model::forward(std::span<const int> tokens) const {
  const std::vector<int> positions = detail::forward_positions(*this, tokens);
  const int n = static_cast<int>(tokens.size());
  if (n == 0) return {};
  const size_t d = impl_->d();
  std::vector<float> x(n * d), q(n * d), k(n * d), v(n * d), attn(n * d);
  embed(tokens.data(), positions.data(), n, x.data());
  for (int layer = 0; layer < impl_->config.n_layer; ++layer) {
    qkv(layer, x.data(), n, q.data(), k.data(), v.data());
    detail::causal_attention(*this, q.data(), k.data(), v.data(), 0, n, attn.data());
    finish_block(layer, attn.data(), n, x.data());
  }
  return detail::all_logits(*this, x.data(), n);
}

// ---- detail ------------------------------------------------------------------------------

namespace detail {

ThreadPool& Access::pool(const Model& model) { return *model.impl_->pool; }

const LayerWeights& Access::layer(const Model& model, int layer) {
  check_layer(model.config(), layer, "layer weights");
  return model.impl_->w.layers[static_cast<size_t>(layer)];
}

const kernels::Matrix& Access::wte(const Model& model) { return model.impl_->w.wte; }

void Access::count_embed(const Model& model, int rows) { model.impl_->work->add_embed(rows); }

void Access::count_qkv(const Model& model, int layer, int rows) {
  model.impl_->work->add_qkv(layer, rows);
}

void Access::count_forward(const Model& model, int rows) { model.impl_->work->add_forward(rows); }

std::span<const unsigned char> Access::owned_weights(const Model& model) {
  return {model.impl_->arena.data(), model.impl_->arena.bytes()};
}

void attention_scores(const float* q, const float* k, int n, int stride, int dim, float scale,
                      float* scores) {
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    // The cache rows are short and far apart; fetch the ones 8 keys ahead early.
    if (j + 12 <= n) {
      for (int r = 8; r < 12; ++r) {
        const float* row = k + static_cast<size_t>(j + r) * stride;
        for (int i = 0; i < dim; i += 16) __builtin_prefetch(row + i, 0, 3);
      }
    }
    const float* k0 = k + static_cast<size_t>(j) * stride;
    const float* k1 = k0 + stride;
    const float* k2 = k1 + stride;
    const float* k3 = k2 + stride;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (int i = 0; i < dim; ++i) {
      s0 += q[i] * k0[i];
      s1 += q[i] * k1[i];
      s2 += q[i] * k2[i];
      s3 += q[i] * k3[i];
    }
    scores[j] = s0 * scale;
    scores[j + 1] = s1 * scale;
    scores[j + 2] = s2 * scale;
    scores[j + 3] = s3 * scale;
  }
  for (; j < n; ++j) scores[j] = dot(q, k + static_cast<size_t>(j) * stride, dim) * scale;
}

namespace {

// Queries of one task of the many-query attention.
constexpr int QUERY_BLOCK = 64;

// Head h, queries i0 .. i1-1 (positions first_pos + i): the scores of a block of queries
// are one matrix product (each score a dot product in gpt2::dot's order, then times the
// scale), then a softmax and a weighted sum per query, over its own keys only.
void attention_block(const HeadLayout& a, int first_pos, int i0, int i1, int h) {
  const int dim = a.dim;
  const int n_q = i1 - i0, n_keys = first_pos + i1;
  const float* k = a.k + static_cast<size_t>(h / a.group) * a.k_head;
  const float* v = a.v + static_cast<size_t>(h / a.group) * a.v_head;
  thread_local std::vector<float> qh, kt, scores;
  qh.resize(static_cast<size_t>(n_q) * dim);         // [n_q, dim]
  kt.resize(kernels::panel_floats(dim, n_keys));     // [dim, n_keys], panel layout
  scores.resize(static_cast<size_t>(n_q) * n_keys);  // [n_q, n_keys]
  for (int r = 0; r < n_q; ++r) {
    std::memcpy(qh.data() + static_cast<size_t>(r) * dim,
                a.q + static_cast<size_t>(i0 + r) * a.q_stride + h * a.q_head, dim * sizeof(float));
  }
  for (int j = 0; j < n_keys; ++j) {  // kt[t][j] = k[j][t]
    const float* kj = k + static_cast<size_t>(j) * a.k_stride;
    float* column = kt.data() + kernels::panel_index(dim, 0, j);
    for (int t = 0; t < dim; ++t) column[static_cast<size_t>(t) * kernels::PANEL] = kj[t];
  }
  // scores[r][j] = 0 + q[0] * k[j][0] + q[1] * k[j][1] + ...: gpt2::dot, for every key
  // of the block; a query uses the keys up to its own position.
  const kernels::Matrix keys{kt.data(), dim, n_keys, true};
  kernels::matmul(qh.data(), n_q, keys, nullptr, scores.data(), kernels::Epilogue::store, nullptr);
  for (int r = 0; r < n_q; ++r) {
    const int i = i0 + r, n = first_pos + i + 1;
    float* s = scores.data() + static_cast<size_t>(r) * n_keys;
    for (int j = 0; j < n; ++j) s[j] = s[j] * a.scale;
    softmax(s, n);
    weighted_sum(s, v, n, static_cast<int>(a.v_stride), a.value_dim,
                 a.out + static_cast<size_t>(i) * a.out_stride + h * a.out_head);
  }
}

}  // namespace

void causal_attention(const Model& model, const HeadLayout& a, int first_pos, int n_query) {
  if (first_pos < 0 || n_query < 0) {
    throw ModelError("causal_attention: positions " + std::to_string(first_pos) + " .. " +
                     std::to_string(first_pos + n_query - 1));
  }
  if (a.n_head < 1 || a.group < 1 || a.n_head % a.group != 0 || a.dim < 1 || a.value_dim < 1)
    throw ModelError("causal_attention: bad head layout");
  ThreadPool& pool = Access::pool(model);
  const int n_head = a.n_head;
  if (n_query >= 4) {
    // Tasks: (head, block of queries) pairs, the later blocks (more keys, more work) first,
    // so that the threads finish together.
    const int n_blocks = (n_query + QUERY_BLOCK - 1) / QUERY_BLOCK;
    pool.run(n_blocks * n_head, [&](int task, int) {
      const int b = n_blocks - 1 - task / n_head, h = task % n_head;
      attention_block(a, first_pos, b * QUERY_BLOCK, std::min(n_query, (b + 1) * QUERY_BLOCK), h);
    });
    return;
  }
  // A few queries (a decode step): tasks are (query, head) pairs.
  pool.run(n_query * n_head, [&](int task, int) {
    const int i = task / n_head, h = task % n_head;
    const int n = first_pos + i + 1;  // keys 0 .. first_pos + i
    const size_t g = static_cast<size_t>(h / a.group);
    thread_local std::vector<float> scores;
    if (scores.size() < static_cast<size_t>(n)) scores.resize(n);
    attention_scores(a.q + static_cast<size_t>(i) * a.q_stride + h * a.q_head, a.k + g * a.k_head,
                     n, static_cast<int>(a.k_stride), a.dim, a.scale, scores.data());
    softmax(scores.data(), n);
    weighted_sum(scores.data(), a.v + g * a.v_head, n, static_cast<int>(a.v_stride), a.value_dim,
                 a.out + static_cast<size_t>(i) * a.out_stride + h * a.out_head);
  });
}

void causal_attention(const Model& model, const float* q, const float* k, const float* v,
                      int first_pos, int n_query, float* out) {
  const Config& c = model.config();
  if (first_pos < 0 || n_query < 0 || first_pos + n_query > c.n_ctx) {
    throw ModelError("causal_attention: positions " + std::to_string(first_pos) + " .. " +
                     std::to_string(first_pos + n_query - 1) + " do not fit n_ctx " +
                     std::to_string(c.n_ctx));
  }
  causal_attention(model, heads_of(c, q, k, v, static_cast<size_t>(c.d_model), 1, out), first_pos,
                   n_query);
}

HeadLayout heads_of(const Config& c, const float* q, const float* k, const float* v,
                    size_t kv_stride, int group, float* out) {
  HeadLayout a;
  a.n_head = c.n_head;
  a.group = group;
  a.dim = a.value_dim = c.head_dim;
  a.scale = attention_scale(c.head_dim);
  a.q = q;
  a.k = k;
  a.v = v;
  a.out = out;
  a.q_stride = a.out_stride = static_cast<size_t>(c.d_model);
  a.k_stride = a.v_stride = kv_stride;
  a.q_head = a.k_head = a.v_head = a.out_head = static_cast<size_t>(c.head_dim);
  return a;
}

std::vector<int> forward_positions(const Model& model, std::span<const int> tokens) {
  check_tokens(tokens, model.config());
  const int n = static_cast<int>(tokens.size());
  Access::count_forward(model, n);
  std::vector<int> positions(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) positions[static_cast<size_t>(i)] = i;
  return positions;
}

std::vector<float> all_logits(const Model& model, const float* x, int n) {
  std::vector<float> out(static_cast<size_t>(n) * model.config().vocab);
  model.logits(x, n, out.data());
  return out;
}

void embed_tokens(const Model& model, const int* tokens, int n_rows, float* x, const char* what) {
  const Config& c = model.config();
  check_rows(n_rows, what);
  for (int r = 0; r < n_rows; ++r) {
    if (tokens[r] < 0 || tokens[r] >= c.vocab)
      throw ModelError(std::string(what) + ": row " + std::to_string(r) + ": token id " +
                       std::to_string(tokens[r]) + " is outside 0 .. " +
                       std::to_string(c.vocab - 1));
  }
  Access::count_embed(model, n_rows);
  const kernels::Matrix& wte = Access::wte(model);  // [d_model, vocab]: column `token` is its row
  for (int r = 0; r < n_rows; ++r) {
    float* out = x + static_cast<size_t>(r) * c.d_model;
    for (int i = 0; i < c.d_model; ++i) out[i] = wte.at(i, tokens[r]);
  }
}

kernels::Matrix column_view(const kernels::Matrix& m, int j0, int n_cols, const char* what) {
  if (!m.panels) {
    throw ModelError(std::string(what) +
                     ": needs weights in the panel layout (synthetic weights, or a safetensors "
                     "file of F16 or BF16 tensors); these are float weights used in place");
  }
  if (j0 < 0 || n_cols < 1 || j0 % kernels::PANEL != 0 || j0 + n_cols > m.n_out)
    throw ModelError(std::string(what) + ": columns " + std::to_string(j0) + " .. " +
                     std::to_string(j0 + n_cols - 1) + " are not a panel range of the matrix");
  kernels::Matrix v = m;
  const size_t at = kernels::panel_index(m.n_in, 0, j0);
  if (m.bf16) {
    v.bf16 = m.bf16 + at;
  } else {
    v.data = m.data + at;
  }
  v.n_out = n_cols;
  return v;
}

}  // namespace detail
}  // namespace gpt2

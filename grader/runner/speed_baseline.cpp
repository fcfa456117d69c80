// speed-baseline: the yardstick of stage speed. Runs one timed case's work with the
// model's own cached loop (model/generate.hpp: extend), on one thread, and prints what it
// cost, so the grader can set the learner's time beside it, taken in the same run. Trusted
// code: the grader starts it, never a runner, and no learner code is linked into it.
//
//   speed-baseline --weights FILE --seed 2026 --input '{"past": 896, "past_seed": 7,
//                  "prompt": [464], "max_new_tokens": 4}'
//
// prints one line of JSON:
//   {"cpu_s": 0.21, "steps": 4, "tokens": [...], "bytes_per_step": 317000000,
//    "read_gb_s": 9.8}
// cpu_s: this thread's CPU time for the case's work (the cache's memory taken, the past
// written into it, the prompt and every decode step), after one untimed warm-up step that
// brings the weights' pages in. bytes_per_step: what a decode step must read at least, on average over the
// case's steps: the weights (Model::decode_weight_bytes) and the cached keys and values.
// read_gb_s: a plain streaming read of the weights file, timed right after.
// Exit status 2 for bad arguments, 1 when the weights or the input are refused.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "course/speed.hpp"
#include "generate.hpp"
#include "synthetic_file.hpp"

namespace {

using json = nlohmann::json;

double thread_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double wall_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

int whole(const json& input, const char* name, int least, int most) {
  const auto it = input.find(name);
  if (it == input.end() || !it->is_number_integer() || it->get<int64_t>() < least ||
      it->get<int64_t>() > most)
    throw std::invalid_argument(std::string("\"") + name + "\" must be a whole number from " +
                                std::to_string(least) + " to " + std::to_string(most));
  return it->get<int>();
}

// The case's past written into the model's cache, as course::fill_past writes it into a
// ModelCache: position p of layer l, key and value, from course::past_value.
void write_past(gpt2::DecodeCache& cache, int past, uint64_t seed) {
  for (int l = 0; l < int(cache.k.size()); ++l)
    for (int pos = 0; pos < past; ++pos)
      for (int i = 0; i < course::d_model; ++i) {
        cache.k[size_t(l)][size_t(pos) * course::d_model + size_t(i)] =
            course::past_value(seed, l, pos, i, false);
        cache.v[size_t(l)][size_t(pos) * course::d_model + size_t(i)] =
            course::past_value(seed, l, pos, i, true);
      }
  cache.length = past;
}

// A streaming read of the file's bytes, mapped with its pages brought in first: GB/s.
double streaming_read_gb_s(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
    ::close(fd);
    return 0;
  }
  const size_t bytes = size_t(st.st_size) / 64 * 64;
  void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return 0;
  const auto* words = static_cast<const uint64_t*>(p);
  const size_t n = bytes / 8;
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
  const double t0 = wall_s();
  for (size_t i = 0; i < n; i += 8) {
    a0 += words[i];
    a1 += words[i + 1];
    a2 += words[i + 2];
    a3 += words[i + 3];
    a4 += words[i + 4];
    a5 += words[i + 5];
    a6 += words[i + 6];
    a7 += words[i + 7];
  }
  const double seconds = wall_s() - t0;
  volatile uint64_t sink = a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7;
  (void)sink;
  ::munmap(p, bytes);
  return seconds > 0 ? double(bytes) / seconds * 1e-9 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string weights, input_text;
  long long seed = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--weights")
      weights = argv[i + 1];
    else if (flag == "--seed")
      seed = std::atoll(argv[i + 1]);
    else if (flag == "--input")
      input_text = argv[i + 1];
    else
      seed = -2;
  }
  if (seed < 0 || weights.empty() || input_text.empty() || argc % 2 == 0) {
    std::cerr << "usage: speed-baseline --weights FILE --seed N --input JSON\n";
    return 2;
  }
  try {
    const json input = json::parse(input_text);
    gpt2::Model model = gpt2::map_synthetic_file(weights, uint64_t(seed));
    model.set_threads(1);  // as the runners compute
    const int past = whole(input, "past", 0, course::kMaxSpeedPast);
    const auto ps = input.find("past_seed");
    if (ps == input.end() || !ps->is_number_unsigned())
      throw std::invalid_argument("\"past_seed\" must be a whole number, 0 or more");
    const uint64_t past_seed = ps->get<uint64_t>();
    const auto pr = input.find("prompt");
    if (pr == input.end() || !pr->is_array() || pr->empty() || pr->size() > 64)
      throw std::invalid_argument("\"prompt\" must be a list of 1 to 64 token ids");
    std::vector<int> prompt;
    for (const json& t : *pr) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 ||
          t.get<int64_t>() >= model.config().vocab)
        throw std::invalid_argument("a token id of \"prompt\" is out of range");
      prompt.push_back(t.get<int>());
    }
    const int n_new = whole(input, "max_new_tokens", 1, 64);
    const int capacity = past + int(prompt.size()) + n_new;
    if (capacity > model.config().n_ctx)
      throw std::invalid_argument("the past, the prompt and the new tokens do not fit in " +
                                  std::to_string(model.config().n_ctx) + " positions");

    std::vector<float> logits(size_t(model.config().vocab));
    {
      // Warm-up: one step, untimed, in a cache of its own, so that the weights' pages are in.
      gpt2::DecodeCache warm = gpt2::make_decode_cache(model, 1);
      gpt2::extend(model, warm, std::span<const int>(prompt.data(), 1), logits.data());
    }

    std::vector<int> tokens;
    const double t0 = thread_cpu_s();
    // Timed from here, as the learner's call is: the cache's memory is taken and written
    // here too, as the learner's cache takes and writes its own.
    gpt2::DecodeCache cache = gpt2::make_decode_cache(model, capacity);
    write_past(cache, past, past_seed);
    gpt2::extend(model, cache, prompt, logits.data());
    tokens.push_back(gpt2::argmax(logits));
    for (int i = 1; i < n_new; ++i) {
      const int token = tokens.back();
      gpt2::extend(model, cache, std::span<const int>(&token, 1), logits.data());
      tokens.push_back(gpt2::argmax(logits));
    }
    const double cpu = thread_cpu_s() - t0;

    // Each step reads the weights once and the keys and values of every position it
    // attends over: 2 x layers x d_model floats a position.
    const double per_position = 2.0 * double(model.config().n_layer) * course::d_model * 4;
    double cache_bytes = 0;
    for (int i = 0; i < n_new; ++i)
      cache_bytes += per_position * double(past + int(prompt.size()) + i);
    const double bytes_per_step = double(model.decode_weight_bytes()) + cache_bytes / n_new;
    const double read_gb_s = streaming_read_gb_s(weights);
    std::cout << json{{"cpu_s", cpu},
                      {"steps", n_new},
                      {"tokens", tokens},
                      {"bytes_per_step", bytes_per_step},
                      {"read_gb_s", read_gb_s}}
                     .dump()
              << "\n";
  } catch (const std::exception& e) {
    std::cerr << "speed-baseline: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

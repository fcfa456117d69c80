// The catalogue of known mistakes proves itself, stage by stage (one test per stage, so
// CTest can run stages side by side):
//  * the confusion matrix: each NAME.mistake runner (stages/<folder>/mistakes), graded on its stage, is
//    identified as its own (diagnosis, parameter) and as nothing else;
//  * each NAME.alternative runner (right, written another way) passes every case;
//  * the grader's text for each mistake equals its golden transcript, stages/<folder>/golden/NAME.txt
//    (KVCOURSE_UPDATE_GOLDEN=1 rewrites them; see tests/buggy/README.md).
// Graded with the committed fixtures, this also proves the mistakes' records in them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "judge/diagnose.hpp"
#include "judge/stages.hpp"
#include "judge/variants.hpp"
#include "test_support.hpp"

using testing_support::bin;
using testing_support::run;
using testing_support::source_dir;
using testing_support::TempDir;
namespace fs = std::filesystem;

namespace {

// Under AddressSanitizer a GPT-2 runner is 5 to 7 times slower (14 s for the one-token
// stage, 29 s for prefix-reuse), too slow to grade all the runners of stages 3-5 and 10
// there. A sanitizer build grades, of a stage that has runners in this sample, only those,
// and every runner of the other stages. The sample is chosen to take the grader through
// each kind of localization (shape rows, a logits shape, NaN, a passing alternative, a
// shared cache, work counts); the default build grades them all.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif
const std::set<std::string> kSanitizedSample = {"double_append", "logits_of_last_step_only", "mask_off_by_one",
                                                "masked_left_out", "reuse_no_clone",
                                                "continuation_recomputes_prefix", "generate_on_saved_cache"};

using course::VariantFile;

std::vector<VariantFile> all_variants() {
  return course::stage_variant_files(source_dir() / "stages", course::stage_table());
}

std::vector<VariantFile> variants_of(const std::string& stage) {
  std::vector<VariantFile> out;
  bool sampled = false;  // the stage has runners in kSanitizedSample
  for (VariantFile& v : all_variants()) {
    if (v.stage != stage) continue;
    sampled = sampled || kSanitizedSample.count(v.name);
    out.push_back(v);
  }
  if (kSanitized && sampled)
    out.erase(std::remove_if(out.begin(), out.end(), [](const VariantFile& v) { return !kSanitizedSample.count(v.name); }),
              out.end());
  return out;
}

struct Graded {
  int exit_code = -1;
  std::string text;
};

// Where a mistake's code threw ("threw T in F (file:line), called from G (file:line): ...")
// names the build's own paths and lines, which depend on the build folder and the
// optimisation (the sanitizer preset's -O1 inlines differently): the transcript keeps
// that a place was named, as " in <where it was thrown>". sandbox_test checks the places.
std::string without_throw_sites(std::string text) {
  for (const std::string marker : {" threw ", " thrown, got "}) {
    for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + 1)) {
      const size_t in = text.find(' ', at + marker.size());
      if (in == std::string::npos || text.compare(in, 4, " in ") != 0) continue;
      const size_t line_end = std::min(text.find('\n', in), text.size());
      size_t end = text.find("): ", in);
      if (end == std::string::npos || end > line_end) end = text.rfind(')', line_end);
      if (end == std::string::npos || end < in) continue;
      text.replace(in, end + 1 - in, " in <where it was thrown>");
    }
  }
  return text;
}

// Grades each variant's runner on the stage with the grader's text output, two at a time.
std::vector<Graded> grade_all(const std::vector<VariantFile>& variants, const std::string& stage) {
  std::vector<Graded> out(variants.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < variants.size();) {
      TempDir state;
      const std::string runner = bin(variants[i].runner_name());
      auto r = run("KVCOURSE_PROGRESS=" + (state / "p.json").string() + " NO_COLOR=1 " + bin("grader") +
                       " --no-times --timeout 120 --runner " + runner + " --stage " + stage,
                   false);
      // The last line says how the sandbox ran, which depends on the machine, not the code.
      std::string text = r.output;
      const size_t line = text.rfind("\nsandbox: ");
      if (line != std::string::npos) text.erase(line + 1);
      out[i] = {r.exit_code, without_throw_sites(text)};
    }
  };
  std::thread a(worker), b(worker);
  a.join();
  b.join();
  return out;
}

// The "[id: parameter]" entries of the text's "Identified:" block (lines "    [id] title"
// or "    [id: parameter] title").
std::set<std::string> identified(const std::string& text) {
  std::set<std::string> out;
  std::istringstream lines(text);
  bool in_block = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  Identified:", 0) == 0) in_block = true;
    const size_t end = line.find("] ");
    if (in_block && line.rfind("    [", 0) == 0 && end != std::string::npos) out.insert(line.substr(5, end - 5));
  }
  return out;
}

// Issue 25: in the stages marked so in the manifest every failing case that returned an
// output gets a "where:" line: the failing cases' first lines ("  FAIL NAME") that have none.
std::vector<std::string> failures_without_where(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream lines(text);
  std::string head, block;
  auto close = [&] {
    bool output = true;  // the case's verdict is about its output, not a throw, a crash or a limit
    for (const char* other : {"the code under test ", "the runner", "to be thrown", "no answer after", "the answer took",
                              "not implemented yet"})
      output = output && block.find(other) == std::string::npos;
    if (!head.empty() && output && block.find("\n         where: ") == std::string::npos) out.push_back(head);
    head.clear();
    block.clear();
  };
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  FAIL ", 0) == 0 || line.rfind("  PASS ", 0) == 0 || line.rfind("  Identified", 0) == 0) {
      close();
      if (line.rfind("  FAIL ", 0) == 0) head = line;
    }
    block += "\n" + line;
  }
  close();
  return out;
}

// The stages whose every failing case with an output must say where it departs: those
// marked "where_on_every_failure" in stages/manifest.json.
bool where_on_every_failure(const std::string& slug) {
  const course::json manifest =
      course::json::parse(testing_support::read_file(source_dir() / "stages" / "manifest.json"));
  for (const course::json& stage : manifest["stages"])
    if (stage.value("slug", "") == slug) return stage.value("where_on_every_failure", false);
  return false;
}

class catalogue : public testing::TestWithParam<std::string> {};

TEST_P(catalogue, each_mistake_is_named_alone_and_each_alternative_passes) {
  const std::string stage = GetParam();
  std::vector<VariantFile> variants = variants_of(stage);
  ASSERT_FALSE(variants.empty()) << "no .mistake or .alternative file for stage " << stage;
  std::vector<Graded> graded = grade_all(variants, stage);
  const bool update = std::getenv("KVCOURSE_UPDATE_GOLDEN") && *std::getenv("KVCOURSE_UPDATE_GOLDEN");
  for (size_t i = 0; i < variants.size(); ++i) {
    const VariantFile& v = variants[i];
    SCOPED_TRACE(v.name);
    const Graded& g = graded[i];
    if (!v.mistake) {
      EXPECT_EQ(g.exit_code, 0) << "the alternative " << v.name << " must pass every case:\n" << g.text;
      continue;
    }
    EXPECT_EQ(g.exit_code, 1) << g.text.substr(0, 3000);
    const std::string own = v.id + (v.parameter.empty() ? "" : ": " + v.parameter);
    EXPECT_EQ(identified(g.text), std::set<std::string>{own}) << "diagnoses named for " << v.name;
    if (where_on_every_failure(stage)) {
      EXPECT_EQ(failures_without_where(g.text), std::vector<std::string>{})
          << "failing cases of " << v.name << " with an output and no where: line";
    }
    const fs::path golden = course::golden_dir(source_dir() / "stages", *course::find_stage(stage)) / (v.name + ".txt");
    if (update) {
      testing_support::write_file(golden, g.text);
      continue;
    }
    ASSERT_TRUE(fs::exists(golden)) << golden << " is missing: KVCOURSE_UPDATE_GOLDEN=1 writes it";
    EXPECT_EQ(testing_support::read_file(golden), g.text)
        << "the grader's text for " << v.name << " changed; if that is meant, rerun with KVCOURSE_UPDATE_GOLDEN=1 "
        << "and commit " << golden;
  }
}

// One test per stage of stages/manifest.json.
std::vector<std::string> stage_slugs() {
  std::vector<std::string> slugs;
  for (const auto& s : course::stage_table()) slugs.push_back(s.slug);
  return slugs;
}

INSTANTIATE_TEST_SUITE_P(stages, catalogue, testing::ValuesIn(stage_slugs()),
                         [](const testing::TestParamInfo<std::string>& p) {
                           std::string s = p.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

// Every golden file has its mistake beside it, and nothing of the catalogue is left in tests/.
TEST(catalogue_files, no_golden_file_is_stale_and_none_is_left_in_tests) {
  for (const course::Stage& stage : course::stage_table()) {
    const fs::path golden = course::golden_dir(source_dir() / "stages", stage);
    if (!fs::is_directory(golden)) continue;
    for (const auto& e : fs::directory_iterator(golden))
      EXPECT_TRUE(fs::exists(course::mistakes_dir(source_dir() / "stages", stage) /
                             (e.path().stem().string() + ".mistake")))
          << e.path() << " has no mistake file beside it";
  }
  // Mistakes and transcripts used to live in tests/buggy and tests/golden: one left there
  // (from a branch older than the move) would be silently ignored.
  for (const char* old : {"tests/buggy", "tests/golden"}) {
    if (!fs::is_directory(source_dir() / old)) continue;
    for (const auto& e : fs::directory_iterator(source_dir() / old))
      EXPECT_FALSE(course::is_variant_file(e.path()) || e.path().extension() == ".txt")
          << e.path() << ": the catalogue lives in the stages' folders now (stages/<folder>/mistakes, "
          << "stages/<folder>/golden): move it there";
  }
}

// Issue 22: an entry's hint tier (the one offered under the identified mistake) is one its
// stage has; 0 is no tier.
TEST(catalogue_files, each_hint_tier_is_one_of_its_stages) {
  for (const course::KnownMistake& m : course::known_mistakes()) {
    const course::Stage* stage = nullptr;
    for (const course::Stage& s : course::stage_table())
      if (std::string(m.lesson).rfind("stages/" + s.folder + "/lesson.md#", 0) == 0) stage = &s;
    ASSERT_NE(stage, nullptr) << m.id << ": " << m.lesson;
    EXPECT_GE(m.hint, 0) << m.id;
    EXPECT_LE(m.hint, int(stage->hints.size()))
        << m.id << " names a tier " << stage->slug << " does not have";
  }
}

// Issue 25: a right value() and an adapter whose snapshot copies the keys into the values.
// The plan's sentence names the adapter's snapshot (what the grader saw), never value(),
// and the case the grader reads itself passes.
TEST(catalogue_localization, an_adapters_snapshot_is_named_as_the_adapters) {
  TempDir state;
  auto r = run("KVCOURSE_PROGRESS=" + (state / "p.json").string() + " NO_COLOR=1 " + bin("grader") +
                   " --no-times --timeout 120 --runner " + bin("runner-snapshot-values-from-keys") + " --stage cache-structure",
               false);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("your snapshot's values[head 0, pos 0] holds append #0's key, head 0: this is the key, not the value"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("value(0, 0)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("PASS 10-read-by-the-grader"), std::string::npos) << r.output;
  EXPECT_TRUE(identified(r.output).empty()) << r.output;
}

// Issue 25: a failed paged plan is run again cut short, so the step named is the one after
// which the learner's own runs depart from the rules, not only the earliest whose result the
// final state does not show (for pg.grow_check_forgets_copy that is the fork before the grow).
TEST(catalogue_localization, a_plan_run_again_cut_short_names_the_step_that_departs) {
  TempDir state;
  auto r =
      run("KVCOURSE_PROGRESS=" + (state / "p.json").string() + " NO_COLOR=1 " + bin("grader") +
              " --no-times --timeout 120 --runner " + bin("runner-buggy-grow_check_forgets_copy") +
              " --stage paged-cache --case 11-a-grow-that-needs-the-copy-and-a-block",
          false);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string said =
      "Run again on the plan cut short: after steps 0 .. 2 your code's state (lengths, tables, "
      "counts, rows) is the "
      "one the rules give; with step 3 too it is not. Step 3 appends #5 .. #16 to sequence 1 (one "
      "grow(12)) at "
      "positions 5 .. 16: it needs 2 free blocks, the pool has 1, so it throws PoolExhausted and "
      "changes nothing.";
  EXPECT_NE(r.output.find(said), std::string::npos) << r.output;
}

}  // namespace

// `grader --report FILE.html`, opened in headless Chromium (Debian's chromium): the file
// renders, and its rendered text draws the failing case of a known mistake in stages 1
// (which rows of a tensor differ), 7 (block tables and reference counts), 8 (the prefix
// cache's blocks in LRU order) and 9 (the batch per step). Without chromium the tests are
// skipped, saying so (scripts/deps.sh --tests installs it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "test_support.hpp"

namespace {

using testing_support::bin;
using testing_support::run;
using testing_support::TempDir;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string browser() {
  for (const char* name : {"chromium", "chromium-browser"})
    if (run(std::string("command -v ") + name + " >/dev/null").exit_code == 0) return name;
  return "";
}

// The DOM Chromium rendered from the report of `runner` on `stage` (a known mistake's).
std::string rendered_report(const std::string& runner, const std::string& stage,
                            const TempDir& state) {
  const std::string file = (state / "report.html").string();
  const auto graded =
      run("KVCOURSE_PROGRESS=" + (state / "p.json").string() + " NO_COLOR=1 " + bin("grader") +
          " --no-times --runner " + bin(runner) + " --stage " + stage + " --report " + file);
  EXPECT_EQ(graded.exit_code, 1) << graded.output;
  EXPECT_TRUE(contains(graded.output, "the pictures are in " + file)) << graded.output;
  // A profile of its own, so that no other Chromium's lock or settings interfere.
  const auto dom =
      run("timeout 120 " + browser() + " --headless --no-sandbox --disable-gpu --no-first-run " +
              "--user-data-dir=" + (state / "profile").string() + " --dump-dom file://" + file,
          false);
  EXPECT_EQ(dom.exit_code, 0) << dom.output;
  return dom.output;
}

class html_report_in_chromium : public testing::Test {
 protected:
  void SetUp() override {
    if (browser().empty())
      GTEST_SKIP()
          << "chromium is not installed (Debian: apt-get install chromium; scripts/deps.sh --tests "
             "installs it): the HTML report was not checked in a browser";
  }
  TempDir state;
};

TEST_F(html_report_in_chromium, stage_1_draws_which_rows_of_a_tensor_differ) {
  const std::string dom = rendered_report("runner-buggy-kv_swapped", "cache-structure", state);
  EXPECT_TRUE(contains(dom, "Stage 1 · cache-structure")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "Which rows differ")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "caches[0].keys</code>: 12 of 12 (head, pos) rows differ"))
      << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "the first: head 0, pos 0")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "<svg")) << dom.substr(0, 3000);
}

TEST_F(html_report_in_chromium, stage_7_draws_the_block_tables_and_reference_counts) {
  const std::string dom = rendered_report("runner-buggy-contiguous_table", "paged-cache", state);
  EXPECT_TRUE(contains(dom, "Stage 7 · paged-cache")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "Block tables and reference counts")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "sequence 1 · length 18")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "reference counts by block")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "sequences[1].keys</code>: 12 of 216 (head, pos) rows differ"))
      << dom.substr(0, 3000);
}

TEST_F(html_report_in_chromium, stage_8_draws_the_prefix_cache_in_lru_order) {
  const std::string dom = rendered_report("runner-buggy-evict_lowest_block", "prefix-cache", state);
  EXPECT_TRUE(contains(dom, "Stage 8 · prefix-cache")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "The prefix cache's blocks, in LRU order")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "4 cached blocks, least recently used first")) << dom.substr(0, 3000);
  // The first eviction candidate of each side, with its key: the mistake kept prompt 1's
  // block 1 (in block 3), the reference prompt 0's block 0.
  EXPECT_TRUE(contains(dom, "#1 · block 3")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "key b6d39e2bdb21eb0a")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "#1 · block 0")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "key 5d87012f52321228")) << dom.substr(0, 3000);
}

TEST_F(html_report_in_chromium, stage_9_draws_the_batch_per_step) {
  const std::string dom =
      rendered_report("runner-buggy-decode_finished", "continuous-batching", state);
  EXPECT_TRUE(contains(dom, "Stage 9 · continuous-batching")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "The batch, step by step")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "Your code: 4 steps")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "The reference: 3 steps")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "step 3")) << dom.substr(0, 3000);
}

}  // namespace

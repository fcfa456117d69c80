// Every test CTest knows (the discovered GoogleTest cases included) carries a label, and
// only labels of the list in tests/CMakeLists.txt: what `ctest -L` and `-LE` select on
// (scripts/test.sh, scripts/asan.sh, .ci/run) is then the whole suite, never a part of it
// by omission. Read from `ctest --show-only=json-v1` on this build folder.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

#ifndef KVCOURSE_CTEST
#error "the build defines KVCOURSE_CTEST and KVCOURSE_BUILD_DIR"
#endif

namespace {

using nlohmann::json;

std::set<std::string> allowed_labels() {
  std::set<std::string> out;
  std::stringstream list(KVCOURSE_TEST_LABELS);
  for (std::string label; list >> label;) out.insert(label);
  return out;
}

// One test as ctest lists it.
struct Listed {
  std::string name;
  std::vector<std::string> labels, fixtures_setup, fixtures_required;
};

std::vector<std::string> strings(const json& value) {
  std::vector<std::string> out;
  if (value.is_string()) out.push_back(value.get<std::string>());
  if (value.is_array())
    for (const json& v : value)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::vector<Listed> listed_tests() {
  const auto r = testing_support::run(std::string("'") + KVCOURSE_CTEST + "' --test-dir '" +
                                          KVCOURSE_BUILD_DIR + "' --show-only=json-v1",
                                      false);
  EXPECT_EQ(r.exit_code, 0) << "ctest --show-only failed";
  const json doc = json::parse(r.output, nullptr, false);
  EXPECT_TRUE(doc.is_object() && doc.contains("tests")) << "ctest's listing is not JSON:\n"
                                                        << r.output.substr(0, 2000);
  std::vector<Listed> out;
  if (!doc.is_object() || !doc.contains("tests")) return out;
  for (const json& t : doc["tests"]) {
    Listed l;
    l.name = t.value("name", "");
    for (const json& p : t.value("properties", json::array())) {
      const std::string key = p.value("name", "");
      if (key == "LABELS") l.labels = strings(p["value"]);
      if (key == "FIXTURES_SETUP") l.fixtures_setup = strings(p["value"]);
      if (key == "FIXTURES_REQUIRED") l.fixtures_required = strings(p["value"]);
    }
    out.push_back(l);
  }
  return out;
}

std::string first_few(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 20; ++i) out += "\n  " + names[i];
  if (names.size() > 20) out += "\n  ... and " + std::to_string(names.size() - 20) + " more";
  return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TEST(labels, every_test_has_a_label_from_the_list) {
  const std::set<std::string> allowed = allowed_labels();
  ASSERT_EQ(allowed.size(), 5u) << KVCOURSE_TEST_LABELS;
  const std::vector<Listed> tests = listed_tests();
  std::vector<std::string> not_built, unlabelled, wrong;
  bool saw_itself = false;
  for (const Listed& t : tests) {
    if (t.name == "labels.every_test_has_a_label_from_the_list") saw_itself = true;
    // A program not built yet is one placeholder test (gtest_discover_tests): its tests
    // are not known, so their labels cannot be checked.
    if (ends_with(t.name, "_NOT_BUILT")) {
      not_built.push_back(t.name);
      continue;
    }
    if (t.labels.empty()) unlabelled.push_back(t.name);
    for (const std::string& label : t.labels)
      if (!allowed.count(label)) wrong.push_back(t.name + " (label \"" + label + "\")");
  }
  // The listing is the real one: it holds this very test, and the suite's size.
  EXPECT_TRUE(saw_itself) << "ctest's listing does not hold this test";
  EXPECT_GT(tests.size(), 100u);
  EXPECT_TRUE(not_built.empty()) << not_built.size()
                                 << " test programs are not built; build every target first:"
                                 << first_few(not_built);
  EXPECT_TRUE(unlabelled.empty()) << unlabelled.size() << " tests have no label (give one of "
                                  << KVCOURSE_TEST_LABELS << "):" << first_few(unlabelled);
  EXPECT_TRUE(wrong.empty()) << wrong.size() << " tests have a label outside "
                             << KVCOURSE_TEST_LABELS << ":" << first_few(wrong);
}

// A test that needs what a network-labelled set-up fetches is labelled network itself:
// `ctest -LE network` would otherwise run it, and pull the set-up back in with it.
TEST(labels, tests_needing_a_network_fixture_are_network_tests) {
  const std::vector<Listed> tests = listed_tests();
  std::set<std::string> network_fixtures;
  for (const Listed& t : tests)
    for (const std::string& label : t.labels)
      if (label == "network")
        network_fixtures.insert(t.fixtures_setup.begin(), t.fixtures_setup.end());
  EXPECT_FALSE(network_fixtures.empty()) << "no set-up test labelled network (fetch_gpt3_encoder)";
  std::vector<std::string> wrong;
  for (const Listed& t : tests) {
    bool network = false;
    for (const std::string& label : t.labels) network = network || label == "network";
    for (const std::string& f : t.fixtures_required)
      if (network_fixtures.count(f) && !network) wrong.push_back(t.name + " (needs " + f + ")");
  }
  EXPECT_TRUE(wrong.empty()) << wrong.size()
                             << " tests need a network fixture but are not labelled network:"
                             << first_few(wrong);
}

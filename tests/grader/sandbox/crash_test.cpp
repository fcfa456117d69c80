// Reading a crashed runner's symbolized stack (addr2line's answer) and its failed library
// check. Both texts come from the learner's executable and output: parsed defensively.
#include <gtest/gtest.h>

#include "sandbox/crash.hpp"

namespace {

TEST(parse_addr2line, frames_innermost_first_with_inlined_calls) {
  const auto frames = course::parse_addr2line(
      "0x0000000000401234\n"
      "course::KVCache::key(int, int) const\n"
      "/course/src/kvcache.cpp:31\n"
      "run_cache_plan(nlohmann::json const&)\n"
      "/course/adapters/adapters.cpp:52 (discriminator 2)\n"
      "0x0000000000405678\n"
      "??\n"
      "??:0\n");
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].function, "KVCache::key");
  EXPECT_EQ(frames[0].file, "/course/src/kvcache.cpp");
  EXPECT_EQ(frames[0].line, 31);
  EXPECT_EQ(frames[1].function, "run_cache_plan");
  EXPECT_EQ(frames[1].file, "/course/adapters/adapters.cpp");
  EXPECT_EQ(frames[1].line, 52);
  EXPECT_EQ(frames[2].file, "??");
  EXPECT_EQ(frames[2].line, 0);
}

// The names a learner's frames come with, each as the learner wrote it (an anonymous
// namespace printed an empty name: "called from  (src/decode.cpp:38)").
TEST(parse_addr2line, functions_are_named_as_written) {
  auto name = [](const std::string& demangled) {
    const auto frames =
        course::parse_addr2line("0x1\n" + demangled + "\n/course/src/decode.cpp:38\n");
    return frames.size() == 1 ? frames[0].function : "(no frame)";
  };
  EXPECT_EQ(name("course::(anonymous namespace)::attend(float const*, int)"), "attend");
  EXPECT_EQ(name("(anonymous namespace)::attend(float const*, int)"), "attend");
  EXPECT_EQ(name("course::(anonymous namespace)::Scratch::row(int) const"), "Scratch::row");
  EXPECT_EQ(
      name("course::decode_step(course::ModelCache&, int)::{lambda(int)#1}::operator()(int) const"),
      "the lambda in decode_step");
  EXPECT_EQ(name("float course::(anonymous namespace)::dot<4>(float const*, float const*)"),
            "dot<4>");
  EXPECT_EQ(name("course::Rows::operator()(int) const"), "Rows::operator()");
  EXPECT_EQ(name("course::KVCache::~KVCache()"), "KVCache::~KVCache");
  EXPECT_EQ(
      name("run_cache_plan(std::vector<course::CacheOp, std::allocator<course::CacheOp> > const&)"),
      "run_cache_plan");
  EXPECT_EQ(name("std::vector<float, std::allocator<float> >::at(unsigned long)"),
            "std::vector<float, std::allocator<float> >::at");
  EXPECT_EQ(name("main"), "main");
}

TEST(parse_addr2line, relative_steps_are_folded_away) {
  const auto frames = course::parse_addr2line("0x1\nf\n/course/build/tests/../../src/kvcache.cpp:7\n");
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].file, "/course/src/kvcache.cpp");
}

TEST(parse_addr2line, lines_without_a_colon_and_a_cut_off_answer_give_no_frame) {
  EXPECT_TRUE(course::parse_addr2line("0x1\nf\nno colon here\n").empty());
  EXPECT_TRUE(course::parse_addr2line("0x1\nonly a function name").empty());
  EXPECT_TRUE(course::parse_addr2line("").empty());
}

TEST(failed_check, a_vector_index_is_a_bounds_check) {
  EXPECT_EQ(course::failed_check(
                "[runner] /usr/include/c++/12/bits/stl_vector.h:1142: constexpr std::vector<_Tp, _Alloc>::"
                "const_reference std::vector<_Tp, _Alloc>::operator[](size_type) const [with _Tp = float]: "
                "Assertion '__n < this->size()' failed.\n"),
            "a bounds check failed in std::vector::operator[] (__n < this->size())");
}

TEST(failed_check, no_assertion_gives_nothing) {
  EXPECT_EQ(course::failed_check("an ordinary line\n' failed."), "");
  EXPECT_EQ(course::failed_check(""), "");
}

}  // namespace

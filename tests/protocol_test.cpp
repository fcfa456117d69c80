#include "wire/protocol.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <stdexcept>

using namespace course;

// The largest single allocation since the last reset: this test binary replaces the
// global operator new to watch what read_message asks for.
namespace {
size_t g_largest_allocation = 0;
}

// (Not inlined: GCC would then see free() meet a pointer from `new` and warn.)
[[gnu::noinline]] void* operator new(size_t n) {
  g_largest_allocation = std::max(g_largest_allocation, n);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](size_t n) { return operator new(n); }
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, size_t) noexcept { std::free(p); }

TEST(protocol, messages_cross_a_pipe_whole) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_TRUE(write_message(fds[1], "{\"a\": 1}"));
  ASSERT_TRUE(write_message(fds[1], ""));
  close(fds[1]);
  EXPECT_EQ(read_message(fds[0]), "{\"a\": 1}");
  EXPECT_EQ(read_message(fds[0]), "");
  EXPECT_EQ(read_message(fds[0]), std::nullopt) << "clean end of stream";
  close(fds[0]);
}

TEST(protocol, truncated_message_is_an_error) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const char partial[] = {10, 0, 0, 0, 'a', 'b'};
  ASSERT_EQ(write(fds[1], partial, sizeof partial), ssize_t(sizeof partial));
  close(fds[1]);
  EXPECT_THROW(read_message(fds[0]), std::runtime_error);
  close(fds[0]);
}

TEST(protocol, reader_assembles_bytes_in_any_chunks) {
  std::string frame = std::string("\x05\x00\x00\x00", 4) + "hello" + std::string("\x02\x00\x00\x00", 4) + "hi";
  MessageReader r;
  for (size_t i = 0; i < 8; ++i) EXPECT_FALSE(r.feed(&frame[i], 1)) << i;
  EXPECT_TRUE(r.feed(&frame[8], 1));
  EXPECT_EQ(r.take(), "hello");
  EXPECT_FALSE(r.feed(&frame[9], 5));
  EXPECT_TRUE(r.feed(&frame[14], 1));
  EXPECT_EQ(r.take(), "hi");
}

TEST(protocol, reader_flags_oversized_length) {
  MessageReader r;
  const char huge[] = {char(0xff), char(0xff), char(0xff), char(0x7f)};
  r.feed(huge, 4);
  EXPECT_TRUE(r.oversized());
  EXPECT_FALSE(r.complete());
}

TEST(protocol, a_huge_length_with_few_bytes_is_truncated_not_allocated) {
  // Found by fuzz_frames: a 514 MB length prefix and nothing behind it made read_message
  // allocate the announced length before reading a byte.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const char frame[] = {char(0x70), char(0x5c), char(0x22), char(0x20), 'x', 'y'};
  ASSERT_EQ(write(fds[1], frame, sizeof frame), ssize_t(sizeof frame));
  close(fds[1]);
  g_largest_allocation = 0;
  try {
    read_message(fds[0]);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "message truncated");
  }
  EXPECT_LE(g_largest_allocation, size_t(2) << 20) << "allocated for bytes that never came";
  close(fds[0]);
}

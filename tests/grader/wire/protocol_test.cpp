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


namespace {

std::string frame_bytes(uint32_t length, uint64_t id, const std::string& payload) {
  std::string f;
  for (int i = 0; i < 4; ++i) f += char((length >> (8 * i)) & 0xff);
  for (int i = 0; i < 8; ++i) f += char((id >> (8 * i)) & 0xff);
  return f + payload;
}

}  // namespace

TEST(protocol, frames_cross_a_pipe_whole_with_their_ids) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_TRUE(write_message(fds[1], 7, "{\"a\": 1}"));
  ASSERT_TRUE(write_message(fds[1], 0x0102030405060708ull, ""));
  close(fds[1]);
  auto first = read_message(fds[0]);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->id, 7u);
  EXPECT_EQ(first->payload, "{\"a\": 1}");
  auto second = read_message(fds[0]);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->id, 0x0102030405060708ull);
  EXPECT_EQ(second->payload, "");
  EXPECT_EQ(read_message(fds[0]), std::nullopt) << "clean end of stream";
  close(fds[0]);
}

TEST(protocol, the_header_is_length_then_id_little_endian) {
  EXPECT_EQ(encode_frame(0x0a0b, "hi"), frame_bytes(2, 0x0a0b, "hi"));
  EXPECT_EQ(encode_frame(0, "").size(), kFrameHeaderBytes);
}

TEST(protocol, truncated_frame_is_an_error) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string partial = frame_bytes(10, 1, "ab");
  ASSERT_EQ(write(fds[1], partial.data(), partial.size()), ssize_t(partial.size()));
  close(fds[1]);
  EXPECT_THROW(read_message(fds[0]), std::runtime_error);
  close(fds[0]);
}

TEST(protocol, header_cut_short_is_an_error) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], "\x02\x00\x00\x00\x01", 5), 5);
  close(fds[1]);
  EXPECT_THROW(read_message(fds[0]), std::runtime_error);
  close(fds[0]);
}

TEST(protocol, reader_assembles_bytes_in_any_chunks_and_keeps_what_follows) {
  const std::string bytes = frame_bytes(5, 1, "hello") + frame_bytes(2, 2, "hi");
  MessageReader r;
  for (size_t i = 0; i < 16; ++i) EXPECT_FALSE(r.feed(&bytes[i], 1)) << i;
  EXPECT_TRUE(r.feed(&bytes[16], 1));
  Frame first = r.take();
  EXPECT_EQ(first.id, 1u);
  EXPECT_EQ(first.payload, "hello");
  EXPECT_EQ(r.buffered(), 0u);
  EXPECT_FALSE(r.feed(&bytes[17], 13));
  EXPECT_TRUE(r.feed(&bytes[30], 1));
  Frame second = r.take();
  EXPECT_EQ(second.id, 2u);
  EXPECT_EQ(second.payload, "hi");
}

TEST(protocol, reader_reports_bytes_after_a_frame) {
  const std::string bytes = frame_bytes(2, 9, "ok") + "junk";
  MessageReader r;
  EXPECT_TRUE(r.feed(bytes.data(), bytes.size()));
  EXPECT_EQ(r.take().payload, "ok");
  EXPECT_EQ(r.buffered(), 4u) << "the grader refuses an answer followed by anything";
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
  const std::string frame = frame_bytes(0x20225c70, 1, "xy");
  ASSERT_EQ(write(fds[1], frame.data(), frame.size()), ssize_t(frame.size()));
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

TEST(protocol, reader_refuses_a_frame_beyond_its_cap_from_the_header_alone) {
  MessageReader r(100);
  const std::string head = frame_bytes(101, 3, "");
  r.feed(head.data(), 4);
  EXPECT_TRUE(r.oversized()) << "known from the length, before the payload arrives";
  EXPECT_EQ(r.announced(), 101u);
  MessageReader fits(100);
  const std::string ok = frame_bytes(100, 3, std::string(100, 'x'));
  EXPECT_TRUE(fits.feed(ok.data(), ok.size()));
  EXPECT_FALSE(fits.oversized());
}

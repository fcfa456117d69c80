#include "wire/protocol.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <stdexcept>

using namespace course;

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

TEST(protocol, nesting_depth_is_counted_without_parsing) {
  EXPECT_EQ(json_nesting_depth("{\"a\": [1, {\"b\": []}]}"), 4);
  EXPECT_EQ(json_nesting_depth("\"[[[[\""), 0) << "brackets in a string do not count";
  EXPECT_EQ(json_nesting_depth("[\"\\\"[\"]"), 1) << "an escaped quote does not end the string";
  EXPECT_EQ(json_nesting_depth(std::string(100000, '[')), kMaxAnswerDepth + 1) << "stops past the limit";
}

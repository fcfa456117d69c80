#include "wire/protocol.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <stdexcept>

using namespace course;

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

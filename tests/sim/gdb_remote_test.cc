// SPDX-License-Identifier: GPL-2.0
// gdb's remote protocol on the wire (tools/kjit-sim/gdb_remote.h):
// framing, checksums, escapes, run-length encoding, hex, and what the
// reader makes of broken input.
#include "gdb_remote.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kjit::sim::gdb {
namespace {

using Kind = PacketReader::Event::Kind;

std::vector<PacketReader::Event> read_all(const std::string &bytes, size_t max = kMaxPacket) {
  PacketReader r(max);
  std::vector<PacketReader::Event> ev;
  r.feed(bytes, &ev);
  return ev;
}

// The expansion gdb applies to a reply (remote.c, read_frame), written
// from the manual: X*c is X then (c - 29) more X.
std::string expand(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '*' && i + 1 < s.size() && !out.empty()) {
      out.append(static_cast<size_t>(s[i + 1] - 29), out.back());
      i++;
    } else {
      out += s[i];
    }
  }
  return out;
}

TEST(GdbRemote, ChecksumAndFrame) {
  EXPECT_EQ(checksum(""), 0);
  EXPECT_EQ(checksum("OK"), 0x9a);  // 'O' 0x4f + 'K' 0x4b
  EXPECT_EQ(frame("OK"), "$OK#9a");
  EXPECT_EQ(frame(""), "$#00");
  // Sums wrap at 256.
  EXPECT_EQ(checksum(std::string(3, '\xff')), 0xfd);
}

TEST(GdbRemote, EscapesTheFourSpecialBytes) {
  EXPECT_EQ(escape("a#b$c}d*e"), "a}\x03" "b}\x04" "c}]d}\x0a" "e");
  EXPECT_EQ(escape("<target/>"), "<target/>");
}

TEST(GdbRemote, RunLengthEncodingRoundTripsAndAvoidsHashAndDollar) {
  EXPECT_EQ(run_length_encode("0000"), "0* ");  // the manual's example
  EXPECT_EQ(run_length_encode("abc"), "abc");
  EXPECT_EQ(run_length_encode("000"), "000");  // shorter plain
  for (size_t n = 1; n < 400; n++) {
    const std::string s = "12" + std::string(n, 'x') + "34" + std::string(n, '0');
    const std::string e = run_length_encode(s);
    EXPECT_EQ(expand(e), s) << n;
    EXPECT_EQ(e.find('#'), std::string::npos) << n;
    EXPECT_EQ(e.find('$'), std::string::npos) << n;
    for (size_t i = 0; i + 1 < e.size(); i++)
      if (e[i] == '*') {
        EXPECT_GE(e[i + 1], ' ');
        EXPECT_LE(e[i + 1], '~');
      }
    if (n >= 8) {
      EXPECT_LT(e.size(), s.size());
    }
  }
}

TEST(GdbRemote, Hex) {
  const uint8_t b[] = {0x00, 0x7f, 0xff};
  EXPECT_EQ(to_hex(b, 3), "007fff");
  EXPECT_EQ(to_hex("help"), "68656c70");
  std::string out;
  EXPECT_TRUE(from_hex("68656C70", &out));
  EXPECT_EQ(out, "help");
  EXPECT_FALSE(from_hex("686", &out));
  EXPECT_FALSE(from_hex("6g", &out));
  uint64_t v = 0;
  EXPECT_TRUE(parse_hex("ffffffff81000000", &v));
  EXPECT_EQ(v, 0xffffffff81000000ull);
  EXPECT_FALSE(parse_hex("", &v));
  EXPECT_FALSE(parse_hex("1ffffffff81000000", &v));  // 17 digits
  EXPECT_FALSE(parse_hex("12 ", &v));
  EXPECT_FALSE(parse_hex("-1", &v));
}

TEST(GdbRemote, ReaderSplitsPacketsAcksAndInterrupts) {
  const auto ev = read_all("+$qSupported:swbreak+#e2-\x03$g#67");
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[0].kind, Kind::kAck);
  EXPECT_EQ(ev[1].kind, Kind::kBadChecksum);  // e2 is not the sum
  EXPECT_EQ(ev[2].kind, Kind::kNack);
  EXPECT_EQ(ev[3].kind, Kind::kInterrupt);
  EXPECT_EQ(ev[4].kind, Kind::kPacket);
  EXPECT_EQ(ev[4].text, "g");
  const std::string q = "qSupported:swbreak+";
  const auto ok = read_all(frame(q));
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].kind, Kind::kPacket);
  EXPECT_EQ(ok[0].text, q);
}

TEST(GdbRemote, ReaderTakesBytesOneAtATime) {
  PacketReader r;
  std::vector<PacketReader::Event> ev;
  for (char c : frame("m ffffffff81000000,40")) r.feed(std::string(1, c), &ev);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].text, "m ffffffff81000000,40");
}

TEST(GdbRemote, ReaderNamesBrokenInput) {
  auto ev = read_all("$g#zz");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, Kind::kBadChecksum);
  EXPECT_NE(ev[0].text.find("not hex"), std::string::npos) << ev[0].text;
  ev = read_all("$g#66");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, Kind::kBadChecksum);
  EXPECT_NE(ev[0].text.find("sum to 67"), std::string::npos) << ev[0].text;
  // A packet that starts inside another: the first is dropped, the second kept.
  ev = read_all("$qSupp$g#67");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, Kind::kMalformed);
  EXPECT_EQ(ev[1].kind, Kind::kPacket);
  // Bytes outside packets.
  ev = read_all("hello\n$g#67");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, Kind::kStray);
  EXPECT_EQ(ev[0].text, "hello\\x0a");
  EXPECT_EQ(ev[1].kind, Kind::kPacket);
}

TEST(GdbRemote, ReaderRefusesOversizedPacketsAndCarriesOn) {
  const std::string big = "$" + std::string(100, 'a') + "#00" + frame("g");
  const auto ev = read_all(big, 64);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, Kind::kOversized);
  EXPECT_EQ(ev[1].kind, Kind::kPacket);
  EXPECT_EQ(ev[1].text, "g");
  // Exactly the limit is fine.
  const auto at = read_all(frame(std::string(64, 'a')), 64);
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(at[0].kind, Kind::kPacket);
}

}  // namespace
}  // namespace kjit::sim::gdb

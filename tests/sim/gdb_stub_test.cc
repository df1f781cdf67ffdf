// SPDX-License-Identifier: GPL-2.0
// gdb's remote commands (tools/kjit-sim/gdb_stub.h) over a fake target:
// what each packet asks of the target and what goes back, and the answers
// to packets that are unknown, malformed or write.
#include "gdb_stub.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gdb_remote.h"

namespace kjit::sim::gdb {
namespace {

struct FakeTarget : Target {
  std::vector<std::string> calls;
  Stop next;
  std::string target_xml() const override { return "<target><architecture>i386:x86-64</architecture></target>"; }
  std::vector<RegisterValue> registers() override {
    std::vector<RegisterValue> r(3);
    for (unsigned i = 0; i < 3; i++) r[i].bytes[0] = static_cast<uint8_t>(0x10 + i);
    r[2].available = false;
    r[1].size = 4;
    return r;
  }
  std::vector<unsigned> expedited_registers() const override { return {0, 2}; }
  size_t read_memory(uint64_t addr, size_t len, uint8_t *out) override {
    calls.push_back("read " + std::to_string(addr) + " " + std::to_string(len));
    // Knows [0x1000, 0x1004) only.
    if (addr < 0x1000 || addr >= 0x1004) return 0;
    const size_t n = std::min<size_t>(len, 0x1004 - addr);
    for (size_t i = 0; i < n; i++) out[i] = static_cast<uint8_t>(0xa0 + (addr - 0x1000) + i);
    return n;
  }
  Stop step(Direction d, const std::function<bool()> &) override {
    calls.push_back(d == Direction::kForward ? "step" : "reverse-step");
    return next;
  }
  Stop resume(Direction d, const std::function<bool()> &) override {
    calls.push_back(d == Direction::kForward ? "continue" : "reverse-continue");
    return next;
  }
  Stop current_stop() override { return Stop{}; }
  bool supports(PointKind k) const override { return k <= PointKind::kWrite; }
  bool insert_point(PointKind k, uint64_t addr, uint64_t len) override {
    calls.push_back("insert " + std::to_string(static_cast<int>(k)) + " " + std::to_string(addr) + " " +
                    std::to_string(len));
    return true;
  }
  bool remove_point(PointKind k, uint64_t addr, uint64_t) override {
    calls.push_back("remove " + std::to_string(static_cast<int>(k)) + " " + std::to_string(addr));
    return true;
  }
  std::string monitor(const std::string &c) override { return "you said " + c + "\n"; }
  std::string thread_name() const override { return "getppid"; }
};

struct Session {
  FakeTarget t;
  Stub stub{t};
  Stub::Reply ask(const std::string &p) { return stub.handle(p, [] { return false; }); }
  std::string only(const std::string &p) {
    Stub::Reply r = ask(p);
    EXPECT_EQ(r.packets.size(), 1u) << p;
    return r.packets.empty() ? "<none>" : r.packets[0];
  }
};

TEST(GdbStub, AdvertisesWhatItDoes) {
  Session s;
  const std::string q = s.only("qSupported:multiprocess+;swbreak+;hwbreak+;qRelocInsn+");
  for (const char *f : {"PacketSize=4000", "qXfer:features:read+", "ReverseStep+", "ReverseContinue+",
                        "QStartNoAckMode+", "swbreak+", "hwbreak+"})
    EXPECT_NE(q.find(f), std::string::npos) << f;
  EXPECT_EQ(q.find("multiprocess"), std::string::npos);
  EXPECT_EQ(s.only("vMustReplyEmpty"), "");
  EXPECT_EQ(s.only("vCont?"), "vCont;c;C;s;S");
  Stub::Reply na = s.ask("QStartNoAckMode");
  EXPECT_TRUE(na.no_ack_mode);
  EXPECT_EQ(na.packets, std::vector<std::string>{"OK"});
}

TEST(GdbStub, TargetDescriptionInPieces) {
  Session s;
  const std::string xml = s.t.target_xml();
  EXPECT_EQ(s.only("qXfer:features:read:target.xml:0,ffb"), "l" + xml);
  EXPECT_EQ(s.only("qXfer:features:read:target.xml:0,8"), "m" + xml.substr(0, 8));
  EXPECT_EQ(s.only("qXfer:features:read:target.xml:8,1000"), "l" + xml.substr(8));
  EXPECT_EQ(s.only("qXfer:features:read:other.xml:0,10"), "E00");
  EXPECT_EQ(s.only("qXfer:features:read:target.xml:zz"), "E01");
  EXPECT_EQ(s.only("qXfer:libraries:read::0,10"), "");
}

TEST(GdbStub, RegistersWithUnavailableOnes) {
  Session s;
  // 8 bytes 0x10, 4 bytes 0x11, 8 unavailable bytes: "xx" each, run-length encoded.
  const std::string g = s.only("g");
  EXPECT_EQ(g, run_length_encode("1000000000000000" "11000000" "xxxxxxxxxxxxxxxx"));
  EXPECT_EQ(s.only("p1"), run_length_encode("11000000"));
  EXPECT_EQ(s.only("p3"), "E01");
  EXPECT_EQ(s.only("pzz"), "E01");
}

TEST(GdbStub, MemoryKnownOrE14) {
  Session s;
  EXPECT_EQ(s.only("m1000,4"), "a0a1a2a3");
  EXPECT_EQ(s.only("m1002,10"), "a2a3");  // what is known from the start on
  EXPECT_EQ(s.only("m2000,4"), "E14");
  EXPECT_EQ(s.only("m1000,0"), "");
  Stub::Reply r = s.ask("m1000");
  EXPECT_EQ(r.packets, std::vector<std::string>{"E01"});
  EXPECT_NE(r.complaint.find("not m ADDR,LENGTH"), std::string::npos) << r.complaint;
  EXPECT_EQ(s.only("mxyz,4"), "E01");
  // A huge length is clamped to what a reply holds.
  s.only("m1000,ffffffff");
  EXPECT_EQ(s.t.calls.back(), "read 4096 " + std::to_string((kMaxPacket - 4) / 2));
}

TEST(GdbStub, WritesAreRefused) {
  Session s;
  for (const char *p : {"G00", "P10=00", "M1000,1:00", "X1000,1:a"}) {
    Stub::Reply r = s.ask(p);
    EXPECT_EQ(r.packets, std::vector<std::string>{"E01"}) << p;
    EXPECT_NE(r.complaint.find("read-only"), std::string::npos) << p;
  }
}

TEST(GdbStub, UnknownPacketsGetTheEmptyReply) {
  Session s;
  for (const char *p : {"qTStatus", "vFile:setfs:0", "QNonStop:1", "!", "bx", "qOffsets", "Qbogus"})
    EXPECT_EQ(s.only(p), "") << p;
}

TEST(GdbStub, BreakpointsAndWatchpoints) {
  Session s;
  EXPECT_EQ(s.only("Z0,ffffffff81000010,1"), "OK");
  EXPECT_EQ(s.t.calls.back(), "insert 0 18446744071578845200 1");
  EXPECT_EQ(s.only("Z1,10,1"), "OK");
  EXPECT_EQ(s.only("Z2,2000,8"), "OK");
  EXPECT_EQ(s.t.calls.back(), "insert 2 8192 8");
  EXPECT_EQ(s.only("z2,2000,8"), "OK");
  EXPECT_EQ(s.t.calls.back(), "remove 2 8192");
  EXPECT_EQ(s.only("Z3,2000,8"), "");  // read watchpoints: not supported
  EXPECT_EQ(s.only("Z9,2000,8"), "");
  EXPECT_EQ(s.only("Z0,zz,1"), "E01");
  EXPECT_EQ(s.only("Z0"), "E01");
}

TEST(GdbStub, StepContinueAndReverse) {
  Session s;
  s.t.next.sw_breakpoint = true;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"s", "step"}, {"c", "continue"}, {"S05", "step"}, {"C05", "continue"}, {"vCont;s:1", "step"},
      {"vCont;c", "continue"}, {"vCont;C05:1;c", "continue"}, {"bs", "reverse-step"}, {"bc", "reverse-continue"}};
  for (const auto &[packet, call] : cases) {
    const std::string r = s.only(packet);
    EXPECT_EQ(s.t.calls.back(), call) << packet;
    // T05, expedited registers 0 and (unavailable, left out) 2, thread, reason.
    EXPECT_EQ(r, "T0500:1000000000000000;thread:1;swbreak:;") << packet;
  }
  EXPECT_EQ(s.only("s ffffffff81000000"), "E01");  // no resuming elsewhere
  EXPECT_EQ(s.only("C05;1000"), "E01");
  EXPECT_EQ(s.only("vCont;t"), "E01");
}

TEST(GdbStub, StopRepliesOfEveryKind) {
  Session s;
  Stop w;
  w.watch = true;
  w.watch_addr = 0xffa0000000447d90;
  w.extra = {{"orig", "ffffffff810b0f95"}};
  EXPECT_EQ(s.stub.stop_packets(w).back(),
            "T0500:1000000000000000;thread:1;watch:ffa0000000447d90;orig:ffffffff810b0f95;");
  Stop begin;
  begin.kind = Stop::Kind::kNoHistory;
  EXPECT_EQ(s.stub.stop_packets(begin).back(), "T0500:1000000000000000;thread:1;replaylog:begin;");
  Stop segv;
  segv.signal = kSigSegv;
  segv.console = {"why\n"};
  const auto p = s.stub.stop_packets(segv);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], "O" + to_hex("why\n"));
  EXPECT_EQ(p[1].substr(0, 3), "T0b");
  EXPECT_FALSE(s.stub.exited());
  Stop exit;
  exit.kind = Stop::Kind::kExited;
  exit.exit_code = 0xfffffff2;  // -14
  exit.console = {"rax\n"};
  const auto e = s.stub.stop_packets(exit);
  EXPECT_EQ(e.back(), "Wfffffff2");
  EXPECT_TRUE(s.stub.exited());
}

TEST(GdbStub, MonitorThreadsAndEndOfSession) {
  Session s;
  const Stub::Reply m = s.ask("qRcmd," + to_hex("orig"));
  ASSERT_EQ(m.packets.size(), 2u);
  EXPECT_EQ(m.packets[0], "O" + to_hex("you said orig\n"));
  EXPECT_EQ(m.packets[1], "OK");
  EXPECT_EQ(s.only("qRcmd,6"), "E01");
  EXPECT_EQ(s.only("qC"), "QC1");
  EXPECT_EQ(s.only("qfThreadInfo"), "m1");
  EXPECT_EQ(s.only("qsThreadInfo"), "l");
  EXPECT_EQ(s.only("qAttached"), "1");
  EXPECT_EQ(s.only("qThreadExtraInfo,1"), to_hex("getppid"));
  EXPECT_EQ(s.only("Hg0"), "OK");
  EXPECT_FALSE(s.ask("?").packets.empty());
  Stub::Reply d = s.ask("D");
  EXPECT_TRUE(d.end_session);
  EXPECT_EQ(d.packets, std::vector<std::string>{"OK"});
  Stub::Reply k = s.ask("k");
  EXPECT_TRUE(k.end_session);
  EXPECT_TRUE(k.packets.empty());
}

}  // namespace
}  // namespace kjit::sim::gdb

// SPDX-License-Identifier: GPL-2.0
#include "gdb_stub.h"

#include <algorithm>

#include "gdb_remote.h"

namespace kjit::sim::gdb {
namespace {

using Reply = Stub::Reply;

Reply one(std::string packet) {
  Reply r;
  r.packets.push_back(std::move(packet));
  return r;
}

Reply bad(const std::string &packet, const std::string &why) {
  Reply r = one("E01");
  r.complaint = "'" + packet.substr(0, 80) + "': " + why;
  return r;
}

bool starts(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

// "A,B" with both hex.
bool two_hex(const std::string &s, uint64_t *a, uint64_t *b) {
  const size_t comma = s.find(',');
  return comma != std::string::npos && parse_hex(std::string_view(s).substr(0, comma), a) &&
         parse_hex(std::string_view(s).substr(comma + 1), b);
}

std::string hex_byte(unsigned v) {
  const uint8_t b = static_cast<uint8_t>(v);
  return to_hex(&b, 1);
}

std::string register_hex(const RegisterValue &r) {
  return r.available ? to_hex(r.bytes, r.size) : std::string(2 * r.size, 'x');
}

constexpr const char *kSupported =
    "PacketSize=4000;qXfer:features:read+;ReverseStep+;ReverseContinue+;QStartNoAckMode+;swbreak+;hwbreak+;"
    "vContSupported+";

}  // namespace

std::vector<std::string> Stub::stop_packets(const Stop &s) {
  std::vector<std::string> out;
  for (const std::string &line : s.console) out.push_back("O" + to_hex(line));
  if (s.kind == Stop::Kind::kExited) {
    exited_ = true;
    char code[16];
    snprintf(code, sizeof code, "%x", s.exit_code);
    out.push_back(std::string("W") + code);
    return out;
  }
  std::string t = "T" + hex_byte(s.kind == Stop::Kind::kNoHistory ? kSigTrap : s.signal);
  const std::vector<RegisterValue> regs = target_.registers();
  for (unsigned n : target_.expedited_registers())
    if (n < regs.size() && regs[n].available) t += hex_byte(n) + ":" + register_hex(regs[n]) + ";";
  t += "thread:1;";
  if (s.kind == Stop::Kind::kNoHistory) t += "replaylog:begin;";
  if (s.sw_breakpoint) t += "swbreak:;";
  if (s.hw_breakpoint) t += "hwbreak:;";
  if (s.watch) {
    char a[32];
    snprintf(a, sizeof a, "%llx", static_cast<unsigned long long>(s.watch_addr));
    t += std::string("watch:") + a + ";";
  }
  for (const auto &[name, value] : s.extra) t += name + ":" + value + ";";
  out.push_back(t);
  return out;
}

Reply Stub::stop_reply(const Stop &s) {
  Reply r;
  r.packets = stop_packets(s);
  return r;
}

Reply Stub::handle(const std::string &p, const std::function<bool()> &interrupted) {
  if (p.empty()) return one("");
  switch (p[0]) {
    case '?': return stop_reply(target_.current_stop());
    case 'g': {
      std::string hex;
      for (const RegisterValue &v : target_.registers()) hex += register_hex(v);
      return one(run_length_encode(hex));
    }
    case 'p': return one_register(p.substr(1));
    case 'm': return memory(p.substr(1));
    case 'G': case 'P': case 'M': case 'X':
      return bad(p, "the replay is read-only: registers and memory cannot be written");
    case 'c': case 's': case 'C': case 'S': {
      // C and S carry a signal for the program; a replay has no signal to
      // deliver and plays what the kernel did.  An address to resume at
      // would leave the recorded path.
      const size_t semi = p.find(';');
      if ((p[0] == 'c' || p[0] == 's') ? p.size() > 1 : semi != std::string::npos)
        return bad(p, "the replay continues only where it stands");
      const bool step = p[0] == 's' || p[0] == 'S';
      return stop_reply(step ? target_.step(Direction::kForward, interrupted)
                             : target_.resume(Direction::kForward, interrupted));
    }
    case 'b':
      if (p == "bs") return stop_reply(target_.step(Direction::kBackward, interrupted));
      if (p == "bc") return stop_reply(target_.resume(Direction::kBackward, interrupted));
      return one("");
    case 'Z': return point(true, p.substr(1));
    case 'z': return point(false, p.substr(1));
    case 'H': return one("OK");  // one thread: any thread is it
    case 'T': return one("OK");  // it is alive
    case 'D': {
      Reply r = one("OK");
      r.end_session = true;
      return r;
    }
    case 'k': {
      Reply r;  // no reply
      r.end_session = true;
      return r;
    }
    default: break;
  }
  if (starts(p, "qSupported")) return one(kSupported);
  if (p == "QStartNoAckMode") {
    Reply r = one("OK");
    r.no_ack_mode = true;
    return r;
  }
  if (starts(p, "qXfer:")) return xfer(p.substr(6));
  if (starts(p, "qRcmd,")) return monitor(p.substr(6));
  if (p == "qC") return one("QC1");
  if (p == "qfThreadInfo") return one("m1");
  if (p == "qsThreadInfo") return one("l");
  if (starts(p, "qAttached")) return one("1");
  if (starts(p, "qThreadExtraInfo,")) return one(to_hex(target_.thread_name()));
  if (starts(p, "qSymbol:")) return one("OK");
  if (p == "vCont?") return one("vCont;c;C;s;S");
  if (starts(p, "vCont;")) return vcont(p.substr(6), interrupted);
  if (starts(p, "vKill")) {
    Reply r = one("OK");
    r.end_session = true;
    return r;
  }
  return one("");  // vMustReplyEmpty, and everything not supported
}

Reply Stub::one_register(const std::string &args) {
  uint64_t n = 0;
  if (!parse_hex(args, &n)) return bad("p" + args, "not a register number");
  const std::vector<RegisterValue> regs = target_.registers();
  if (n >= regs.size()) return bad("p" + args, "no register " + std::to_string(n));
  return one(run_length_encode(register_hex(regs[n])));
}

Reply Stub::memory(const std::string &args) {
  uint64_t addr = 0, len = 0;
  if (!two_hex(args, &addr, &len)) return bad("m" + args, "not m ADDR,LENGTH in hex");
  // The reply holds two hex digits a byte.
  len = std::min<uint64_t>(len, (kMaxPacket - 4) / 2);
  std::vector<uint8_t> bytes(len);
  const size_t got = len ? target_.read_memory(addr, len, bytes.data()) : 0;
  if (len && got == 0) return one("E14");  // EFAULT: not known, never invented
  return one(run_length_encode(to_hex(bytes.data(), got)));
}

Reply Stub::point(bool insert, const std::string &args) {
  const std::string p = (insert ? "Z" : "z") + args;
  // TYPE,ADDR,KIND[;cond...]: conditions are not offered (no
  // ConditionalBreakpoints), so none come.
  const size_t c1 = args.find(',');
  uint64_t type = 0, addr = 0, kind = 0;
  if (c1 == std::string::npos || !parse_hex(std::string_view(args).substr(0, c1), &type))
    return bad(p, "not TYPE,ADDR,KIND");
  const std::string rest = args.substr(c1 + 1, args.find(';') == std::string::npos ? std::string::npos
                                                                                     : args.find(';') - c1 - 1);
  if (!two_hex(rest, &addr, &kind)) return bad(p, "not TYPE,ADDR,KIND");
  if (type > 4 || !target_.supports(static_cast<PointKind>(type))) return one("");
  const bool ok = insert ? target_.insert_point(static_cast<PointKind>(type), addr, kind)
                         : target_.remove_point(static_cast<PointKind>(type), addr, kind);
  return ok ? one("OK") : bad(p, "the target refused it");
}

// vCont;ACTION[:THREAD][;ACTION...]: the first action that names this
// thread or all threads applies (there is one thread).
Reply Stub::vcont(const std::string &actions, const std::function<bool()> &interrupted) {
  const std::string action = actions.substr(0, actions.find(';'));
  const std::string what = action.substr(0, action.find(':'));
  if (what == "s" || (what.size() == 3 && what[0] == 'S'))
    return stop_reply(target_.step(Direction::kForward, interrupted));
  if (what == "c" || (what.size() == 3 && what[0] == 'C'))
    return stop_reply(target_.resume(Direction::kForward, interrupted));
  return bad("vCont;" + actions, "only c, C, s and S are supported");
}

// features:read:ANNEX:OFFSET,LENGTH
Reply Stub::xfer(const std::string &args) {
  const std::string prefix = "features:read:";
  if (!starts(args, prefix.c_str())) return one("");
  const std::string rest = args.substr(prefix.size());
  const size_t colon = rest.find(':');
  uint64_t off = 0, len = 0;
  if (colon == std::string::npos || !two_hex(rest.substr(colon + 1), &off, &len))
    return bad("qXfer:" + args, "not ANNEX:OFFSET,LENGTH");
  if (rest.substr(0, colon) != "target.xml") return one("E00");
  const std::string xml = target_.target_xml();
  if (off >= xml.size()) return one("l");
  len = std::min<uint64_t>(len, (kMaxPacket - 2) / 2);  // room for escapes
  const std::string part = xml.substr(off, len);
  return one((off + part.size() < xml.size() ? "m" : "l") + escape(part));
}

Reply Stub::monitor(const std::string &hex) {
  std::string command;
  if (!from_hex(hex, &command)) return bad("qRcmd," + hex, "the command is not hex");
  const std::string text = target_.monitor(command);
  Reply r;
  // O packets of at most 1 KiB of text each, then OK.
  for (size_t i = 0; i < text.size(); i += 1024) r.packets.push_back("O" + to_hex(text.substr(i, 1024)));
  r.packets.push_back("OK");
  return r;
}

}  // namespace kjit::sim::gdb

/* SPDX-License-Identifier: GPL-2.0 */
// gdb's remote serial protocol, the wire: packet framing ("$data#cs"),
// checksums, acknowledgements, binary escapes, run-length encoding of
// replies and hex.  Pure functions and a byte-fed reader: no sockets, no
// emulator, so every malformed input can be tested alone
// (tests/sim/gdb_remote_test.cc).  gdb's manual, "Remote Protocol",
// "Overview", defines all of it.
#ifndef KJIT_SIM_GDB_REMOTE_H
#define KJIT_SIM_GDB_REMOTE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::sim::gdb {

// The largest packet this server takes (its qSupported PacketSize); gdb
// never sends a longer one, so a longer one is not gdb.
constexpr size_t kMaxPacket = 0x4000;

// The sum of the bytes of `payload` modulo 256.
uint8_t checksum(std::string_view payload);
// "$payload#xx", `payload` as it goes on the wire (escaped, encoded).
std::string frame(std::string_view payload);
// Binary data for a packet: '#', '$', '}' and '*' become '}' followed by
// the byte xor 0x20.
std::string escape(std::string_view data);
// Runs of 4 to 98 equal characters as the character, '*' and the repeat
// count + 29 (never '#' or '$', which a count of 6 or 7 would give).  Only
// for hex replies: '*' has no other meaning there.
std::string run_length_encode(std::string_view payload);
std::string to_hex(const uint8_t *data, size_t n);
std::string to_hex(std::string_view text);
// Hex pairs to bytes; false on an odd length or a character not hex.
bool from_hex(std::string_view hex, std::string *out);
// 1 to 16 hex digits, nothing else.
bool parse_hex(std::string_view s, uint64_t *v);

// Splits the byte stream from gdb into what it holds, in order.
class PacketReader {
 public:
  struct Event {
    enum class Kind {
      kPacket,       // a packet whose checksum is right: `text` is its payload
      kAck,          // '+'
      kNack,         // '-': resend the last packet
      kInterrupt,    // 0x03 outside a packet: stop the target
      kBadChecksum,  // `text`: what is wrong; the packet is dropped, answer '-'
      kMalformed,    // `text`: what is wrong (a '$' inside a packet)
      kOversized,    // a packet longer than kMaxPacket: not gdb
      kStray,        // `text`: bytes outside any packet, ignored
    };
    Kind kind;
    std::string text;
  };

  explicit PacketReader(size_t max_payload = kMaxPacket) : max_(max_payload) {}
  // Feeds bytes; completed events are appended to *out.
  void feed(std::string_view bytes, std::vector<Event> *out);

 private:
  enum class State { kIdle, kBody, kChecksum, kSkipBody, kSkipChecksum };
  void flush_stray(std::vector<Event> *out);

  size_t max_;
  State state_ = State::kIdle;
  std::string body_, sum_, stray_;
};

}  // namespace kjit::sim::gdb
#endif

// SPDX-License-Identifier: GPL-2.0
#include "gdb_remote.h"

namespace kjit::sim::gdb {
namespace {

constexpr char kHex[] = "0123456789abcdef";

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s.substr(0, 64)) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (s.size() > 64) out += "...";
  return out;
}

}  // namespace

uint8_t checksum(std::string_view payload) {
  uint8_t sum = 0;
  for (unsigned char c : payload) sum = static_cast<uint8_t>(sum + c);
  return sum;
}

std::string frame(std::string_view payload) {
  const uint8_t sum = checksum(payload);
  std::string out;
  out.reserve(payload.size() + 4);
  out += '$';
  out += payload;
  out += '#';
  out += kHex[sum >> 4];
  out += kHex[sum & 15];
  return out;
}

std::string escape(std::string_view data) {
  std::string out;
  out.reserve(data.size());
  for (char c : data) {
    if (c == '#' || c == '$' || c == '}' || c == '*') {
      out += '}';
      out += static_cast<char>(c ^ 0x20);
    } else {
      out += c;
    }
  }
  return out;
}

std::string run_length_encode(std::string_view payload) {
  std::string out;
  out.reserve(payload.size());
  for (size_t i = 0; i < payload.size();) {
    const char c = payload[i];
    size_t run = 1;
    while (i + run < payload.size() && payload[i + run] == c) run++;
    out += c;
    size_t left = run - 1;  // repeats after the one written
    while (left >= 3) {
      size_t n = left < 97 ? left : 97;  // n + 29 <= 126
      while (n + 29 == '#' || n + 29 == '$') n--;
      out += '*';
      out += static_cast<char>(n + 29);
      left -= n;
      if (left >= 3) {
        out += c;  // a new run starts with the character itself
        left--;
      }
    }
    out.append(left, c);
    i += run;
  }
  return out;
}

std::string to_hex(const uint8_t *data, size_t n) {
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; i++) {
    out += kHex[data[i] >> 4];
    out += kHex[data[i] & 15];
  }
  return out;
}

std::string to_hex(std::string_view text) {
  return to_hex(reinterpret_cast<const uint8_t *>(text.data()), text.size());
}

bool from_hex(std::string_view hex, std::string *out) {
  if (hex.size() % 2) return false;
  out->clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    *out += static_cast<char>(hi << 4 | lo);
  }
  return true;
}

bool parse_hex(std::string_view s, uint64_t *v) {
  if (s.empty() || s.size() > 16) return false;
  uint64_t x = 0;
  for (char c : s) {
    const int d = hex_digit(c);
    if (d < 0) return false;
    x = x << 4 | static_cast<uint64_t>(d);
  }
  *v = x;
  return true;
}

void PacketReader::flush_stray(std::vector<Event> *out) {
  if (stray_.empty()) return;
  out->push_back(Event{Event::Kind::kStray, printable(stray_)});
  stray_.clear();
}

void PacketReader::feed(std::string_view bytes, std::vector<Event> *out) {
  for (char c : bytes) {
    switch (state_) {
      case State::kIdle:
        if (c == '$' || c == '+' || c == '-' || c == '\x03') flush_stray(out);
        if (c == '$') {
          body_.clear();
          state_ = State::kBody;
        } else if (c == '+') {
          out->push_back(Event{Event::Kind::kAck, ""});
        } else if (c == '-') {
          out->push_back(Event{Event::Kind::kNack, ""});
        } else if (c == '\x03') {
          out->push_back(Event{Event::Kind::kInterrupt, ""});
        } else if (stray_.size() < 4096) {
          stray_ += c;
        }
        break;
      case State::kBody:
        if (c == '#') {
          sum_.clear();
          state_ = State::kChecksum;
        } else if (c == '$') {
          out->push_back(Event{Event::Kind::kMalformed,
                               "a packet began before the one before ended: '$" + printable(body_) + "'"});
          body_.clear();
        } else if (body_.size() >= max_) {
          out->push_back(Event{Event::Kind::kOversized, "a packet longer than " + std::to_string(max_) + " bytes"});
          body_.clear();
          state_ = State::kSkipBody;
        } else {
          body_ += c;
        }
        break;
      case State::kChecksum: {
        sum_ += c;
        if (sum_.size() < 2) break;
        state_ = State::kIdle;
        uint64_t got = 0;
        const uint8_t want = checksum(body_);
        if (!parse_hex(sum_, &got))
          out->push_back(Event{Event::Kind::kBadChecksum,
                               "checksum '" + printable(sum_) + "' is not hex in '$" + printable(body_) + "'"});
        else if (got != want)
          out->push_back(Event{Event::Kind::kBadChecksum, "checksum " + sum_ + ", the bytes sum to " +
                                                              to_hex(&want, 1) + " in '$" + printable(body_) + "'"});
        else
          out->push_back(Event{Event::Kind::kPacket, body_});
        body_.clear();
        break;
      }
      case State::kSkipBody:
        if (c == '#') {
          sum_.clear();
          state_ = State::kSkipChecksum;
        }
        break;
      case State::kSkipChecksum:
        sum_ += c;
        if (sum_.size() == 2) state_ = State::kIdle;
        break;
    }
  }
  if (state_ == State::kIdle) flush_stray(out);
}

}  // namespace kjit::sim::gdb

// SPDX-License-Identifier: GPL-2.0
#include "kernel_cases.h"

#include <cstring>

namespace kjit::sim {

uint64_t CaseInput::put(uint64_t offset, const void *p, size_t n) {
  memcpy(scratch.data() + offset, p, n);
  return at(offset);
}
uint64_t CaseInput::put_string(uint64_t offset, const std::string &s) {
  return put(offset, s.c_str(), s.size() + 1);
}

namespace {

// Inputs vary with the variant: empty, short, long, with random content.
std::string random_text(std::mt19937_64 &rng, int variant, const char *alphabet = "abcdefgh ABC,-_0123") {
  static const size_t kLengths[] = {0, 1, 7, 33, 200, 1000};
  size_t len = kLengths[variant % 6] + (variant >= 6 ? rng() % 64 : 0);
  size_t n = strlen(alphabet);
  std::string s;
  for (size_t i = 0; i < len; i++) s += alphabet[rng() % n];
  return s;
}

std::vector<uint8_t> random_bytes(std::mt19937_64 &rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto &b : v) b = static_cast<uint8_t>(rng());
  return v;
}

size_t length_for(std::mt19937_64 &rng, int variant) {
  static const size_t kLengths[] = {0, 1, 3, 8, 15, 64, 333, 4096};
  return kLengths[variant % 8] + (variant >= 8 ? rng() % 100 : 0);
}

// (s1, s2) text cases: equal, prefix, differing.
void two_strings(CaseInput &in, std::mt19937_64 &rng, int v) {
  std::string a = random_text(rng, v);
  std::string b = (v % 3 == 0) ? a : (v % 3 == 1 ? a.substr(0, a.size() / 2) : random_text(rng, v));
  in.args[0] = in.put_string(0, a);
  in.args[1] = in.put_string(8192, b);
}

void one_string(CaseInput &in, std::mt19937_64 &rng, int v) { in.args[0] = in.put_string(0, random_text(rng, v)); }

void buffer_len(CaseInput &in, std::mt19937_64 &rng, int v) {
  size_t n = length_for(rng, v);
  in.args[0] = in.put(0, random_bytes(rng, n).data(), n);
  in.args[1] = n;
}

void bitmap_one(CaseInput &in, std::mt19937_64 &rng, int v) {
  uint64_t words[64];
  for (auto &w : words) w = (v % 3 == 0) ? 0 : (v % 3 == 1 ? ~0ull : rng() & rng());
  in.args[0] = in.put(0, words, sizeof(words));
  in.args[1] = 1 + rng() % (64 * 64 - 1);  // bits
}

void bitmap_two(CaseInput &in, std::mt19937_64 &rng, int v) {
  uint64_t a[32], b[32];
  for (int i = 0; i < 32; i++) {
    a[i] = rng();
    b[i] = (v % 2) ? a[i] : rng();
  }
  in.args[0] = CaseInput::at(16384);  // dst
  in.args[1] = in.put(0, a, sizeof(a));
  in.args[2] = in.put(4096, b, sizeof(b));
  in.args[3] = 1 + rng() % (32 * 64 - 1);
}

void find_bit(CaseInput &in, std::mt19937_64 &rng, int v) {
  uint64_t words[32];
  for (auto &w : words) w = (v % 4 == 0) ? 0 : (rng() & rng() & rng());
  in.args[0] = in.put(0, words, sizeof(words));
  in.args[1] = 1 + rng() % (32 * 64 - 1);  // size
  in.args[2] = rng() % (in.args[1] + 1);   // offset (for _find_next_bit)
}

void number_string(CaseInput &in, std::mt19937_64 &rng, int v) {
  static const char *kNums[] = {"0", "42", "-17", "0x1f", "18446744073709551615", "99999999999999999999",
                                "077", "12abc", "", "  5", "+3", "0b1"};
  in.args[0] = in.put_string(0, kNums[(v + rng() % 3) % 12]);
}

std::vector<KernelCase> make_cases() {
  std::vector<KernelCase> c;
  c.push_back({"strlen", one_string});
  c.push_back({"strnlen", [](CaseInput &in, std::mt19937_64 &r, int v) { one_string(in, r, v); in.args[1] = r() % 300; }});
  c.push_back({"strcmp", two_strings});
  c.push_back({"strncmp", [](CaseInput &in, std::mt19937_64 &r, int v) { two_strings(in, r, v); in.args[2] = r() % 80; }});
  c.push_back({"strcasecmp", two_strings});
  c.push_back({"strncasecmp", [](CaseInput &in, std::mt19937_64 &r, int v) { two_strings(in, r, v); in.args[2] = r() % 80; }});
  c.push_back({"strcpy", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 in.args[0] = CaseInput::at(16384);
                 in.args[1] = in.put_string(0, random_text(r, v));
               }});
  c.push_back({"strncpy", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 in.args[0] = CaseInput::at(16384);
                 in.args[1] = in.put_string(0, random_text(r, v));
                 in.args[2] = r() % 100;
               }});
  c.push_back({"strlcpy", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 in.args[0] = CaseInput::at(16384);
                 in.args[1] = in.put_string(0, random_text(r, v));
                 in.args[2] = r() % 100;
               }});
  c.push_back({"strcat", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 in.args[0] = in.put_string(16384, random_text(r, v % 4));
                 in.args[1] = in.put_string(0, random_text(r, v));
               }});
  c.push_back({"strchr", [](CaseInput &in, std::mt19937_64 &r, int v) { one_string(in, r, v); in.args[1] = "aB,0z"[r() % 5]; }});
  c.push_back({"strrchr", [](CaseInput &in, std::mt19937_64 &r, int v) { one_string(in, r, v); in.args[1] = "aB,0z"[r() % 5]; }});
  c.push_back({"strstr", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 std::string hay = random_text(r, v, "ab");
                 in.args[0] = in.put_string(0, hay);
                 in.args[1] = in.put_string(8192, v % 2 ? "abba" : "b");
               }});
  c.push_back({"strspn", [](CaseInput &in, std::mt19937_64 &r, int v) { one_string(in, r, v); in.args[1] = in.put_string(8192, "abc "); }});
  c.push_back({"strcspn", [](CaseInput &in, std::mt19937_64 &r, int v) { one_string(in, r, v); in.args[1] = in.put_string(8192, ",-"); }});
  c.push_back({"strpbrk", [](CaseInput &in, std::mt19937_64 &r, int v) { one_string(in, r, v); in.args[1] = in.put_string(8192, "_0"); }});
  c.push_back({"memcmp", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 size_t n = length_for(r, v);
                 std::vector<uint8_t> a = random_bytes(r, n), b = a;
                 if (n && v % 2) b[r() % n] ^= 1;
                 in.args[0] = in.put(0, a.data(), n);
                 in.args[1] = in.put(8192, b.data(), n);
                 in.args[2] = n;
               }});
  c.push_back({"memchr", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 buffer_len(in, r, v);
                 in.args[2] = in.args[1];
                 in.args[1] = r() % 256;
               }});
  c.push_back({"memchr_inv", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 size_t n = length_for(r, v);
                 std::vector<uint8_t> a(n, 0x5a);
                 if (n && v % 2) a[r() % n] = 1;
                 in.args[0] = in.put(0, a.data(), n);
                 in.args[1] = 0x5a;
                 in.args[2] = n;
               }});
  c.push_back({"memscan", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 buffer_len(in, r, v);
                 in.args[2] = in.args[1];
                 in.args[1] = r() % 256;
               }});
  c.push_back({"memweight", buffer_len});
  c.push_back({"memset", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 in.args[0] = CaseInput::at(16384 + r() % 16);
                 in.args[1] = r() % 256;
                 in.args[2] = length_for(r, v);
               }});
  c.push_back({"memcpy", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 size_t n = length_for(r, v);
                 in.args[0] = CaseInput::at(16384 + r() % 16);
                 in.args[1] = in.put(r() % 16, random_bytes(r, n).data(), n);
                 in.args[2] = n;
               }});
  c.push_back({"memmove", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 size_t n = length_for(r, v);
                 uint64_t src = in.put(1024, random_bytes(r, n).data(), n);
                 in.args[0] = src + (v % 2 ? 7 : -5);  // overlapping either way
                 in.args[1] = src;
                 in.args[2] = n;
               }});
  c.push_back({"crc32_le", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 buffer_len(in, r, v);
                 in.args[2] = in.args[1];
                 in.args[1] = in.args[0];
                 in.args[0] = r();
               }});
  c.push_back({"crc32_be", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 buffer_len(in, r, v);
                 in.args[2] = in.args[1];
                 in.args[1] = in.args[0];
                 in.args[0] = r();
               }});
  c.push_back({"__crc32c_le", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 buffer_len(in, r, v);
                 in.args[2] = in.args[1];
                 in.args[1] = in.args[0];
                 in.args[0] = r();
               }});
  c.push_back({"crc16", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 buffer_len(in, r, v);
                 in.args[2] = in.args[1];
                 in.args[1] = in.args[0];
                 in.args[0] = r() & 0xffff;
               }});
  c.push_back({"crc_ccitt", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 buffer_len(in, r, v);
                 in.args[2] = in.args[1];
                 in.args[1] = in.args[0];
                 in.args[0] = r() & 0xffff;
               }});
  c.push_back({"csum_partial", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 size_t n = length_for(r, v);
                 in.args[0] = in.put(r() % 8, random_bytes(r, n).data(), n);  // odd alignments too
                 in.args[1] = n;
                 in.args[2] = r() & 0xffffffff;
               }});
  c.push_back({"ip_compute_csum", buffer_len});
  c.push_back({"__bitmap_weight", bitmap_one});
  c.push_back({"__bitmap_and", bitmap_two});
  c.push_back({"__bitmap_or", bitmap_two});
  c.push_back({"__bitmap_xor", bitmap_two});
  c.push_back({"__bitmap_equal", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 bitmap_two(in, r, v);
                 in.args[0] = in.args[1];
                 in.args[1] = in.args[2];
                 in.args[2] = in.args[3];
               }});
  c.push_back({"__bitmap_complement", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 bitmap_two(in, r, v);
                 in.args[2] = in.args[3];
               }});
  c.push_back({"_find_first_bit", find_bit});
  c.push_back({"_find_first_zero_bit", find_bit});
  c.push_back({"_find_last_bit", find_bit});
  c.push_back({"_find_next_bit", find_bit});
  c.push_back({"__sw_hweight64", [](CaseInput &in, std::mt19937_64 &r, int) { in.args[0] = r(); }});
  c.push_back({"__sw_hweight32", [](CaseInput &in, std::mt19937_64 &r, int) { in.args[0] = r() & 0xffffffff; }});
  c.push_back({"int_sqrt", [](CaseInput &in, std::mt19937_64 &r, int v) { in.args[0] = v % 2 ? r() : r() % 1000; }});
  c.push_back({"gcd", [](CaseInput &in, std::mt19937_64 &r, int) { in.args[0] = r() % 100000; in.args[1] = r() % 100000; }});
  c.push_back({"int_pow", [](CaseInput &in, std::mt19937_64 &r, int) { in.args[0] = r() % 50; in.args[1] = r() % 12; }});
  c.push_back({"full_name_hash", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 std::string s = random_text(r, v);
                 in.args[0] = r();
                 in.args[1] = in.put_string(0, s);
                 in.args[2] = s.size();
               }});
  c.push_back({"hashlen_string", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 in.args[0] = r();
                 in.args[1] = in.put_string(0, random_text(r, v, "abc/def"));
               }});
  c.push_back({"hex2bin", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 std::string hex = random_text(r, v, "0123456789abcdefABCDEF");
                 if (v % 3 == 2) hex += "zz";
                 in.args[0] = CaseInput::at(16384);
                 in.args[1] = in.put_string(0, hex);
                 in.args[2] = hex.size() / 2;
               }});
  c.push_back({"bin2hex", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 size_t n = length_for(r, v) % 2000;
                 in.args[0] = CaseInput::at(16384);
                 in.args[1] = in.put(0, random_bytes(r, n).data(), n);
                 in.args[2] = n;
               }});
  c.push_back({"simple_strtoul", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 number_string(in, r, v);
                 in.args[1] = CaseInput::at(16384);
                 in.args[2] = (v % 3) * 8;  // base 0, 8, 16
               }});
  c.push_back({"kstrtoull", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 number_string(in, r, v);
                 in.args[1] = (v % 3) * 8;
                 in.args[2] = CaseInput::at(16384);
               }});
  c.push_back({"kstrtobool", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 static const char *kWords[] = {"y", "N", "1", "0", "on", "off", "oN", "x", ""};
                 in.args[0] = in.put_string(0, kWords[(v + r() % 9) % 9]);
                 in.args[1] = CaseInput::at(16384);
               }});
  c.push_back({"skip_spaces", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 in.args[0] = in.put_string(0, std::string(v % 5, ' ') + random_text(r, v));
               }});
  c.push_back({"strim", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 in.args[0] = in.put_string(0, std::string(v % 3, ' ') + random_text(r, v) + std::string(v % 4, ' '));
               }});
  c.push_back({"strreplace", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 one_string(in, r, v);
                 in.args[1] = 'a';
                 in.args[2] = '!';
               }});
  c.push_back({"sysfs_streq", two_strings});
  c.push_back({"glob_match", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 static const char *kPats[] = {"*", "a*b", "?b*", "[a-c]*", "*[!x]", "abc", "\\*a"};
                 in.args[0] = in.put_string(8192, kPats[(v + r() % 7) % 7]);
                 in.args[1] = in.put_string(0, random_text(r, v % 4, "abcx*"));
               }});
  c.push_back({"uuid_is_valid", [](CaseInput &in, std::mt19937_64 &r, int v) {
                 std::string u = "c0ffee00-1234-4abc-8def-0123456789ab";
                 if (v % 2) u[r() % u.size()] = "g-9"[r() % 3];
                 in.args[0] = in.put_string(0, u);
               }});
  return c;
}

}  // namespace

const std::vector<KernelCase> &kernel_cases() {
  static const std::vector<KernelCase> cases = make_cases();
  return cases;
}

}  // namespace kjit::sim

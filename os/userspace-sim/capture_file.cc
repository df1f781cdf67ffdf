// SPDX-License-Identifier: GPL-2.0
// Capture file reader and writer.  Every read goes through Reader, which
// checks bounds, so no input can make the loader read past its buffer.
#include "capture_file.h"
#include "hex_text.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

namespace kjit::sim {
namespace {

constexpr size_t kHeaderSize = KJIT_CAPF_HEADER_SIZE;  // magic, version, count, flags, reserved
constexpr size_t kSectionHeaderSize = KJIT_CAPF_SECTION_HEADER_SIZE;  // type, length, crc32
constexpr size_t kRegionHeaderSize = sizeof(kjit_capf_region);  // addr, size, perms, reserved
constexpr size_t kRegsPayloadSize = KJIT_CAPF_REGS_SIZE;
constexpr size_t kEntryPayloadSize = KJIT_CAPF_ENTRY_SIZE;
// More sections than this is certainly a corrupt count (and bounds work).
constexpr uint32_t kMaxSections = 1u << 16;

class Reader {
 public:
  Reader(const uint8_t *data, size_t size) : data_(data), size_(size) {}
  size_t remaining() const { return size_ - pos_; }
  size_t pos() const { return pos_; }
  bool u32(uint32_t *v) { return little(v, 4); }
  bool u64(uint64_t *v) { return little(v, 8); }
  bool bytes(size_t n, const uint8_t **p) {
    if (remaining() < n) return false;
    *p = data_ + pos_;
    pos_ += n;
    return true;
  }

 private:
  template <typename T>
  bool little(T *v, size_t n) {
    if (remaining() < n) return false;
    T r = 0;
    for (size_t i = 0; i < n; i++) r |= static_cast<T>(data_[pos_ + i]) << (8 * i);
    pos_ += n;
    *v = r;
    return true;
  }
  const uint8_t *data_;
  size_t size_;
  size_t pos_ = 0;
};

void put_u32(std::vector<uint8_t> *o, uint32_t v) {
  for (int i = 0; i < 4; i++) o->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t> *o, uint64_t v) {
  for (int i = 0; i < 8; i++) o->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

std::string parse_regions(const uint8_t *p, size_t n, Capture *out) {
  Reader r(p, n);
  uint32_t count;
  if (!r.u32(&count)) return "REGIONS: truncated count";
  // Each region needs at least its header and one byte: reject absurd
  // counts before reserving anything.
  if (count > r.remaining() / (kRegionHeaderSize + 1))
    return "REGIONS: count " + std::to_string(count) + " does not fit in the section";
  out->regions.clear();
  out->regions.reserve(count);
  for (uint32_t i = 0; i < count; i++) {
    const std::string where = "REGIONS[" + std::to_string(i) + "]: ";
    uint64_t addr, size;
    uint32_t perms, reserved;
    if (!r.u64(&addr) || !r.u64(&size) || !r.u32(&perms) || !r.u32(&reserved))
      return where + "truncated header";
    if (perms & ~kPermMask) return where + "unknown permission bits " + hex(perms);
    if (reserved != 0) return where + "reserved field is not zero";
    if (size == 0) return where + "empty region";
    if (size > r.remaining()) return where + "size " + hex(size) + " exceeds the section";
    const uint8_t *bytes;
    r.bytes(static_cast<size_t>(size), &bytes);
    Region reg;
    reg.addr = addr;
    reg.perms = perms;
    reg.bytes.assign(bytes, bytes + size);
    out->regions.push_back(std::move(reg));
  }
  if (r.remaining() != 0) return "REGIONS: " + std::to_string(r.remaining()) + " trailing bytes";
  return "";
}

std::string parse_regs(const uint8_t *p, size_t n, Capture *out) {
  if (n != kRegsPayloadSize)
    return "REGS: length " + std::to_string(n) + ", expected " + std::to_string(kRegsPayloadSize);
  Reader r(p, n);
  for (auto &g : out->regs.gpr) r.u64(&g);
  r.u64(&out->regs.rip);
  r.u64(&out->regs.rflags);
  r.u64(&out->regs.gs_base);
  r.u64(&out->regs.fs_base);
  return "";
}

std::string parse_entry(const uint8_t *p, size_t n, Capture *out) {
  if (n != kEntryPayloadSize)
    return "ENTRY: length " + std::to_string(n) + ", expected " + std::to_string(kEntryPayloadSize);
  Reader r(p, n);
  r.u64(&out->entry_pc);
  r.u64(&out->sentinel);
  return "";
}

std::string parse_name(const uint8_t *p, size_t n, Capture *out) {
  if (n > kMaxNameLength) return "NAME: longer than " + std::to_string(kMaxNameLength) + " bytes";
  if (memchr(p, 0, n) != nullptr) return "NAME: contains a NUL byte";
  out->name.assign(reinterpret_cast<const char *>(p), n);
  return "";
}

bool is_known(uint32_t type) {
  return type >= static_cast<uint32_t>(SectionType::kRegions) &&
         type <= static_cast<uint32_t>(SectionType::kName);
}

}  // namespace

uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t size) { return kjit_crc32_update(crc, data, size); }

uint32_t crc32(const uint8_t *data, size_t size) { return crc32_update(0, data, size); }

uint32_t section_crc(uint32_t type, const uint8_t *payload, uint64_t len) {
  // The CRC covers the type and length too, so a flipped type (which would
  // otherwise turn a known section into a skipped one) is caught.
  return kjit_capf_section_crc(type, payload, len);
}

const Region *Capture::find_region(uint64_t addr) const {
  if (last_found_ < regions.size() && regions[last_found_].contains(addr)) return &regions[last_found_];
  // Regions are sorted and disjoint: the candidate is the last one starting
  // at or below addr.
  auto it = std::upper_bound(regions.begin(), regions.end(), addr,
                             [](uint64_t a, const Region &r) { return a < r.addr; });
  if (it == regions.begin()) return nullptr;
  --it;
  if (!it->contains(addr)) return nullptr;
  last_found_ = static_cast<size_t>(it - regions.begin());
  return &*it;
}

std::string validate_capture(const Capture &cap) {
  if (cap.regions.empty()) return "no memory regions";
  for (size_t i = 0; i < cap.regions.size(); i++) {
    const Region &r = cap.regions[i];
    const std::string where = "region " + std::to_string(i) + " at " + hex(r.addr) + ": ";
    if (r.bytes.empty()) return where + "empty";
    if (r.perms & ~kPermMask) return where + "unknown permission bits";
    if (r.addr + (r.bytes.size() - 1) < r.addr) return where + "wraps around the address space";
    if (i > 0) {
      const Region &p = cap.regions[i - 1];
      if (r.addr < p.addr) return where + "regions are not sorted by address";
      if (r.addr <= p.addr + (p.bytes.size() - 1))
        return where + "overlaps the region at " + hex(p.addr);
    }
  }
  const Region *e = cap.find_region(cap.entry_pc);
  if (e == nullptr) return "entry " + hex(cap.entry_pc) + " is not inside a region";
  if (!(e->perms & kPermX)) return "entry " + hex(cap.entry_pc) + " is not executable";
  if (cap.find_region(cap.sentinel) != nullptr)
    return "sentinel " + hex(cap.sentinel) + " lies inside a captured region";
  if (cap.name.size() > kMaxNameLength) return "name too long";
  if (cap.name.find('\0') != std::string::npos) return "name contains a NUL byte";
  for (const RawSection &s : cap.extra)
    if (is_known(s.type)) return "extra section has a known type " + std::to_string(s.type);
  return "";
}

std::string parse_capture(const uint8_t *data, size_t size, Capture *out) {
  *out = Capture{};
  Reader r(data, size);
  const uint8_t *magic;
  if (!r.bytes(8, &magic)) return "truncated header (file is " + std::to_string(size) + " bytes)";
  if (memcmp(magic, kCaptureMagic, 8) != 0) return "bad magic: not a kjit capture";
  uint32_t version, count, flags, reserved;
  if (!r.u32(&version) || !r.u32(&count) || !r.u32(&flags) || !r.u32(&reserved))
    return "truncated header (file is " + std::to_string(size) + " bytes)";
  if (version < kMinCaptureVersion || version > kCaptureVersion)
    return "unsupported version " + std::to_string(version) + " (this loader reads " +
           std::to_string(kMinCaptureVersion) + " to " + std::to_string(kCaptureVersion) + ")";
  // No flags are defined yet; a set flag means a feature we do not know.
  if (flags != 0) return "unknown header flags " + hex(flags);
  if (reserved != 0) return "reserved header field is not zero";
  if (count > kMaxSections) return "section count " + std::to_string(count) + " is absurd";
  if (count > r.remaining() / kSectionHeaderSize)
    return "section count " + std::to_string(count) + " exceeds the file size";

  bool seen[5] = {};
  for (uint32_t i = 0; i < count; i++) {
    const std::string where = "section " + std::to_string(i) + " at offset " +
                              std::to_string(r.pos()) + ": ";
    uint32_t type, crc;
    uint64_t len;
    if (!r.u32(&type) || !r.u64(&len) || !r.u32(&crc)) return where + "truncated section header";
    if (len > r.remaining())
      return where + "length " + std::to_string(len) + " exceeds the " +
             std::to_string(r.remaining()) + " bytes left";
    const uint8_t *payload;
    r.bytes(static_cast<size_t>(len), &payload);
    const uint32_t actual = section_crc(type, payload, len);
    if (actual != crc) return where + "CRC mismatch (stored " + hex(crc) + ", computed " + hex(actual) + ")";
    std::string err;
    if (is_known(type)) {
      if (seen[type]) return where + "duplicate section of type " + std::to_string(type);
      seen[type] = true;
    }
    switch (static_cast<SectionType>(type)) {
      case SectionType::kRegions: err = parse_regions(payload, len, out); break;
      case SectionType::kRegs: err = parse_regs(payload, len, out); break;
      case SectionType::kEntry: err = parse_entry(payload, len, out); break;
      case SectionType::kName: err = parse_name(payload, len, out); break;
      default:
        // Reserved or unknown: checksummed above, kept verbatim.
        out->extra.push_back(RawSection{type, std::vector<uint8_t>(payload, payload + len)});
        break;
    }
    if (!err.empty()) return where + err;
  }
  if (r.remaining() != 0) return std::to_string(r.remaining()) + " trailing bytes after the last section";
  if (!seen[1]) return "missing REGIONS section";
  if (!seen[2]) return "missing REGS section";
  if (!seen[3]) return "missing ENTRY section";
  return validate_capture(*out);
}

std::string serialize_capture(const Capture &cap, std::vector<uint8_t> *out) {
  std::string err = validate_capture(cap);
  if (!err.empty()) return err;
  std::vector<uint8_t> o(kCaptureMagic, kCaptureMagic + 8);
  const uint32_t count = 3 + (cap.name.empty() ? 0 : 1) + static_cast<uint32_t>(cap.extra.size());
  put_u32(&o, kCaptureVersion);
  put_u32(&o, count);
  put_u32(&o, 0);  // flags
  put_u32(&o, 0);  // reserved
  auto section = [&o](uint32_t type, const std::vector<uint8_t> &payload) {
    put_u32(&o, type);
    put_u64(&o, payload.size());
    put_u32(&o, section_crc(type, payload.data(), payload.size()));
    o.insert(o.end(), payload.begin(), payload.end());
  };
  std::vector<uint8_t> p;
  put_u32(&p, static_cast<uint32_t>(cap.regions.size()));
  for (const Region &r : cap.regions) {
    put_u64(&p, r.addr);
    put_u64(&p, r.bytes.size());
    put_u32(&p, r.perms);
    put_u32(&p, 0);
    p.insert(p.end(), r.bytes.begin(), r.bytes.end());
  }
  section(static_cast<uint32_t>(SectionType::kRegions), p);
  p.clear();
  for (uint64_t g : cap.regs.gpr) put_u64(&p, g);
  for (uint64_t v : {cap.regs.rip, cap.regs.rflags, cap.regs.gs_base, cap.regs.fs_base}) put_u64(&p, v);
  section(static_cast<uint32_t>(SectionType::kRegs), p);
  p.clear();
  put_u64(&p, cap.entry_pc);
  put_u64(&p, cap.sentinel);
  section(static_cast<uint32_t>(SectionType::kEntry), p);
  if (!cap.name.empty())
    section(static_cast<uint32_t>(SectionType::kName), std::vector<uint8_t>(cap.name.begin(), cap.name.end()));
  for (const RawSection &s : cap.extra) section(s.type, s.payload);
  *out = std::move(o);
  return "";
}

std::string load_capture_file(const std::string &path, Capture *out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "cannot open " + path;
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) return "cannot read " + path;
  std::string err = parse_capture(data.data(), data.size(), out);
  return err.empty() ? "" : path + ": " + err;
}

std::string save_capture_file(const std::string &path, const Capture &cap) {
  std::vector<uint8_t> data;
  std::string err = serialize_capture(cap, &data);
  if (!err.empty()) return err;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return "cannot create " + path;
  f.write(reinterpret_cast<const char *>(data.data()), static_cast<std::streamsize>(data.size()));
  return f ? "" : "cannot write " + path;
}

CaptureKaslr capture_kaslr(const Capture &cap) {
  CaptureKaslr k;
  uint64_t v[3];
  for (const RawSection &s : cap.extra)
    if (s.type == KJIT_CAPF_KASLR && s.payload.size() == sizeof v) {
      memcpy(v, s.payload.data(), sizeof v);
      k.offset = v[0];
      k.image_lo = v[1];
      k.image_hi = v[2];
    }
  return k;
}

CaptureKernel capture_kernel(const Capture &cap) {
  for (const RawSection &s : cap.extra) {
    if (s.type != KJIT_CAPF_KERNEL) continue;
    // Two strings, each a u32 length and that many printable bytes.
    std::string str[2];
    size_t at = 0;
    bool ok = true;
    for (std::string &out : str) {
      uint32_t n = 0;
      if (s.payload.size() - at < 4) {
        ok = false;
        break;
      }
      memcpy(&n, s.payload.data() + at, 4);
      at += 4;
      if (n > KJIT_CAPF_KERNEL_STRING_MAX || s.payload.size() - at < n) {
        ok = false;
        break;
      }
      out.assign(reinterpret_cast<const char *>(s.payload.data() + at), n);
      at += n;
      for (char c : out) ok = ok && c > 0x20 && c < 0x7f;
    }
    if (ok && at == s.payload.size()) return CaptureKernel{str[0], str[1]};
  }
  return CaptureKernel{};
}

}  // namespace kjit::sim

// SPDX-License-Identifier: GPL-2.0
#include "debug_find.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace kjit::report {
namespace {

std::string debug_root() {
  const char *r = getenv("KJIT_DEBUG_ROOT");
  return r ? r : "";
}

std::vector<unsigned char> unhex(const std::string &s) {
  std::vector<unsigned char> out;
  for (size_t i = 0; i + 1 < s.size(); i += 2) out.push_back((unsigned char)strtoul(s.substr(i, 2).c_str(), nullptr, 16));
  return out;
}

// elfutils' debuginfod client, loaded only when DEBUGINFOD_URLS asks for it
// (as libdwfl itself does): no build or package dependency on it.
bool from_debuginfod(const std::string &build_id, std::string &path, std::string &tried) {
  const char *urls = getenv("DEBUGINFOD_URLS");
  if (!urls || !*urls) { tried += "; debuginfod (DEBUGINFOD_URLS is not set)"; return false; }
  void *lib = dlopen("libdebuginfod.so.1", RTLD_NOW);
  if (!lib) { tried += "; debuginfod (libdebuginfod.so.1 missing: apt-get install libdebuginfod1)"; return false; }
  using begin_fn = void *(*)();
  using find_fn = int (*)(void *, const unsigned char *, int, char **);
  using end_fn = void (*)(void *);
  auto begin = reinterpret_cast<begin_fn>(dlsym(lib, "debuginfod_begin"));
  auto find = reinterpret_cast<find_fn>(dlsym(lib, "debuginfod_find_debuginfo"));
  auto end = reinterpret_cast<end_fn>(dlsym(lib, "debuginfod_end"));
  bool ok = false;
  if (begin && find && end) {
    if (void *client = begin()) {
      std::vector<unsigned char> id = unhex(build_id);
      char *got = nullptr;
      int fd = find(client, id.data(), (int)id.size(), &got);
      if (fd >= 0) {
        close(fd);
        if (got) { path = got; ok = true; }
      } else {
        tried += std::string("; debuginfod at ") + urls + " (" + strerror(-fd) + ")";
      }
      free(got);
      end(client);
    }
  }
  dlclose(lib);
  return ok;
}

}  // namespace

std::string elf_build_id(const std::string &path) {
  std::string id;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return id;
  elf_version(EV_CURRENT);
  Elf *elf = elf_begin(fd, ELF_C_READ, nullptr);
  for (Elf_Scn *scn = nullptr; elf && id.empty() && (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE) continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    GElf_Nhdr nh;
    size_t off = 0, name_off, desc_off;
    while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
      if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
          memcmp((const char *)data->d_buf + name_off, "GNU", 4))
        continue;
      const unsigned char *d = (const unsigned char *)data->d_buf + desc_off;
      for (size_t i = 0; i < nh.n_descsz; i++) {
        char h[3];
        snprintf(h, sizeof h, "%02x", d[i]);
        id += h;
      }
      break;
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return id;
}

bool find_vmlinux(const std::string &release, const std::string &build_id, std::string &path,
                  std::string &error) {
  const std::string root = debug_root();
  std::string tried;
  // 1. Debian's -dbg package, by release; the build id must agree (a
  //    rebuilt kernel of the same release is another kernel).
  if (!release.empty()) {
    std::string p = root + "/usr/lib/debug/boot/vmlinux-" + release;
    tried = p;
    if (access(p.c_str(), R_OK) == 0) {
      std::string id = elf_build_id(p);
      if (build_id.empty() || id == build_id) { path = p; return true; }
      tried += " (build id " + (id.empty() ? std::string("none") : id) + ", not the recording's)";
    } else {
      tried += " (absent)";
    }
  }
  // 2. The build-id tree.
  if (build_id.size() > 2) {
    std::string p = root + "/usr/lib/debug/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) + ".debug";
    if (access(p.c_str(), R_OK) == 0 && elf_build_id(p) == build_id) { path = p; return true; }
    tried += (tried.empty() ? "" : ", ") + p + " (absent)";
    // 3. debuginfod.
    if (from_debuginfod(build_id, path, tried)) return true;
  } else {
    tried += "; the recording has no build id, so no build-id lookup";
  }
  error = "no debug info for kernel " + (release.empty() ? std::string("(release not recorded)") : release) +
          " (build id " + (build_id.empty() ? std::string("not recorded") : build_id) + "): tried " + tried +
          ". On Debian: apt-get install linux-image-" + (release.empty() ? std::string("RELEASE") : release) +
          "-dbg, or give --vmlinux PATH";
  return false;
}

}  // namespace kjit::report

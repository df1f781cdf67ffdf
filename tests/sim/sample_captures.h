/* SPDX-License-Identifier: GPL-2.0 */
// The committed kernel captures the replay tests run on: tests/data/captures
// (KJIT_CAPTURE_DIR, set by tests/sim/CMakeLists.txt), sorted by name.
#ifndef KJIT_TESTS_SIM_SAMPLE_CAPTURES_H
#define KJIT_TESTS_SIM_SAMPLE_CAPTURES_H

#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

namespace kjit::sim {

inline const std::string kDir = KJIT_CAPTURE_DIR;

inline std::vector<std::string> captures() {
  std::vector<std::string> out;
  if (DIR *d = opendir(kDir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 8 && n.substr(n.size() - 8) == ".kjitcap") out.push_back(kDir + "/" + n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kjit::sim

#endif

/* SPDX-License-Identifier: GPL-2.0 */
// Snapshots of a replay in the original view, so that going back to an
// earlier instruction re-runs from the nearest one instead of from the
// start.  A checkpoint holds the CPU state, the log server's position, how
// many writes the run had made, and a copy of each page dirtied since the
// checkpoint before it; the first holds every writable page.  A page's
// content at checkpoint k is its latest copy at or before k.
#ifndef KJIT_SIM_CHECKPOINTS_H
#define KJIT_SIM_CHECKPOINTS_H

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "emulator.h"
#include "log_server.h"

namespace kjit::sim {

class Checkpoints {
 public:
  struct Taken {
    uint64_t position;        // instructions executed
    LogServer::Position log;  // where the log server was
    size_t writes;            // Emulator::writes() then
    CpuState cpu;
  };

  void clear();
  size_t size() const { return taken_.size(); }
  const Taken &at(size_t k) const { return taken_[k]; }
  // The index of the last checkpoint at or before `position` (0 if none:
  // the first is at position 0).
  size_t last_at_or_before(uint64_t position) const;

  // Takes the next checkpoint (at a position after the last one's).
  // `dirty`: the pages written since the last one; the first copies every
  // writable page of the emulator instead.  "" or an error.
  std::string take(uint64_t position, Emulator &emu, const LogServer::Position &log, const std::set<uint64_t> &dirty);
  // Puts the emulator's CPU and memory back as they were at checkpoint k;
  // `dirty`: every page written since then.  "" or an error.
  std::string restore(size_t k, Emulator &emu, const std::set<uint64_t> &dirty) const;
  // Bytes of page copies held, for the report.
  uint64_t bytes() const { return bytes_; }

 private:
  struct PageCopy {
    size_t checkpoint;
    std::vector<uint8_t> bytes;
  };
  std::vector<Taken> taken_;
  std::map<uint64_t, std::vector<PageCopy>> pages_;  // by page address, oldest first
  uint64_t bytes_ = 0;
};

}  // namespace kjit::sim
#endif

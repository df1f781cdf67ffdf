/* SPDX-License-Identifier: GPL-2.0 */
// KCOV traces as recordings: the PCs a KCOV client printed (kjit's KCOV
// device records block starts, see README "Fuzzing a stock kernel") become
// blocks, so every format reads them (text, lcov, drcov, annotate, json).
#pragma once
#include <string>

#include "data_file.h"
#include "debug_info.h"

namespace kjit::report {

// `path`: one PC per line as its first field (0x-prefixed hex; other lines
// are skipped), and optionally a line "stext 0xADDR" with the running
// kernel's _stext (KASLR; without it the PCs are taken as vmlinux
// addresses).  Each distinct PC is a block: its count is how often it
// appears, its extent the vmlinux's code up to and including the first
// control transfer.
bool recording_from_kcov(const std::string &path, const DebugInfo &dbg, Recording &out, std::string &error);

}  // namespace kjit::report

// SPDX-License-Identifier: GPL-2.0
// Prints what syz-manager's /rawcover page prints for the KCOV PCs in a
// file (one 0x PC a line), with syzkaller's own code for each step a PC
// takes from syz-executor to the page, for linux/amd64 and one VM (so no
// module canonicalization):
//   - syz-executor sends each PC's low 32 bits (executor.cc, write_coverage_signal);
//   - the corpus keeps them; /rawcover restores each (syz-manager/cover.go
//     coverToPCs: ReportGenerator.RestorePC, the upper bits of the
//     vmlinux's .text and PreviousInstructionPC) and prints them
//     (syz-manager/html.go httpCoverCover: ReportGenerator.DoRawCover).
// Built inside a syzkaller tree by tests/syzkaller/syz-cover.sh.
package main

import (
	"bufio"
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"

	"github.com/google/syzkaller/pkg/cover"
	"github.com/google/syzkaller/sys/targets"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintf(os.Stderr, "usage: kjit-rawcover KERNEL_OBJ KCOV_PCS\n")
		os.Exit(2)
	}
	target := targets.Get(targets.Linux, targets.AMD64)
	obj := os.Args[1]
	rg, err := cover.MakeReportGenerator(target, "qemu", obj, obj, obj, nil, nil, nil, false)
	if err != nil {
		fmt.Fprintf(os.Stderr, "report generator: %v\n", err)
		os.Exit(1)
	}
	f, err := os.Open(os.Args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	var pcs []uint64
	for s := bufio.NewScanner(f); s.Scan(); {
		pc, err := strconv.ParseUint(strings.TrimSpace(s.Text()), 0, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%v\n", err)
			os.Exit(1)
		}
		pcs = append(pcs, rg.RestorePC(uint32(pc)))
	}
	page := httptest.NewRecorder()
	rg.DoRawCover(page, []cover.Prog{{PCs: pcs}}, nil)
	os.Stdout.Write(page.Body.Bytes())
}

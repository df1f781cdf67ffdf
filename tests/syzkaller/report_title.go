// SPDX-License-Identifier: GPL-2.0
// Prints the crash titles syzkaller's report parser gives a console log:
// pkg/report's NewReporter and ParseAll, as syz-manager and
// tools/syz-symbolize call them, for linux/amd64 without kernel objects
// (titles come from the log alone).  syz-symbolize itself needs the
// generated syscall descriptions only to load its config; this does not.
// Built inside a syzkaller tree by tests/syzkaller/report-titles.sh.
package main

import (
	"fmt"
	"os"

	"github.com/google/syzkaller/pkg/mgrconfig"
	"github.com/google/syzkaller/pkg/report"
	"github.com/google/syzkaller/sys/targets"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintf(os.Stderr, "usage: kjit-report-title CONSOLE_LOG\n")
		os.Exit(2)
	}
	cfg := &mgrconfig.Config{}
	cfg.TargetOS, cfg.TargetArch, cfg.TargetVMArch = targets.Linux, targets.AMD64, targets.AMD64
	cfg.SysTarget = targets.Get(targets.Linux, targets.AMD64)
	reporter, err := report.NewReporter(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "reporter: %v\n", err)
		os.Exit(1)
	}
	text, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	reps := report.ParseAll(reporter, text)
	if len(reps) == 0 {
		fmt.Fprintf(os.Stderr, "no crash in %v\n", os.Args[1])
		os.Exit(1)
	}
	for _, rep := range reps {
		fmt.Printf("TITLE: %v\n", rep.Title)
		fmt.Printf("CORRUPTED: %v (%v)\n", rep.Corrupted, rep.CorruptedReason)
	}
}

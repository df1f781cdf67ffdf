#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Builds syz-manager, syz-fuzzer, syz-execprog and syz-executor offline from
# a syzkaller source tree of bfc478367 (among the last commits that
# vendor every module Debian 12's Go 1.19 needs), into a copy of that tree.
#
#   tests/syzkaller/build-syzkaller.sh SYZKALLER_SRC [BUILD_DIR] [GITREV]
#
# SYZKALLER_SRC is a checkout or an extracted copy (no .git needed); it is
# not modified. BUILD_DIR (default /tmp/syz-build) receives a copy of the
# tree with two edits and, after `make`, the binaries in BUILD_DIR/bin/.
# GITREV (default bfc478367b83b3fda580f54964aa9f3651beeb3d) is compiled into
# every binary: syz-manager, syz-fuzzer and syz-executor refuse to talk to
# each other when it is empty, and a copy without .git cannot compute it.
#
# The edits, both because vendor/ may lack google.golang.org/api/compute
# (compute-gen.go is one of the largest blobs, missing from partial copies)
# and kjit's tests need neither VM type:
#   - vm/vm.go: drop the imports of the gce and cuttlefish VM types
#     (cuttlefish is built on gce);
#   - syz-manager/manager.go: drop pkg/gce, whose one use asks the GCE
#     metadata server for the external IP of the web UI's address.
set -eu

SRC=${1:?usage: build-syzkaller.sh SYZKALLER_SRC [BUILD_DIR] [GITREV]}
OUT=${2:-/tmp/syz-build}
REV=${3:-bfc478367b83b3fda580f54964aa9f3651beeb3d}

[ -f "$SRC/syz-manager/manager.go" ] || { echo "$SRC: not a syzkaller tree" >&2; exit 1; }
mkdir -p "$OUT"
# Copy without .git: the Makefile's `git diff` must not see a repository.
tar -C "$SRC" --exclude=.git -cf - . | tar -C "$OUT" -xf -

cd "$OUT"
sed -i -e '\#"github.com/google/syzkaller/vm/gce"#d' \
       -e '\#"github.com/google/syzkaller/vm/cuttlefish"#d' vm/vm.go
sed -i -e '\#"github.com/google/syzkaller/pkg/gce"#d' syz-manager/manager.go
# The three-line `if GCE, err := gce.NewContext(""); ... }` block.
sed -i -e '/gce\.NewContext("")/,/^\t\t}$/d' syz-manager/manager.go
if grep -q 'gce\.' syz-manager/manager.go || grep -q 'vm/gce\|vm/cuttlefish' vm/vm.go; then
	echo "build-syzkaller.sh: the gce edits did not apply (another syzkaller commit?)" >&2
	exit 1
fi

# -j1 and GOMAXPROCS=1 (go build's -p and the compiler's workers follow
# it): the build shares the machine. GOPROXY=off: everything comes from
# vendor/ (Go >= 1.14 uses it by default when go.mod says so). REV and
# GITREVDATE replace the Makefile's `git rev-parse`/`git log`.
export GOPROXY=off GOTOOLCHAIN=local GOMAXPROCS=1
export GOCACHE="${GOCACHE:-$OUT/.gocache}"
nice -n 19 make -j1 TARGETOS=linux TARGETARCH=amd64 \
	GITREV="$REV" REV="$REV" GITREVDATE=20230701-000000 \
	manager fuzzer execprog executor

ls -l bin/syz-manager bin/linux_amd64/syz-fuzzer bin/linux_amd64/syz-execprog \
	bin/linux_amd64/syz-executor

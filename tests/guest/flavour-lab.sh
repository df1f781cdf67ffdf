# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154  # root: set by the sourcing script
# Another kernel flavour's lab beside BUILD's, for the tests that boot one
# (flavours.sh, modules.sh, rt.sh): BUILD/flavours/F/lab holds F's image
# (tools/lab/fetch-kernel.sh), BUILD/flavours/F/module its kjit.ko, built
# from BUILD's one engine object.  Sourced after root is set.

# flavour_lab WHO BUILD F: sets flavour_dir and flavour_build, exports KJIT_KERNEL and
# KJIT_BUILD for F and fetches its image.  0; 2 when BUILD has no engine
# object; 1 when the fetch failed (the reason on stderr).
flavour_lab() {
  local who=$1 build=$2 f=$3
  flavour_build="$build"
  flavour_engine="$build/kernel-objs/kjit_engine_kernel.o"
  [ -f "$flavour_engine" ] || { echo "$who: $flavour_engine missing (cmake target kjit_engine_kernel)" >&2; return 2; }
  flavour_dir="$build/flavours/$f"
  mkdir -p "$flavour_dir/lab"
  export KJIT_KERNEL="$f" KJIT_BUILD="$flavour_dir/lab"
  "$root/tools/lab/fetch-kernel.sh" "$flavour_dir/lab/kernel" > "$flavour_dir/fetch.log" 2>&1 && return 0
  tail -n 20 "$flavour_dir/fetch.log" >&2
  echo "$who: FAIL: $f: fetching the image" >&2
  return 1
}

# flavour_module WHO F: kjit.ko for F (after flavour_lab) in
# flavour_dir/module, unless one newer than the engine object and every
# source os/linux/build.sh copies is there (flavours.sh built it before
# modules.sh or rt.sh); 0, or 1 after the build's last lines.
flavour_module() {
  local who=$1 f=$2 ko="$flavour_dir/module/kjit.ko"
  if [ -f "$ko" ] && [ "$ko" -nt "$flavour_engine" ] &&
     [ -z "$(find "$root/os/linux" "$root/plugins" "$root/include" -newer "$ko" -print -quit)" ]; then
    return 0
  fi
  KJIT_ENGINE_OBJ="$flavour_engine" "$root/os/linux/build.sh" "$flavour_dir" > "$flavour_dir/module.log" 2>&1 && return 0
  tail -n 20 "$flavour_dir/module.log" >&2
  echo "$who: FAIL: $f: building kjit.ko" >&2
  return 1
}

# flavour_sweep WHO F: the whole-.text sweep of F's vmlinux (after
# flavour_lab), with sim.sweep's thresholds; 0, or 1 after its last lines.
flavour_sweep() {
  local who=$1 f=$2
  if "$root/tests/sim/check-sweep.sh" "$flavour_build/tools/kjit-sim/kjit-sim" "$flavour_dir/lab/kernel/vmlinux" \
       "$root/tests/data/kallsyms-$f.txt.xz" > "$flavour_dir/sweep.log" 2>&1; then
    grep '^sweep: ' "$flavour_dir/sweep.log" | sed "s/^/$who: $f: /"
    return 0
  fi
  echo "$who: FAIL: $f: sweep" >&2; tail -n 20 "$flavour_dir/sweep.log" >&2
  return 1
}

# flavour_smoke WHO F: tests/guest/smoke.sh on F (after flavour_module)
# with every system call attached under block counting; 0, or 1 after its
# last lines.
flavour_smoke() {
  local who=$1 f=$2
  if KJIT_SMOKE_KO="$flavour_dir/module/kjit.ko" KJIT_SMOKE_SHARE="$flavour_dir/guest-smoke" KJIT_SMOKE_ALL=1 \
       "$root/tests/guest/smoke.sh" "$flavour_build" > "$flavour_dir/smoke.log" 2>&1; then
    grep -E '^smoke: all system calls' "$flavour_dir/smoke.log" | sed "s/^smoke:/$who: $f:/"
    return 0
  fi
  echo "$who: FAIL: $f: smoke run" >&2; tail -n 30 "$flavour_dir/smoke.log" >&2
  return 1
}

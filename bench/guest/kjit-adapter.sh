# kjit-adapter.sh: the only place the bench knows kjit's control interface
# (sourced by driver.sh in the guest).  Feature detection reads kjitctl's
# usage text, so the bench runs against older and newer kjitctl alike;
# configurations whose feature is missing are skipped (see bench/NEEDS.md).
KJITCTL=/mnt/kjit/bin/kjitctl
KJIT_KO=/mnt/kjit/bin/kjit.ko
kjit_usage() { "$KJITCTL" 2>&1 | tr '|' '\n'; "$KJITCTL" help 2>&1; }
kjit_has() { kjit_usage | grep -qE "(^|[^a-z_-])$1([^a-z_-]|\$)"; }

# kjit_load MODPARAMS TOOL [liveness=0] [inline=0] [flush_every_entry=1]
kjit_load() {
  local params="$1" tool="$2"; shift 2
  local opts="$*"
  if kjit_has config; then
    insmod "$KJIT_KO" icount=0 $params || return 1
    local cache=""
    case "$params" in cache_kb=*) cache="cache_kb=${params#cache_kb=}" ;; esac
    "$KJITCTL" config tool="$tool" $opts $cache || { rmmod kjit; return 1; }
  else
    # kjitctl without `config`: only the module's built-in icount tool exists
    [ -z "$opts" ] || { echo "kjit-adapter: engine options need kjitctl config"; return 1; }
    case "$tool" in
      none) insmod "$KJIT_KO" icount=0 $params || return 1 ;;
      icount) insmod "$KJIT_KO" icount=1 $params || return 1 ;;
      *) echo "kjit-adapter: tool $tool needs kjitctl config"; return 1 ;;
    esac
  fi
  kjit_attach_syscalls
}
kjit_attach_syscalls() {
  local n=0 s
  for s in $SYSCALLS; do
    "$KJITCTL" attach "__x64_sys_$s" >/dev/null 2>>"$OUT/attach-errors.txt" && n=$((n + 1))
  done
  echo "kjit-adapter: attached $n system calls"
  [ "$n" -gt 0 ]
}
kjit_unload() { "$KJITCTL" detach all >/dev/null 2>&1; rmmod kjit; }
kjit_stats() { "$KJITCTL" stats; }
kjit_flush() { "$KJITCTL" flush; }
# block start addresses (one 0x... per line) / called functions (names)
kjit_blocks() { "$KJITCTL" blocks; }
kjit_calls() { "$KJITCTL" calls; }

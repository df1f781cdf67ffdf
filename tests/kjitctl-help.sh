#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every kjitctl command and every option it parses is documented: named in
# the usage text (`kjitctl` alone), in `kjitctl --help`, in the command's
# own `kjitctl COMMAND --help`, and in the man page.
#
# The commands are those of tools/kjitctl/commands.c; the options those of
# the getopt_long tables the commands parse: NAME_options[] in
# tools/kjitctl/*.c for command NAME (- as _), and kjit-report's table in
# tools/report/main.cc for `report` (kjitctl report runs kjit-report).  An
# option counts as named when its long or its short form appears; --help
# and --version are named once for all commands.
# Usage: tests/kjitctl-help.sh KJITCTL MANPAGE SOURCE_DIR
set -uo pipefail
K="$1" M="$2" S="$3"
fail=0
bad() { echo "kjitctl-help: FAIL: $*" >&2; fail=1; }

# The getopt_long table TABLE[] of FILE, one option a line: "--long" or
# "--long -c" (the value a character literal: a short option).
table_options() {
  awk -v t="$2" '
    index($0, t "[] = {") { on = 1 }
    on { buf = buf $0 }
    on && /};/ { on = 0 }
    END { print buf }' "$1" |
    grep -oE '\{"[a-z0-9-]+", *[a-z_]+, *[A-Za-z_]+, *[^}]+\}' |
    sed -E "s/^\\{\"([a-z0-9-]+)\", *[a-z_]+, *[A-Za-z_]+, *'(.)'\\}$/--\\1 -\\2/; s/^\\{\"([a-z0-9-]+)\".*/--\\1/" |
    grep -vE '^--(help|version)( |$)'
}

# Whether TEXT names the option (either form), as a word of its own.
names_option() {
  local text="$1" long="$2" short="${3:-}"
  grep -qE -- "(^|[^a-z0-9-])${long}([^a-z0-9-]|$)" <<< "$text" && return 0
  [ -n "$short" ] && grep -qE -- "(^|[^A-Za-z0-9-])${short}([^A-Za-z0-9-]|$)" <<< "$text"
}

usage_text=$("$K" 2>&1)
help_text=$("$K" --help 2>&1)
# The man page as words: groff's \- and font changes removed.
man_text=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(em/-/g' "$M")

cmds=$(sed -n 's/^ *{"\([a-z][a-z-]*\)", cmd_[a-z_]*,.*/\1/p' "$S/tools/kjitctl/commands.c")
[ -n "$cmds" ] || bad "no commands found in $S/tools/kjitctl/commands.c"
while read -r t; do
  [ -n "$t" ] || continue
  grep -qx "${t//_/-}" <<< "$cmds" || bad "tools/kjitctl: ${t}_options[] belongs to no command of commands.c"
done < <(grep -ohE '^const struct option [a-z_]+_options\[\]' "$S"/tools/kjitctl/*.c | sed -E 's/.* ([a-z_]+)_options\[\]/\1/')

nopts=0
for c in $cmds; do
  grep -qE "^(usage: |       )kjitctl $c( |$)" <<< "$usage_text" || bad "the usage text does not list $c"
  grep -qE "^(usage: |       )kjitctl $c( |$)" <<< "$help_text" || bad "kjitctl --help does not list $c"
  grep -qE "kjitctl $c([^a-z-]|$)" <<< "$man_text" || bad "$M does not show \`kjitctl $c\`"
  own_help=$("$K" "$c" --help 2>&1)
  if [ "$c" = report ]; then
    opts=$(table_options "$S/tools/report/main.cc" lo)
  else
    t="${c//-/_}_options"
    f=$(grep -lE "^const struct option ${t}\[\]" "$S"/tools/kjitctl/*.c)
    opts=""
    [ -n "$f" ] && opts=$(table_options "$f" "$t")
  fi
  while read -r long short; do
    [ -n "$long" ] || continue
    nopts=$((nopts + 1))
    what="$c ${long}${short:+/$short}"
    names_option "$usage_text" "$long" "$short" || bad "the usage text misses $what"
    names_option "$help_text" "$long" "$short" || bad "kjitctl --help misses $what"
    names_option "$own_help" "$long" "$short" || bad "kjitctl $c --help misses $what"
    names_option "$man_text" "$long" "$short" || bad "$M misses $what"
  done <<< "$opts"
done
[ "$nopts" -gt 20 ] || bad "only $nopts options found in the getopt tables: is the table parser stale?"
[ "$fail" = 0 ] && echo "kjitctl-help: PASS ($(wc -w <<< "$cmds") commands, $nopts options)"
exit "$fail"

# Sourced by stress-reclaim.sh and soak.sh: a guest share holding kjit.ko,
# kjitctl and the host's stress-ng with its libraries (run in the guest as
# ./lib/ld-linux-x86-64.so.2 --library-path ./lib ./stress-ng).
# make_stress_share SHARE KJIT_KO REPO_ROOT
make_stress_share() {
  local share="$1" ko="$2" root="$3" sng l
  sng="$(command -v stress-ng)" || { echo "stress-ng missing (tools/lab/deps.sh installs it)" >&2; return 2; }
  rm -rf "$share"; mkdir -p "$share/lib"
  cp "$ko" "$share/"
  gcc -O2 -static -Wall -I "$root/os/linux" -o "$share/kjitctl" "$root/tools/kjitctl/kjitctl.c"
  cp "$sng" "$share/stress-ng"
  for l in $(ldd "$sng" | awk '/=>/{print $3} /ld-linux/{print $1}'); do cp -L "$l" "$share/lib/"; done
}

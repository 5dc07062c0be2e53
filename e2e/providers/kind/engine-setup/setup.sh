#!/usr/bin/env bash
# Makes a container engine answer for the kind suite on a Debian machine without one (CI, a fresh
# sandbox): installs Docker Engine and the tools the local image builds need from Debian's packages,
# and starts dockerd, with runc-bounded-caps as its runtime where the machine's capability bounding
# set is incomplete (privileged containers, every kind node, fail there otherwise). Never fails the
# caller: without an engine `npm test` skips the kind suite and says why.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
log=/var/log/basic-operator-dockerd.log
say() { echo "[engine-setup] $*" >&2; }

if docker info >/dev/null 2>&1; then
  say "docker answers already; nothing to do"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  say "not root: cannot install or start dockerd (the kind suite will be skipped)"
  exit 0
fi
packages=(docker.io jq debootstrap busybox-static libseccomp-dev iptables)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]} from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
    say "apt-get install failed (the kind suite will be skipped)"
    exit 0
  fi
fi

args=()
last=$(cat /proc/sys/kernel/cap_last_cap)
full=$(((1 << (last + 1)) - 1))
bounding=$((0x$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)))
if [ "$bounding" -ne "$full" ]; then
  install -D -m 0755 "$here/runc-bounded-caps" /usr/local/libexec/basic-operator/runc-bounded-caps
  args+=(--add-runtime "bounded-caps=/usr/local/libexec/basic-operator/runc-bounded-caps" --default-runtime bounded-caps)
  say "capability bounding set $(printf '%x' "$bounding") lacks some of $(printf '%x' "$full"): dockerd runs containers through runc-bounded-caps"
fi
say "starting dockerd (log: $log)"
nohup dockerd "${args[@]}" >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    say "docker answers: $(docker version --format '{{.Server.Version}}')"
    exit 0
  fi
  sleep 1
done
say "dockerd did not answer within 60 s (the kind suite will be skipped); last lines of $log:"
tail -n 20 "$log" >&2
exit 0

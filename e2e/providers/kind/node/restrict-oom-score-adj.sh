#!/bin/sh
# containerd.service ExecStartPre in the locally built kind node image. Lowering a process's OOM
# score needs CAP_SYS_RESOURCE; where the engine's host lacks it (its capability bounding set, and
# so the node's), runc fails every pod that asks for a negative score, the control plane's static
# pods first, with "can't get final child's PID from pipe: EOF". containerd's
# restrict_oom_score_adj (kind sets it for rootless nodes) clamps the score to containerd's own.
set -eu
bounding=$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)
if [ $(((0x$bounding >> 24) & 1)) -eq 0 ]; then
  sed -i 's/^\([[:space:]]*restrict_oom_score_adj[[:space:]]*=[[:space:]]*\)false/\1true/' /etc/containerd/config.toml
  echo "no CAP_SYS_RESOURCE in the bounding set: containerd restricts OOM score adjustments"
fi

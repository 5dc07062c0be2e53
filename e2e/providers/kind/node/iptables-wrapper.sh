#!/bin/sh
# Installed in the kube-proxy image in place of iptables, ip6tables and their -save and -restore
# commands. On its first run it picks the iptables back end (legacy or nft) the node's network
# namespace already uses, points those commands at it and runs the command it was called as.
# Kubernetes' own kube-proxy image does the same with kubernetes-sigs/iptables-wrappers, which is
# not on the Go module proxy; this follows the same rule. The kubelet creates the chain
# KUBE-IPTABLES-HINT (older kubelets: KUBE-KUBELET-CANARY) in the mangle table with the back end
# the node uses; without it, the back end holding more rules wins, nft on a tie.
set -eu

mode=
for candidate in nft legacy; do
  if "iptables-$candidate-save" -t mangle 2>/dev/null |
    grep -Eq '^:(KUBE-IPTABLES-HINT|KUBE-KUBELET-CANARY) '; then
    mode=$candidate
    break
  fi
done

if [ -z "$mode" ]; then
  rules() {
    { "iptables-$1-save" || true; "ip6tables-$1-save" || true; } 2>/dev/null | grep -c '^-' || true
  }
  if [ "$(rules legacy)" -gt "$(rules nft)" ]; then mode=legacy; else mode=nft; fi
fi

# rename(2) replaces each link at once, so a command started meanwhile finds one or the other.
for command in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
  ln -sf "xtables-$mode-multi" "/usr/sbin/.$command.$$"
  mv -f "/usr/sbin/.$command.$$" "/usr/sbin/$command"
done

exec "$0" "$@"

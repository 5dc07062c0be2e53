import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { clusterDir } from './paths.ts';

/**
 * The local control plane's audit log: kube-apiserver records every request on objects (Metadata
 * level: who, which verb on which resource, the answer's code; no bodies), and `npm test` reads the
 * operator's requests from it to hold its RBAC to what it calls (e2e/support/least-privilege-report.ts,
 * docs/install.md#rbac).
 */

/** Rotated at this size, this many old files kept: at most 1.1 GB per cluster. */
export const AUDIT_LOG_MAX_MB = 100;
export const AUDIT_LOG_BACKUPS = 10;

/**
 * Leaves out what is only the control plane's own chatter, many requests a second that the operator
 * never makes: node and control-plane leases, node heartbeats, kwok's pod status and the scheduler's
 * bindings, and every request without an object (health checks, discovery, /metrics).
 */
export const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
  - level: None
    namespaces: [kube-node-lease, kube-system]
  - level: None
    resources:
      - group: ""
        resources: [nodes, nodes/status, pods/status, pods/binding]
  - level: None
    nonResourceURLs: ["/*"]
  - level: Metadata
`;

/** The current file and the rotated ones (`audit-<time>.log`), oldest first. */
export function auditLogFiles(cluster: string): string[] {
  const logs = join(clusterDir(cluster), 'logs');
  if (!existsSync(logs)) return [];
  return readdirSync(logs)
    .filter((name) => /^audit(-.+)?\.log$/.test(name))
    .map((name) => join(logs, name))
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
}

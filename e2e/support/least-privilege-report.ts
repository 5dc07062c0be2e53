import { createReadStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadAll } from 'js-yaml';
import { auditLogFiles } from '../providers/local/audit.ts';
import { clusterDir } from '../providers/local/paths.ts';
import {
  ALLOWANCES,
  type AuditEvent,
  compareWithRoles,
  comparisonProblems,
  operatorUse,
  type Permission,
  type RoleRule,
  type Use,
} from './least-privilege.ts';

/**
 * The check `npm test` makes after the local run: the operator's requests, read from the local
 * control plane's audit log (e2e/providers/local/audit.ts), held against its roles in config/rbac
 * (docs/install.md#rbac).
 */

/**
 * The operator's requests received at or after `since`, per permission, and when the oldest event
 * kept was received (a run longer than the log keeps lost its start). Only lines naming an operator
 * User-Agent are parsed.
 */
async function readOperatorUse(
  files: readonly string[],
  since: number,
): Promise<{ use: Map<Permission, Use>; oldest: number | undefined }> {
  const use = new Map<Permission, Use>();
  let oldest: number | undefined;
  for (const file of files) {
    const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
    const batch: AuditEvent[] = [];
    for await (const line of lines) {
      // The API server is still writing the current file: its last line may be cut short.
      if (!line.endsWith('}')) continue;
      if (oldest === undefined && line.startsWith('{')) {
        oldest = Date.parse((JSON.parse(line) as AuditEvent).requestReceivedTimestamp ?? '');
      }
      if (!line.includes('"userAgent":"basic-operator')) continue;
      const event = JSON.parse(line) as AuditEvent;
      if (Date.parse(event.requestReceivedTimestamp ?? '') < since) continue;
      batch.push(event);
      if (batch.length >= 1000) operatorUse(batch.splice(0), use);
    }
    operatorUse(batch, use);
  }
  return { use, oldest };
}

/** The rules of the operator's own roles, as config/rbac has them (the chart's are the same). */
function operatorRoleRules(): RoleRule[] {
  const rbac = new URL('../../config/rbac/', import.meta.url);
  const roles = [
    { file: 'role.yaml', name: 'basic-operator-manager-base' },
    { file: 'leader_election_role.yaml', name: 'basic-operator-leader-election' },
  ];
  return roles.flatMap(({ file, name }) => {
    const docs = loadAll(readFileSync(new URL(file, rbac), 'utf8')) as {
      metadata?: { name?: string };
      rules?: RoleRule[];
    }[];
    const role = docs.find((doc) => doc?.metadata?.name === name);
    if (!role) throw new Error(`config/rbac/${file} has no role ${name}`);
    return role.rules ?? [];
  });
}

/**
 * Holds the operator's roles against its requests in `cluster`'s audit log since `since`: a line per
 * figure, and one per permission granted and never requested, or requested and refused.
 */
export async function leastPrivilegeReport(
  cluster: string,
  since: number,
): Promise<{ ok: boolean; lines: string[] }> {
  const files = auditLogFiles(cluster);
  if (files.length === 0) {
    return {
      ok: false,
      lines: [
        `no audit log in ${join(clusterDir(cluster), 'logs')}: was the cluster created by this checkout?`,
      ],
    };
  }
  const { use, oldest } = await readOperatorUse(files, since);
  if (oldest !== undefined && oldest > since) {
    return {
      ok: false,
      lines: [
        `the audit log was rotated during the run (its oldest event is from ${new Date(oldest).toISOString()}): raise AUDIT_LOG_BACKUPS in e2e/providers/local/audit.ts`,
      ],
    };
  }
  const comparison = compareWithRoles(use, operatorRoleRules(), ALLOWANCES);
  const problems = comparisonProblems(comparison);
  return {
    ok: problems.length === 0,
    lines: [
      `${comparison.requests} requests by the operator, ${comparison.distinct} distinct (verb, resource) pairs, in ${files.length} audit log file(s); its roles grant ${comparison.granted} (verb, resource) pairs, ${comparison.unused.length} of them never requested`,
      ...problems,
    ],
  };
}

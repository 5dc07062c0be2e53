import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { auditLogFiles } from '../../e2e/providers/local/audit.ts';

/** The operator's status writes over the soak, from the local control plane's audit log. */
export interface StatusWrites {
  /** Whether the cluster keeps an audit log (the local provider's does). */
  audited: boolean;
  writes: number;
  refused422: number;
  /** "resource namespace/name" with its 422s, most first. */
  refused422ByObject: Array<[string, number]>;
}

interface AuditLine {
  stage?: string;
  userAgent?: string;
  requestReceivedTimestamp?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
}

/**
 * Every status write the operator sent (its User-Agent, the status subresource) received at or after
 * `since`, and those answered 422, per object: a write refused on every retry shows as one object
 * with many.
 */
export async function statusWrites(cluster: string | undefined, since: number): Promise<StatusWrites> {
  const files = cluster === undefined ? [] : auditLogFiles(cluster);
  const byObject = new Map<string, number>();
  let writes = 0;
  for (const file of files) {
    const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) {
      if (!line.endsWith('}') || !line.includes('"subresource":"status"')) continue;
      if (!line.includes('"userAgent":"basic-operator"')) continue;
      const event = JSON.parse(line) as AuditLine;
      if (event.stage !== 'ResponseComplete' || event.objectRef?.subresource !== 'status') continue;
      if (Date.parse(event.requestReceivedTimestamp ?? '') < since) continue;
      writes++;
      if (event.responseStatus?.code !== 422) continue;
      const { resource, namespace, name } = event.objectRef;
      const key = `${resource} ${namespace}/${name}`;
      byObject.set(key, (byObject.get(key) ?? 0) + 1);
    }
  }
  return {
    audited: files.length > 0,
    writes,
    refused422: [...byObject.values()].reduce((a, b) => a + b, 0),
    refused422ByObject: [...byObject].sort((a, b) => b[1] - a[1]),
  };
}

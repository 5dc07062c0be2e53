// The object the kit creates: the sample file's, with the kit's name, namespace and API version.
import { readFile } from 'node:fs/promises';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import type { KubeObject } from '../../src/runtime/client/object.ts';
import type { KindAndGroup } from './args.ts';

type Fields = Record<string, unknown>;

/** An object of the provider's kind, read and written without its types. */
export interface ProviderObject extends KubeObject {
  status?: unknown;
  [field: string]: unknown;
}
const isFields = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Metadata the server sets, which a sample copied from `kubectl get -o yaml` may carry. */
const SERVER_SET = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'ownerReferences',
  'finalizers',
  'generateName',
  'selfLink',
];

/**
 * Reads the object of the kind from `file` (YAML). The file may hold other objects too (say, the
 * Machine that uses the sample); exactly one must be of the kind (in a file of one object, the kind
 * may be left out). Fails with a message naming the file otherwise, or when that object's apiVersion
 * is of another group.
 */
export async function readSample(file: string, target: KindAndGroup): Promise<Fields> {
  let docs: unknown[];
  try {
    docs = loadAll(await readFile(file, 'utf8')).filter((d) => d !== null && d !== undefined);
  } catch (err) {
    throw new Error(`--sample ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const [only] = docs;
  const ofKind = docs.filter((d): d is Fields => isFields(d) && d.kind === target.kind);
  const doc = docs.length === 1 && isFields(only) && only.kind === undefined ? only : ofKind[0];
  if (!doc || ofKind.length > 1) {
    const kinds = docs.map((d) => (isFields(d) && typeof d.kind === 'string' ? d.kind : 'no kind'));
    throw new Error(
      `--sample ${file}: must hold one object of kind ${target.kind}; it holds ${ofKind.length}` +
        (docs.length > 0 ? ` (of ${docs.length} document(s): ${kinds.join(', ')})` : ' (it is empty)'),
    );
  }
  if (doc.apiVersion !== undefined) {
    const group = typeof doc.apiVersion === 'string' ? doc.apiVersion.split('/')[0] : undefined;
    if (group !== target.group) {
      throw new Error(
        `--sample ${file}: its ${target.kind} has apiVersion ${JSON.stringify(doc.apiVersion)}, not in the group ${target.group}`,
      );
    }
  }
  return doc;
}

/**
 * The object to create from `sample` (or, without one, an empty spec): its name and namespace are
 * the kit's, its apiVersion the tested version, server-set metadata and any status are dropped.
 */
export function objectFromSample(
  sample: Fields | undefined,
  target: KindAndGroup,
  version: string,
  namespace: string,
  name: string,
): ProviderObject {
  const source: Fields = sample ?? { spec: {} };
  const { status: _status, metadata, ...rest } = source;
  const kept = isFields(metadata)
    ? Object.fromEntries(Object.entries(metadata).filter(([key]) => !SERVER_SET.includes(key)))
    : {};
  return {
    ...rest,
    apiVersion: `${target.group}/${version}`,
    kind: target.kind,
    // Labels and annotations as the sample has them: the API server validates their types.
    metadata: { ...kept, name, namespace } as V1ObjectMeta,
  };
}

// Recorded objects for the plugin's unit tests, and an ObjectSource that serves them.

import type { EventRecord, ObjectSource } from '../../../src/cli/kubectl-basic/source.ts';
import type { Unstructured } from '../../../src/runtime/client/object.ts';
import type { ResourceType } from '../../../src/runtime/client/resource.ts';

export const NOW = Date.parse('2026-11-24T10:00:00Z');
export const NS = 'shop';

interface Stored {
  kind: string;
  obj: Unstructured;
}

export class RecordedSource implements ObjectSource {
  readonly #objects: Stored[] = [];
  readonly #events = new Map<string, EventRecord[]>();
  readonly #served = new Map<string, ResourceType<Unstructured>>();

  add(kind: string, obj: Unstructured): this {
    this.#objects.push({ kind, obj });
    return this;
  }

  event(uid: string, event: EventRecord): this {
    this.#events.set(uid, [event, ...(this.#events.get(uid) ?? [])]);
    return this;
  }

  serve(apiVersion: string, type: ResourceType<Unstructured>): this {
    this.#served.set(`${apiVersion}/${type.kind}`, type);
    return this;
  }

  async get(type: ResourceType<Unstructured>, namespace: string, name: string) {
    return this.#objects.find(
      (s) => s.kind === type.kind && s.obj.metadata?.namespace === namespace && s.obj.metadata?.name === name,
    )?.obj;
  }

  async list(type: ResourceType<Unstructured>, namespace: string | undefined) {
    return this.#objects
      .filter(
        (s) => s.kind === type.kind && (namespace === undefined || s.obj.metadata?.namespace === namespace),
      )
      .map((s) => s.obj);
  }

  async events(_namespace: string, uid: string) {
    return this.#events.get(uid) ?? [];
  }

  async resolve(apiVersion: string, kind: string) {
    if (apiVersion === 'infra.basicoperator.dev/v1alpha1' && kind === 'PodMachine') {
      return {
        group: 'infra.basicoperator.dev',
        version: 'v1alpha1',
        kind,
        plural: 'podmachines',
        namespaced: true,
      };
    }
    return this.#served.get(`${apiVersion}/${kind}`);
  }
}

let uidCounter = 0;

export function obj(
  kind: string,
  name: string,
  fields: {
    owner?: Unstructured;
    annotations?: Record<string, string>;
    spec?: unknown;
    status?: unknown;
    deleting?: boolean;
    finalizers?: string[];
  } = {},
): Unstructured {
  uidCounter++;
  const ownerUid = fields.owner?.metadata?.uid;
  return {
    kind,
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${uidCounter}`,
      creationTimestamp: new Date(NOW - 90_000),
      ...(fields.annotations ? { annotations: fields.annotations } : {}),
      ...(ownerUid ? { ownerReferences: [{ apiVersion: 'x', kind: 'x', name: 'x', uid: ownerUid }] } : {}),
      ...(fields.deleting ? { deletionTimestamp: new Date(NOW - 10_000) } : {}),
      ...(fields.finalizers ? { finalizers: fields.finalizers } : {}),
    },
    spec: fields.spec ?? {},
    status: fields.status ?? {},
  };
}

export function cond(type: string, status: 'True' | 'False' | 'Unknown', reason: string, message = '') {
  return { type, status, reason, message, lastTransitionTime: '2026-11-24T09:58:00Z' };
}

import { isDeepStrictEqual } from 'node:util';
import type { KubeClient } from '../client/kube-client.ts';
import { apiVersionOf, type ResourceType } from '../client/resource.ts';
import type { Condition } from './conditions.ts';
import type { ObjectWithStatus } from './status.ts';

/** The value as JSON carries it: undefined members dropped, Dates as strings. */
export function toJsonValue<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** The object a status is written to: enough to address it and to tell it from a namesake. */
export interface StatusTarget {
  namespace: string | undefined;
  name: string;
  uid: string | undefined;
}

/** How a controller's status reaches the API server, and what it then looks like. */
export interface StatusStrategy {
  /** Whether `current` (the cached status) already says everything `next` says. */
  has(current: object | undefined, next: object): boolean;
  /** The status once `next` is written over `current`. */
  overlay(current: object | undefined, next: object): object;
  send<T extends ObjectWithStatus>(
    client: KubeClient,
    type: ResourceType<T>,
    target: StatusTarget,
    next: object,
    signal: AbortSignal,
  ): Promise<T>;
}

/**
 * The controller is the status's only writer: a JSON Patch replaces the whole status, guarded by a
 * `test` of the uid, so a status computed for an object that has since been deleted and recreated
 * under the same name (the cache had not caught up) never lands on its successor. No
 * resourceVersion: the status subresource only takes `status` from the body, so the patch cannot
 * clobber a concurrent spec or metadata change, and a PUT would fail with 409 whenever anything else
 * (a label, a finalizer) changed since the cache read, for no benefit.
 */
export const replaceWholeStatus: StatusStrategy = {
  has: (current, next) => isDeepStrictEqual(toJsonValue(current ?? {}), next),
  overlay: (_current, next) => next,
  send: (client, type, target, next, signal) =>
    client.patch(type, {
      namespace: target.namespace,
      name: target.name,
      patchType: 'json',
      body: [
        { op: 'test', path: '/metadata/uid', value: target.uid },
        { op: 'add', path: '/status', value: next },
      ],
      subresource: 'status',
      signal,
      priority: 'low',
    }),
};

/**
 * Several controllers share the status, each owning the fields it sends: server-side apply with a
 * field manager per controller (forced: the controller is the authority on its own fields). Entries
 * of `conditions` (a list keyed by type) are owned one by one, so two controllers setting different
 * conditions never overwrite each other, and a field a controller stops sending is removed. Send
 * every field the controller owns on every write, and none it does not own. There is no uid guard
 * (an apply cannot carry one without also failing on every unrelated change): the writer checks the
 * uid in the cache, and a status that lands on a namesake all the same is replaced by the
 * namesake's own next reconcile, which sets the same fields.
 */
export function applyOwnedFields(fieldManager: string): StatusStrategy {
  return {
    has: (current, next) => {
      const have = (toJsonValue(current ?? {}) ?? {}) as Record<string, unknown>;
      return Object.entries(next).every(([key, value]) =>
        key === 'conditions'
          ? ((value ?? []) as Condition[]).every((c) =>
              isDeepStrictEqual(conditionOf(have.conditions, c.type), c),
            )
          : isDeepStrictEqual(have[key], value),
      );
    },
    overlay: (current, next) => {
      const merged: Record<string, unknown> = { ...current, ...next };
      const ours = (next as { conditions?: Condition[] }).conditions;
      if (ours) {
        const theirs = ((current as { conditions?: Condition[] } | undefined)?.conditions ?? []).filter(
          (c) => !ours.some((o) => o.type === c.type),
        );
        merged.conditions = [...theirs, ...ours];
      }
      return merged;
    },
    send: (client, type, target, next, signal) =>
      client.patch(type, {
        namespace: target.namespace,
        name: target.name,
        patchType: 'apply',
        body: {
          apiVersion: apiVersionOf(type),
          kind: type.kind,
          metadata: { name: target.name, namespace: target.namespace },
          status: next,
        },
        subresource: 'status',
        fieldManager,
        force: true,
        signal,
        priority: 'low',
      }),
  };
}

function conditionOf(conditions: unknown, type: string): unknown {
  return Array.isArray(conditions) ? conditions.find((c: { type?: string }) => c?.type === type) : undefined;
}

import type { KubeObject } from '../client/object.ts';

/** Any object with a status, e.g. BasicDeployment. */
export type ObjectWithStatus = KubeObject & { status?: object };
export type StatusOf<T extends ObjectWithStatus> = NonNullable<T['status']>;

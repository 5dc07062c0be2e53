// The few API calls the reconciler makes, with the answers it expects turned into values.
import {
  isAlreadyExists,
  isNotFound,
  type KubeClient,
  type KubeObject,
  type ResourceType,
} from './basic-operator.ts';

export class Kube {
  private readonly client: KubeClient;
  /** Aborts the reconcile's requests (the manager is stopping). */
  readonly signal: AbortSignal;

  constructor(client: KubeClient, signal: AbortSignal) {
    this.client = client;
    this.signal = signal;
  }

  /** The object as the API server has it now; undefined if there is none. */
  async get<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string,
    name: string,
  ): Promise<T | undefined> {
    try {
      return await this.client.get<T>(type, namespace, name, this.signal);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The objects as the API server has them now. */
  async list<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string,
    labelSelector: string,
  ): Promise<T[]> {
    return (await this.client.list<T>(type, { namespace, labelSelector, signal: this.signal })).items;
  }

  /**
   * Creates `obj`; on AlreadyExists returns what exists (ours not cached yet, or someone else's: the
   * caches hold only objects with our label), which the caller must check before using.
   */
  async create<T extends KubeObject>(
    type: ResourceType<T>,
    obj: T,
  ): Promise<{ created: T } | { existing: T | undefined }> {
    try {
      return { created: await this.client.create<T>(type, obj, { signal: this.signal }) };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      return { existing: await this.get(type, obj.metadata?.namespace ?? '', obj.metadata?.name ?? '') };
    }
  }

  async mergePatch<T extends KubeObject>(type: ResourceType<T>, obj: T, body: unknown): Promise<T> {
    return this.client.patch<T>(type, {
      namespace: obj.metadata?.namespace,
      name: obj.metadata?.name ?? '',
      patchType: 'merge',
      body,
      signal: this.signal,
    });
  }

  /** Deletes exactly this object (uid precondition); gone already is fine. */
  async delete(
    type: ResourceType,
    obj: KubeObject,
    propagationPolicy: 'Background' | 'Foreground',
  ): Promise<void> {
    try {
      await this.client.delete(type, obj.metadata?.namespace, obj.metadata?.name ?? '', {
        propagationPolicy,
        preconditions: { uid: obj.metadata?.uid },
        signal: this.signal,
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

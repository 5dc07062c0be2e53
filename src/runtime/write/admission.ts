// Asking admission before acting: a dry-run create runs every admission plugin and webhook (Pod
// Security, quotas, policies) and stores nothing.
import type { V1Pod } from '@kubernetes/client-node';
import { isForbidden, isInvalid } from '../client/errors.ts';
import type { KubeClient } from '../client/kube-client.ts';
import { CoreTypes } from '../client/resource.ts';
import { errorMessage } from '../log.ts';

/**
 * Why the API server would refuse to create `pod` (its message), or undefined when it would admit
 * it. Only a refusal (403, 422) is an answer; any other error is thrown, as a failed request.
 */
export async function podRefusal(
  client: KubeClient,
  pod: V1Pod,
  signal?: AbortSignal,
): Promise<string | undefined> {
  try {
    await client.create(CoreTypes.Pod, pod, { dryRun: true, ...(signal ? { signal } : {}) });
    return undefined;
  } catch (err) {
    if (isForbidden(err) || isInvalid(err)) return errorMessage(err);
    throw err;
  }
}

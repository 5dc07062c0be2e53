import { join } from 'node:path';
import { cacheRoot } from './toolchain.ts';

export const CLUSTER_NAME = 'basic-operator';

export function kwokWorkdir(): string {
  return join(cacheRoot(), 'kwok');
}

export function clusterDir(cluster = CLUSTER_NAME): string {
  return join(kwokWorkdir(), 'clusters', cluster);
}

export function localKubeconfig(cluster = CLUSTER_NAME): string {
  return join(cacheRoot(), cluster === CLUSTER_NAME ? 'kubeconfig' : `kubeconfig-${cluster}`);
}

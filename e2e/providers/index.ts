import { KindProvider } from './kind/index.ts';
import { LocalProvider } from './local/index.ts';
import type { ClusterProvider } from './provider.ts';

/**
 * E2E_PROVIDER=kind selects kind; anything else the local control plane. BASIC_OPERATOR_CLUSTER names
 * the local cluster (default `basic-operator`), so two checkouts can test side by side without
 * installing their CRDs over each other's.
 */
export function selectProvider(name = process.env.E2E_PROVIDER ?? 'local'): ClusterProvider {
  if (name === 'kind') return new KindProvider();
  if (name === 'local') return new LocalProvider(process.env.BASIC_OPERATOR_CLUSTER || undefined);
  throw new Error(`unknown cluster provider "${name}" (use local or kind)`);
}

import { KindProvider } from './kind/index.ts';
import { LocalProvider } from './local/index.ts';
import type { ClusterProvider } from './provider.ts';

/** E2E_PROVIDER=kind selects kind; anything else the local control plane. */
export function selectProvider(name = process.env.E2E_PROVIDER ?? 'local'): ClusterProvider {
  if (name === 'kind') return new KindProvider();
  if (name === 'local') return new LocalProvider();
  throw new Error(`unknown cluster provider "${name}" (use local or kind)`);
}

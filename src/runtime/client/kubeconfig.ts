import { accessSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { errorMessage } from '../log.ts';
import type { ClusterAccess } from './cluster-access.ts';
import { ClusterConnection, inClusterSettings, SERVICE_ACCOUNT_DIR } from './cluster-connection.ts';
import { readKubeConfig } from './kubeconfig-file.ts';

/** Where loadKubeConfig looks besides the path it is given; tests point it elsewhere. */
interface Surroundings {
  env: NodeJS.ProcessEnv;
  serviceAccountDir: string;
  platform: NodeJS.Platform;
}

type Choice =
  | { file: string; from: string }
  | { inCluster: true }
  /** Files for client-node to load and merge, or its own loadFromDefault(). */
  | { clientNode: string[] | 'default' };

/**
 * The kubeconfig the operator runs with, chosen as @kubernetes/client-node's loadFromFile(path) or
 * loadFromDefault() would: `path`, else $KUBECONFIG, else ~/.kube/config, else the pod's service
 * account. Importing client-node costs the process about 85 MiB and 600 ms (it loads its whole
 * generated API), so the common cases are read here: one kubeconfig file whose current context has
 * a token, a token file, client certificates or basic auth, and the in-cluster config. Whatever this
 * does not read (exec plugins, auth providers, proxy-url, several files in $KUBECONFIG, Windows homes)
 * is loaded by client-node's own KubeConfig, imported only then.
 */
export async function loadKubeConfig(
  path: string | undefined,
  surroundings: Partial<Surroundings> = {},
): Promise<ClusterAccess> {
  const env = surroundings.env ?? process.env;
  const serviceAccountDir = surroundings.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const choice = choose(path, env, serviceAccountDir, surroundings.platform ?? process.platform);
  if ('clientNode' in choice) return clientNodeKubeConfig(choice.clientNode);
  let connection: ClusterConnection;
  if ('inCluster' in choice) {
    connection = new ClusterConnection(inClusterSettings(env, serviceAccountDir));
  } else {
    const reading = readKubeConfig(await parseFile(choice.file, choice.from), choice.file);
    if ('needsClientNode' in reading) {
      return clientNodeKubeConfig([choice.file]).catch((err: unknown) => {
        throw new Error(
          `${reading.needsClientNode}, so @kubernetes/client-node loads it: ${errorMessage(err)}`,
        );
      });
    }
    connection = new ClusterConnection(reading.settings);
  }
  // Reads the files it names now, so a missing one stops the start with a message saying which.
  await connection.applyToHTTPSOptions({});
  return connection;
}

function choose(
  path: string | undefined,
  env: NodeJS.ProcessEnv,
  serviceAccountDir: string,
  platform: NodeJS.Platform,
): Choice {
  if (path) return { file: path, from: '--kubeconfig' };
  if (env.KUBECONFIG) {
    const files = env.KUBECONFIG.split(delimiter).filter((file) => file !== '');
    if (files.length === 0) throw new Error(`$KUBECONFIG (${JSON.stringify(env.KUBECONFIG)}) names no file`);
    if (files.length === 1) return { file: files[0]!, from: '$KUBECONFIG' };
    return { clientNode: files };
  }
  if (platform === 'win32') return { clientNode: 'default' };
  const home = env.HOME && exists(env.HOME) ? env.HOME : undefined;
  const homeConfig = home ? join(home, '.kube', 'config') : undefined;
  if (homeConfig && exists(homeConfig)) return { file: homeConfig, from: '~/.kube/config' };
  const token = join(serviceAccountDir, 'token');
  if (exists(token)) return { inCluster: true };
  throw new Error(
    `no kubeconfig: --kubeconfig is not given, $KUBECONFIG is not set, ${homeConfig ?? '~/.kube/config (no usable $HOME)'} ` +
      `does not exist, and neither does ${token} (the token of a pod's service account)`,
  );
}

function exists(path: string): boolean {
  try {
    accessSync(path);
    return true;
  } catch {
    return false;
  }
}

async function parseFile(file: string, from: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the kubeconfig ${file} (from ${from}): ${errorMessage(err)}`);
  }
  // Imported here: the in-cluster config needs no YAML.
  const { load } = await import('js-yaml');
  try {
    return load(text);
  } catch (err) {
    throw new Error(`kubeconfig ${file}: ${errorMessage(err)}`);
  }
}

async function clientNodeKubeConfig(files: string[] | 'default'): Promise<ClusterAccess> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (files === 'default') {
    kc.loadFromDefault();
    return kc;
  }
  // What loadFromDefault() does with the files of $KUBECONFIG.
  const [first, ...rest] = files;
  kc.loadFromFile(first!);
  for (const file of rest) {
    const more = new KubeConfig();
    more.loadFromFile(file);
    kc.mergeConfig(more);
  }
  return kc;
}

import { dirname, resolve } from 'node:path';
import type { ConnectionSettings, PemSource } from './cluster-connection.ts';

/** What the current context of a kubeconfig asks for: settings, or what only client-node can do. */
export type KubeConfigReading = { settings: ConnectionSettings } | { needsClientNode: string };

type Fields = Record<string, unknown>;

/**
 * Reads the current context of a parsed kubeconfig `doc` (loaded from `file`): its cluster's server,
 * certificate-authority(-data), insecure-skip-tls-verify and tls-server-name, its user's token,
 * tokenFile, client-certificate(-data), client-key(-data), username/password and `as`. Relative paths
 * are relative to the file. A user with `exec` or `auth-provider`, or a cluster with `proxy-url`,
 * is left to @kubernetes/client-node. Fields client-node ignores (extensions, as-groups, ...) are
 * ignored here too.
 */
export function readKubeConfig(doc: unknown, file: string): KubeConfigReading {
  if (!isFields(doc)) throw new Error(`kubeconfig ${file}: not a kubeconfig (no YAML mapping at the top)`);
  const currentContext = doc['current-context'];
  if (typeof currentContext !== 'string' || currentContext === '') {
    throw new Error(`kubeconfig ${file}: no current-context is set`);
  }
  const origin = `kubeconfig ${file}, context "${currentContext}"`;
  const context = named(doc, 'contexts', 'context', currentContext, `kubeconfig ${file}`);
  const clusterName = context.cluster;
  if (typeof clusterName !== 'string' || clusterName === '') throw new Error(`${origin}: names no cluster`);
  const cluster = named(doc, 'clusters', 'cluster', clusterName, origin);
  const userName = context.user;
  if (userName !== undefined && userName !== null && typeof userName !== 'string') {
    throw new Error(`${origin}: user must be a string`);
  }
  const user = userName ? named(doc, 'users', 'user', userName, origin, true) : {};
  const userWhere = `${origin}, user "${userName}"`;
  if (user.exec !== undefined && user.exec !== null) {
    return { needsClientNode: `${userWhere} runs an exec credential plugin` };
  }
  if (user['auth-provider'] !== undefined && user['auth-provider'] !== null) {
    return { needsClientNode: `${userWhere} uses an auth-provider` };
  }
  const clusterWhere = `${origin}, cluster "${clusterName}"`;
  if (optionalString(cluster, 'proxy-url', clusterWhere)) {
    return { needsClientNode: `${clusterWhere} goes through a proxy-url` };
  }
  const server = optionalString(cluster, 'server', clusterWhere);
  if (!server) throw new Error(`${clusterWhere}: has no server`);
  const dir = dirname(file);
  const path = (p: string | undefined) => (p ? resolve(dir, p) : undefined);
  return {
    settings: {
      origin,
      server: server.replace(/\/$/, ''),
      certificateAuthority: pem(cluster, 'certificate-authority', dir, clusterWhere),
      insecureSkipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
      tlsServerName: optionalString(cluster, 'tls-server-name', clusterWhere),
      clientCertificate: pem(user, 'client-certificate', dir, userWhere),
      clientKey: pem(user, 'client-key', dir, userWhere),
      token: optionalString(user, 'token', userWhere),
      // kubectl's tokenFile, or the token-file that client-node reads.
      tokenFile:
        path(optionalString(user, 'tokenFile', userWhere)) ??
        path(optionalString(user, 'token-file', userWhere)),
      username: optionalString(user, 'username', userWhere),
      password: optionalString(user, 'password', userWhere),
      impersonate: optionalString(user, 'as', userWhere),
    },
  };
}

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The `inner` fields of the first entry of `list` named `name` (client-node takes the first); a
 * user entry may have none (anonymous), as in client-node.
 */
function named(
  doc: Fields,
  list: string,
  inner: string,
  name: string,
  where: string,
  optional = false,
): Fields {
  const entries = doc[list];
  const entry = Array.isArray(entries)
    ? entries.find((e: unknown) => isFields(e) && e.name === name)
    : undefined;
  if (!isFields(entry)) throw new Error(`${where}: there is no ${inner} "${name}" in ${list}`);
  const fields = entry[inner];
  if (optional && (fields === undefined || fields === null)) return {};
  if (!isFields(fields)) throw new Error(`${where}: ${inner} "${name}" has no ${inner} fields`);
  return fields;
}

function optionalString(fields: Fields, key: string, where: string): string | undefined {
  const value = fields[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`${where}: ${key} must be a string (quote it in the YAML)`);
  return value;
}

/** `key` (a path) or `key-data` (base64); the path wins, as in client-node. */
function pem(fields: Fields, key: string, dir: string, where: string): PemSource | undefined {
  const file = optionalString(fields, key, where);
  if (file) return { file: resolve(dir, file) };
  const data = optionalString(fields, `${key}-data`, where);
  return data ? { data } : undefined;
}

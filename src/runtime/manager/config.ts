import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { LOG_LEVELS, type LogLevel } from '../log.ts';

export interface ManagerConfig {
  kubeconfig?: string;
  /** Namespaces to watch; empty = all. */
  namespaces: string[];
  leaderElection: {
    enabled: boolean;
    namespace: string;
    id: string;
    identity: string;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
  };
  metricsBindAddress: string;
  metrics: {
    /** HTTPS with TokenReview/SubjectAccessReview on each scrape; false = plain HTTP, open to all. */
    secure: boolean;
    /** The serving certificate's directory (tls.crt, tls.key); none = self-signed at start. */
    certPath?: string;
    certName: string;
    certKey: string;
  };
  healthProbeBindAddress: string;
  /** Client-side rate limit for API calls (default 100 qps, burst 150); qps 0 = off. */
  qps: number;
  burst: number;
  defaultConcurrency: number;
  concurrency: Record<string, number>;
  gracefulShutdownMs: number;
  logLevel: LogLevel;
  /** Exit the process when the lease is lost (as controller-runtime does); the pod is restarted clean. */
  exitOnLostLease: boolean;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A flag: its kind, its default (when neither the command line nor the environment sets it), its help. */
export interface FlagSpec {
  type: 'string' | 'boolean';
  default: string | boolean;
  help: string;
}

export type FlagSpecs = Record<string, FlagSpec>;

/** The value of a flag: from the command line, else its environment variable, else its default. */
export interface FlagReader<Name extends string = string> {
  string(name: Name): string;
  boolean(name: Name): boolean;
  /** A duration such as 500ms, 15s, 2m or 1h, in milliseconds. */
  duration(name: Name): number;
}

/** The manager's flags; a program adds its own (see parseCommandLine). */
export const FLAGS = {
  kubeconfig: {
    type: 'string',
    default: '',
    help: 'Path to a kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster).',
  },
  namespaces: { type: 'string', default: '', help: 'Comma-separated namespaces to watch (default: all).' },
  'leader-elect': {
    type: 'boolean',
    default: false,
    help: 'Use Lease leader election so only one replica reconciles.',
  },
  'leader-election-namespace': {
    type: 'string',
    default: '',
    help: 'Namespace of the Lease (default: $POD_NAMESPACE or "default").',
  },
  'leader-election-id': {
    type: 'string',
    default: 'basic-operator.basicoperator.dev',
    help: 'Name of the Lease.',
  },
  'leader-election-lease-duration': {
    type: 'string',
    default: '15s',
    help: 'How long a lease is valid without renewal.',
  },
  'leader-election-renew-deadline': {
    type: 'string',
    default: '10s',
    help: 'How long the leader keeps trying to renew before giving up.',
  },
  'leader-election-retry-period': {
    type: 'string',
    default: '2s',
    help: 'How often candidates and the leader act.',
  },
  'metrics-bind-address': {
    type: 'string',
    default: '',
    help: 'Address of the Prometheus /metrics endpoint (default :8443 when secure, :8080 when not; "0" disables).',
  },
  'metrics-secure': {
    type: 'boolean',
    default: true,
    help: 'Serve /metrics over HTTPS, each scrape checked with a TokenReview and a SubjectAccessReview (false: plain HTTP, for local runs).',
  },
  'metrics-cert-path': {
    type: 'string',
    default: '',
    help: 'Directory of the metrics serving certificate, e.g. a mounted cert-manager Secret (default: self-signed at start).',
  },
  'metrics-cert-name': {
    type: 'string',
    default: 'tls.crt',
    help: 'Certificate file in --metrics-cert-path.',
  },
  'metrics-cert-key': { type: 'string', default: 'tls.key', help: 'Key file in --metrics-cert-path.' },
  'health-probe-bind-address': {
    type: 'string',
    default: ':8081',
    help: 'Address of /healthz and /readyz ("0" disables).',
  },
  // kube-controller-manager's 20 qps for each of the operator's five controllers (docs/install.md).
  'kube-api-qps': {
    type: 'string',
    default: '100',
    help: 'Client-side API request rate limit shared by the controllers, requests per second (0 = off).',
  },
  'kube-api-burst': { type: 'string', default: '0', help: 'Client-side API burst (default: 1.5 x qps).' },
  'max-concurrent-reconciles': {
    type: 'string',
    default: '20',
    help: 'Default number of workers per controller.',
  },
  concurrency: {
    type: 'string',
    default: '',
    help: 'Per-controller workers, e.g. "basicreplicaset=10,machine=2".',
  },
  'graceful-shutdown-timeout': {
    type: 'string',
    default: '30s',
    help: 'How long SIGTERM waits for in-flight reconciles.',
  },
  'log-level': { type: 'string', default: 'info', help: `One of ${LOG_LEVELS.join(', ')}.` },
  'exit-on-lost-lease': {
    type: 'boolean',
    default: true,
    help: 'Exit (code 1) when the leader lease is lost.',
  },
  help: { type: 'boolean', default: false, help: 'Show this help.' },
} as const satisfies Record<string, FlagSpec>;

type FlagName = keyof typeof FLAGS;

/**
 * A program's own defaults for some of the manager's flags (a Lease name of its own, say), used
 * when neither the command line nor the environment sets them; --help shows them.
 */
export type ManagerFlagDefaults = Partial<Record<Exclude<FlagName, 'help'>, string | boolean>>;

/** The manager's flags with `defaults` in place of their own. */
function managerFlags(defaults: ManagerFlagDefaults = {}): FlagSpecs {
  const specs: FlagSpecs = { ...FLAGS };
  for (const [name, value] of Object.entries(defaults)) {
    const spec = specs[name];
    if (!spec) throw new Error(`no manager flag --${name} to give a default`);
    if (typeof value !== typeof spec.default) {
      throw new Error(`the default of --${name} must be a ${typeof spec.default}`);
    }
    specs[name] = { ...spec, default: value };
  }
  return specs;
}

/** BASIC_OPERATOR_LEADER_ELECT for --leader-elect, and so on. */
export function envName(flag: string): string {
  return `BASIC_OPERATOR_${flag.toUpperCase().replace(/-/g, '_')}`;
}

/** What --help prints: the program's name and purpose, then the manager's flags and the program's. */
export function usage(program: {
  name: string;
  about?: string;
  flags?: FlagSpecs;
  managerDefaults?: ManagerFlagDefaults;
}): string {
  const lines = [`Usage: ${program.name} [flags]`, ''];
  if (program.about) lines.push(program.about, '');
  lines.push('Every flag can also be set by an environment variable.', '', 'Flags:');
  const { help, ...manager } = managerFlags(program.managerDefaults);
  const all: FlagSpecs = { ...manager, ...program.flags, help: help ?? FLAGS.help };
  for (const [name, spec] of Object.entries(all)) {
    const def = spec.type === 'boolean' ? String(spec.default) : spec.default ? `"${spec.default}"` : '""';
    lines.push(`  --${name.padEnd(32)} ${spec.help}`);
    lines.push(`  ${''.padEnd(34)} default ${def}; env ${envName(name)}`);
  }
  return lines.join('\n');
}

/** "15s", "500ms", "2m", "1h" -> milliseconds. */
export function parseDuration(flag: string, value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(value.trim());
  if (!match) throw new ConfigError(`--${flag}: "${value}" is not a duration (use e.g. 500ms, 15s, 2m)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] as 'ms' | 's' | 'm' | 'h'];
  return Number(match[1]) * unit;
}

function parseNumber(
  flag: string,
  value: string,
  { min, integer }: { min: number; integer: boolean },
): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min) {
    throw new ConfigError(
      `--${flag}: "${value}" must be ${integer ? 'a whole number' : 'a number'} >= ${min}`,
    );
  }
  return n;
}

export function parseConcurrency(value: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, count] = part.split('=');
    if (!name || count === undefined)
      throw new ConfigError(`--concurrency: "${part}" must look like name=number`);
    out[name.trim().toLowerCase()] = parseNumber('concurrency', count, { min: 1, integer: true });
  }
  return out;
}

function validAddress(flag: string, value: string): string {
  if (value === '0' || /^[\w.-]*:\d{1,5}$/.test(value)) return value;
  throw new ConfigError(`--${flag}: "${value}" must be host:port, :port, or 0 to disable`);
}

/** The parsed command line: the manager's configuration and a reader of the program's own flags. */
export interface CommandLine {
  config: ManagerConfig;
  flags: FlagReader;
}

/**
 * Parses the manager's flags and the program's own (as a Go main declares its flags beside
 * controller-runtime's) in one pass: flags, then environment variables, then defaults (the
 * program's `managerDefaults` before the manager's own). Throws ConfigError with a readable
 * message; the program's reader throws it for values it rejects.
 */
export function parseCommandLine(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  programFlags: FlagSpecs = {},
  managerDefaults: ManagerFlagDefaults = {},
): CommandLine | 'help' {
  const twice = Object.keys(programFlags).filter((name) => name in FLAGS);
  if (twice.length > 0)
    throw new Error(`flags defined by both the program and the manager: ${twice.join(', ')}`);
  const specs: FlagSpecs = { ...managerFlags(managerDefaults), ...programFlags };
  const flags = readFlags(specs, argv, env);
  if (flags.boolean('help')) return 'help';
  return { config: managerConfig(flags, env), flags };
}

/** @internal The manager's configuration from its own flags alone: tests build managers with it. */
export function parseConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): ManagerConfig | 'help' {
  const parsed = parseCommandLine(argv, env);
  return parsed === 'help' ? 'help' : parsed.config;
}

/** `--flag=false` as Go's flag package takes it: parseArgs knows only `--flag` and `--no-flag`. */
function booleansWithValues(specs: FlagSpecs, argv: string[]): string[] {
  return argv.map((arg) => {
    const match = /^--([\w-]+)=(.*)$/.exec(arg);
    if (!match?.[1] || specs[match[1]]?.type !== 'boolean') return arg;
    const value = (match[2] ?? '').toLowerCase();
    if (['true', '1', 'yes'].includes(value)) return `--${match[1]}`;
    if (['false', '0', 'no'].includes(value)) return `--no-${match[1]}`;
    throw new ConfigError(`--${match[1]}: "${match[2]}" must be true or false`);
  });
}

function readFlags(specs: FlagSpecs, argv: string[], env: NodeJS.ProcessEnv): FlagReader {
  const options = Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => [name, { type: spec.type }]),
  );
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: booleansWithValues(specs, argv),
      options,
      strict: true,
      allowPositionals: false,
      allowNegative: true,
    }).values;
  } catch (err) {
    throw new ConfigError(
      `${err instanceof Error ? err.message : String(err)}\nRun with --help to see the flags.`,
    );
  }
  const string = (name: string): string => {
    const spec = specs[name];
    if (!spec) throw new Error(`no flag --${name} is defined`);
    return String(values[name] ?? env[envName(name)] ?? spec.default);
  };
  return {
    string,
    boolean: (name) => {
      const v = string(name).toLowerCase();
      if (['true', '1', 'yes'].includes(v)) return true;
      if (['false', '0', 'no', ''].includes(v)) return false;
      throw new ConfigError(`${envName(name)}: "${v}" must be true or false`);
    },
    duration: (name) => parseDuration(name, string(name)),
  };
}

function managerConfig(flags: FlagReader<FlagName>, env: NodeJS.ProcessEnv): ManagerConfig {
  const get = (name: FlagName) => flags.string(name);
  const logLevel = get('log-level') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError(`--log-level: "${logLevel}" must be one of ${LOG_LEVELS.join(', ')}`);
  const qps = parseNumber('kube-api-qps', get('kube-api-qps'), { min: 0, integer: false });
  const burstRaw = parseNumber('kube-api-burst', get('kube-api-burst'), { min: 0, integer: true });
  const leaseDurationMs = flags.duration('leader-election-lease-duration');
  const renewDeadlineMs = flags.duration('leader-election-renew-deadline');
  const retryPeriodMs = flags.duration('leader-election-retry-period');
  if (renewDeadlineMs >= leaseDurationMs) {
    throw new ConfigError(
      '--leader-election-renew-deadline must be shorter than --leader-election-lease-duration',
    );
  }
  if (retryPeriodMs >= renewDeadlineMs) {
    throw new ConfigError(
      '--leader-election-retry-period must be shorter than --leader-election-renew-deadline',
    );
  }
  const namespaces = get('namespaces')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  for (const ns of namespaces) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns))
      throw new ConfigError(`--namespaces: "${ns}" is not a valid namespace name`);
  }
  const metricsSecure = flags.boolean('metrics-secure');
  if (!metricsSecure && get('metrics-cert-path')) {
    throw new ConfigError('--metrics-cert-path needs --metrics-secure (plain HTTP serves no certificate)');
  }
  return {
    kubeconfig: get('kubeconfig') || undefined,
    namespaces,
    leaderElection: {
      enabled: flags.boolean('leader-elect'),
      namespace: get('leader-election-namespace') || env.POD_NAMESPACE || 'default',
      id: get('leader-election-id'),
      identity: `${env.POD_NAME || hostname()}_${process.pid}_${Math.random().toString(16).slice(2, 10)}`,
      leaseDurationMs,
      renewDeadlineMs,
      retryPeriodMs,
    },
    metricsBindAddress: validAddress(
      'metrics-bind-address',
      get('metrics-bind-address') || (metricsSecure ? ':8443' : ':8080'),
    ),
    metrics: {
      secure: metricsSecure,
      certPath: get('metrics-cert-path') || undefined,
      certName: get('metrics-cert-name'),
      certKey: get('metrics-cert-key'),
    },
    healthProbeBindAddress: validAddress('health-probe-bind-address', get('health-probe-bind-address')),
    qps,
    burst: qps > 0 ? Math.max(1, burstRaw || Math.ceil(qps * 1.5)) : 0,
    defaultConcurrency: parseNumber('max-concurrent-reconciles', get('max-concurrent-reconciles'), {
      min: 1,
      integer: true,
    }),
    concurrency: parseConcurrency(get('concurrency')),
    gracefulShutdownMs: flags.duration('graceful-shutdown-timeout'),
    logLevel,
    exitOnLostLease: flags.boolean('exit-on-lost-lease'),
  };
}

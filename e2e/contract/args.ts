// The command line of `npm run contract-test`, read into the kit's options.

/** A provider kind as `<Kind>.<group>`: `PodMachine.infra.basicoperator.dev`. */
export interface KindAndGroup {
  kind: string;
  group: string;
}

export interface ContractTestOptions {
  /** `<Kind>.<group>` of the provider, e.g. `PodMachine.infra.basicoperator.dev`. */
  kind: string;
  /** The provider's API version to test; default: the first one the CRD's contract label lists. */
  version?: string;
  /** A YAML file holding one object of the kind (and maybe others); the kit sets its name and namespace. */
  sample?: string;
  /** An existing namespace to work in; default: a fresh one the kit creates and deletes. */
  namespace?: string;
  /** The deadline of each wait (readiness, stop, deletion). */
  timeoutSeconds: number;
  /** How long a state must hold where the contract says it stays (the owner, stopped). */
  settleSeconds: number;
  /** Default: $KUBECONFIG, then ~/.kube/config, then the pod's service account. */
  kubeconfig?: string;
}

export const DEFAULT_TIMEOUT_SECONDS = 120;
export const DEFAULT_SETTLE_SECONDS = 5;

export const USAGE = `usage: npm run contract-test -- --kind <Kind>.<group> [options]

Runs the conformance kit of the Machine infrastructure contract v1 (docs/contract-test.md) against a
provider kind whose controller is running.

  --kind <Kind>.<group>   the provider kind, e.g. PodMachine.infra.basicoperator.dev (required)
  --version V             the API version to test (default: the first the CRD's contract label lists)
  --sample FILE           YAML file with one object of the kind (others in it are ignored); the kit
                          sets name and namespace (default: an object with an empty spec)
  --namespace NS          an existing namespace to work in (default: a fresh one, deleted afterwards)
  --timeout SECONDS       deadline of each wait: readiness, stop, deletion (default ${DEFAULT_TIMEOUT_SECONDS})
  --settle SECONDS        how long the owner and the stopped state must hold (default ${DEFAULT_SETTLE_SECONDS})
  --kubeconfig FILE       default: $KUBECONFIG, then ~/.kube/config
  --help                  this text

Prints one line per check (PASS, FAIL or SKIP, the check, what was seen) and exits 0 when every
check passed, 1 when one did not, 2 when the kit could not run (bad options, sample or namespace,
no cluster).`;

export type ParsedArgs = { options: ContractTestOptions } | { help: true } | { error: string };

const VALUE_FLAGS = ['kind', 'version', 'sample', 'namespace', 'timeout', 'settle', 'kubeconfig'] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];
const isValueFlag = (name: string): name is ValueFlag => (VALUE_FLAGS as readonly string[]).includes(name);

/** Reads `--flag value` and `--flag=value` forms; anything else is an error that says what is wrong. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const values: Partial<Record<ValueFlag, string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') return { help: true };
    if (!arg.startsWith('--')) return { error: `unexpected argument ${JSON.stringify(arg)}` };
    const equals = arg.indexOf('=');
    const name = arg.slice(2, equals < 0 ? undefined : equals);
    if (!isValueFlag(name))
      return { error: `unknown option ${arg.slice(0, equals < 0 ? undefined : equals)}` };
    let value: string | undefined;
    if (equals >= 0) value = arg.slice(equals + 1);
    else {
      value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) return { error: `--${name} needs a value` };
      i++;
    }
    if (value === '') return { error: `--${name} needs a value` };
    if (values[name] !== undefined) return { error: `--${name} is given twice` };
    values[name] = value;
  }
  if (values.kind === undefined) return { error: '--kind <Kind>.<group> is required' };
  const kind = parseKind(values.kind);
  if ('error' in kind) return kind;
  const timeout = seconds('timeout', values.timeout, DEFAULT_TIMEOUT_SECONDS);
  if (typeof timeout !== 'number') return timeout;
  const settle = seconds('settle', values.settle, DEFAULT_SETTLE_SECONDS);
  if (typeof settle !== 'number') return settle;
  const options: ContractTestOptions = { kind: values.kind, timeoutSeconds: timeout, settleSeconds: settle };
  if (values.version !== undefined) options.version = values.version;
  if (values.sample !== undefined) options.sample = values.sample;
  if (values.namespace !== undefined) options.namespace = values.namespace;
  if (values.kubeconfig !== undefined) options.kubeconfig = values.kubeconfig;
  return { options };
}

// An API group of a CRD: a DNS subdomain with at least one dot (the API server requires the dot).
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const KIND = /^[A-Za-z][A-Za-z0-9]*$/;

/** `PodMachine.infra.basicoperator.dev` → kind `PodMachine`, group `infra.basicoperator.dev`. */
export function parseKind(text: string): KindAndGroup | { error: string } {
  const dot = text.indexOf('.');
  const kind = dot < 0 ? text : text.slice(0, dot);
  const group = dot < 0 ? '' : text.slice(dot + 1);
  if (!KIND.test(kind) || !GROUP.test(group)) {
    return {
      error: `--kind ${JSON.stringify(text)} is not <Kind>.<group> (e.g. PodMachine.infra.basicoperator.dev)`,
    };
  }
  return { kind, group };
}

function seconds(name: string, text: string | undefined, fallback: number): number | { error: string } {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(value > 0)) {
    return { error: `--${name} must be a positive number of seconds, not ${JSON.stringify(text)}` };
  }
  return value;
}

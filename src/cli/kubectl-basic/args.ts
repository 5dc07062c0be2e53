// The command line of `kubectl basic`, parsed without side effects.
import { type RootKind, resolveKind } from './kinds.ts';

export type Command = 'tree' | 'why';
export type OutputFormat = 'text' | 'json';

export interface Invocation {
  command: Command;
  kind: RootKind;
  /** Absent with -A and only a kind: every object of the kind. */
  name: string | undefined;
  /** -n/--namespace; absent: the current context's namespace. */
  namespace: string | undefined;
  allNamespaces: boolean;
  output: OutputFormat;
  kubeconfig: string | undefined;
  context: string | undefined;
}

export type Parsed = { help: true } | { help: false; invocation: Invocation };

/** A mistake on the command line: the message says what to type instead. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const VALUE_FLAGS: Record<string, 'namespace' | 'output' | 'kubeconfig' | 'context'> = {
  '-n': 'namespace',
  '--namespace': 'namespace',
  '-o': 'output',
  '--output': 'output',
  '--kubeconfig': 'kubeconfig',
  '--context': 'context',
};

/** Parses `args` (the words after `kubectl basic`). */
export function parseArgs(args: readonly string[]): Parsed {
  const values: Partial<Record<'namespace' | 'output' | 'kubeconfig' | 'context', string>> = {};
  const positional: string[] = [];
  let allNamespaces = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '-h' || arg === '--help' || arg === 'help') return { help: true };
    if (arg === '-A' || arg === '--all-namespaces') {
      allNamespaces = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const key = VALUE_FLAGS[flag];
    if (key) {
      let value: string | undefined;
      if (flag !== arg) value = arg.slice(eq + 1);
      else value = args[++i];
      if (value === undefined || value === '') throw new UsageError(`${flag} needs a value`);
      values[key] = value;
      continue;
    }
    // kubectl's short form -nNS / -ojson.
    if (/^-[no]./.test(arg)) {
      values[arg[1] === 'n' ? 'namespace' : 'output'] = arg.slice(2);
      continue;
    }
    if (arg.startsWith('-')) throw new UsageError(`unknown flag ${arg}`);
    positional.push(arg);
  }
  const [command, first, second, ...rest] = positional;
  // `KIND/NAME` or, as kubectl also takes, `KIND NAME`.
  const target =
    second !== undefined && first !== undefined && !first.includes('/') ? `${first}/${second}` : first;
  if (second !== undefined && target === first) rest.unshift(second);
  if (command === undefined) return { help: true };
  if (command !== 'tree' && command !== 'why') {
    throw new UsageError(`unknown command "${command}": use "tree" or "why"`);
  }
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  if (target === undefined) throw new UsageError(`${command} needs KIND/NAME (or KIND NAME)`);
  const output = values.output ?? 'text';
  if (output !== 'text' && output !== 'json') throw new UsageError(`-o ${output}: use -o json (or no -o)`);
  const slash = target.indexOf('/');
  const kindText = slash < 0 ? target : target.slice(0, slash);
  const name = slash < 0 ? undefined : target.slice(slash + 1);
  const kind = resolveKind(kindText);
  if (!kind) throw new UsageError(`unknown kind "${kindText}": use one of the kinds in --help`);
  if (name === '') throw new UsageError(`${target}: the name after "/" is empty`);
  if (name === undefined && !(command === 'tree' && allNamespaces)) {
    throw new UsageError(`${target}: give KIND/NAME (only "tree KIND -A" lists every object of a kind)`);
  }
  if (allNamespaces && values.namespace) throw new UsageError('-A and -n exclude each other');
  return {
    help: false,
    invocation: {
      command,
      kind,
      name,
      namespace: values.namespace,
      allNamespaces,
      output,
      kubeconfig: values.kubeconfig,
      context: values.context,
    },
  };
}

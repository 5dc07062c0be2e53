import { parseArgs } from 'node:util';
import { asMoverError, MoverError } from './errors.ts';
import { parseManifest } from './manifest.ts';
import { processIdentity } from './ownership.ts';
import { failureLine, successLine, writeTerminationLog } from './report.ts';
import { type CopyOptions, runCopy } from './run.ts';

const USAGE =
  'usage: main.js copy --source DIR --target DIR [--termination-log FILE] ' +
  '[--expect FILES:BYTES:sha256:HEX] [--pod-security-level LEVEL]';

const DEFAULT_TERMINATION_LOG = '/dev/termination-log';

const OPTIONS = {
  source: { type: 'string' },
  target: { type: 'string' },
  'termination-log': { type: 'string' },
  expect: { type: 'string' },
  'pod-security-level': { type: 'string' },
} as const;

/** Runs the command line `args` (without node and the script); returns the exit code. */
export function main(args: readonly string[]): number {
  const terminationLog = terminationLogOf(args);
  const create = terminationLog !== DEFAULT_TERMINATION_LOG;
  try {
    const line = successLine(runCopy(parseCopyOptions(args), processIdentity()));
    writeTerminationLog(terminationLog, line, create);
    process.stdout.write(`${line}\n`);
    return 0;
  } catch (error) {
    const line = failureLine(asMoverError(error));
    writeTerminationLog(terminationLog, line, create);
    process.stderr.write(`${line}\n`);
    return 1;
  }
}

function parseCopyOptions(args: readonly string[]): CopyOptions {
  let parsed: ReturnType<typeof parseStrict>;
  try {
    parsed = parseStrict(args);
  } catch (error) {
    throw new MoverError('Usage', `${error instanceof Error ? error.message : String(error)}; ${USAGE}`);
  }
  const { positionals, values } = parsed;
  if (positionals.length !== 1 || positionals[0] !== 'copy') {
    throw new MoverError(
      'Usage',
      `expected the command "copy", got ${JSON.stringify(positionals)}; ${USAGE}`,
    );
  }
  if (values.source === undefined || values.target === undefined) {
    throw new MoverError('Usage', `--source and --target are required; ${USAGE}`);
  }
  return {
    source: values.source,
    target: values.target,
    ...(values.expect !== undefined ? { expect: parseManifest(values.expect) } : {}),
    ...(values['pod-security-level'] !== undefined ? { podSecurityLevel: values['pod-security-level'] } : {}),
  };
}

function parseStrict(args: readonly string[]) {
  return parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });
}

/** --termination-log, read leniently: even a command line with errors says where to report them. */
function terminationLogOf(args: readonly string[]): string {
  const { values } = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: false });
  const file = values['termination-log'];
  return typeof file === 'string' ? file : DEFAULT_TERMINATION_LOG;
}

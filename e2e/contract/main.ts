// `npm run contract-test -- --kind <Kind>.<group> ...`: the conformance kit on the command line.
import { errorMessage } from '../../src/runtime/log.ts';
import { parseArgs, USAGE } from './args.ts';
import { runContractTest } from './kit.ts';
import { conforms, formatResult, formatSummary } from './report.ts';

async function main(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv);
  if ('help' in parsed) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if ('error' in parsed) {
    process.stderr.write(`${parsed.error}\n\n${USAGE}\n`);
    return 2;
  }
  const { options } = parsed;
  process.stderr.write(
    `contract-test: ${options.kind}, timeout ${options.timeoutSeconds} s, settle ${options.settleSeconds} s\n`,
  );
  const results = await runContractTest({
    ...options,
    onResult: (result) => process.stdout.write(`${formatResult(result)}\n`),
    onProgress: (line) => process.stderr.write(`  ... ${line}\n`),
  });
  process.stdout.write(`${formatSummary(results)}\n`);
  return conforms(results) ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`contract-test: ${errorMessage(err)}\n`);
    process.exit(2);
  },
);

// Entry point of the `kubectl-basic` binary (bin/kubectl-basic.js starts it).
import { run } from './run.ts';

process.exitCode = await run(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
});

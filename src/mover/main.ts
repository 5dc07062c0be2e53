// The mover: copies a volume into another and verifies the copy (docs/mover.md).
//   node dist/mover/main.js copy --source DIR --target DIR [--termination-log FILE] ...
import { main } from './cli.ts';

process.exitCode = main(process.argv.slice(2));

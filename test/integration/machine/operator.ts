// The operator with only the Machine and VolumeBackup controllers, for tests that kill it with
// SIGKILL and start it again. Same shape as src/main.ts, plus one test-only flag:
//   node test/integration/machine/operator.ts --controllers machine,machine-backup,volumebackup \
//     --kubeconfig ... --namespaces ns --metrics-bind-address 0 --health-probe-bind-address 0
// --controllers picks which of the three controllers run (default: all), so a test can stop a
// deletion at an exact step: e.g. without `volumebackup` a VolumeBackup is recorded but never copied.
import { registerMachineController } from '../../../src/controllers/machine/index.ts';
import {
  registerMachineBackupController,
  registerVolumeBackupJobsController,
} from '../../../src/controllers/volumebackup/index.ts';
import { errorMessage } from '../../../src/runtime/log.ts';
import { ConfigError, parseConfig } from '../../../src/runtime/manager/config.ts';
import { Manager } from '../../../src/runtime/manager/manager.ts';

export const ALL_CONTROLLERS = ['machine', 'machine-backup', 'volumebackup'] as const;
export type ControllerName = (typeof ALL_CONTROLLERS)[number];

const REGISTER: Record<ControllerName, (manager: Manager) => void> = {
  machine: registerMachineController,
  'machine-backup': registerMachineBackupController,
  volumebackup: (manager) => registerVolumeBackupJobsController(manager),
};

/** Splits `--controllers a,b` off the manager's flags. */
function splitControllers(argv: string[]): { controllers: ControllerName[]; rest: string[] } {
  const i = argv.indexOf('--controllers');
  if (i < 0) return { controllers: [...ALL_CONTROLLERS], rest: argv };
  const names = (argv[i + 1] ?? '').split(',').filter(Boolean);
  const unknown = names.filter((n) => !(ALL_CONTROLLERS as readonly string[]).includes(n));
  if (unknown.length > 0) throw new ConfigError(`--controllers: unknown ${unknown.join(', ')}`);
  return { controllers: names as ControllerName[], rest: [...argv.slice(0, i), ...argv.slice(i + 2)] };
}

async function main(argv: string[]): Promise<number> {
  let config: ReturnType<typeof parseConfig>;
  let controllers: ControllerName[];
  try {
    const split = splitControllers(argv);
    controllers = split.controllers;
    config = parseConfig(split.rest);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`machine-operator: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (config === 'help') return 0;
  const manager = new Manager(config);
  for (const name of controllers) REGISTER[name](manager);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    manager.log.info('received signal', { signal });
    manager.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        manager.log.error('shutdown failed', { error: errorMessage(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await manager.start();
  return -1; // keep running
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (err: unknown) => {
      process.stderr.write(
        `machine-operator: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exit(1);
    },
  );
}

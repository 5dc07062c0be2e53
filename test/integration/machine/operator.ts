// The operator with only the Machine, PodMachine and VolumeBackup controllers, for tests that kill it
// with SIGKILL and start it again. Same shape as src/main.ts, plus one test-only flag:
//   node test/integration/machine/operator.ts --controllers machine,podmachine,machine-backup,volumebackup \
//     --kubeconfig ... --namespaces ns --metrics-bind-address 0 --health-probe-bind-address 0
// --controllers picks which of the four controllers run (default: all), so a test can stop a
// deletion at an exact step: e.g. without `volumebackup` a VolumeBackup is recorded but never copied.
import { fileURLToPath } from 'node:url';
import { OperatorProcess } from '../../../e2e/support/operator-process.ts';
import { OPERATOR_FLAGS, type OperatorOptions, readOperatorFlags } from '../../../src/controllers/flags.ts';
import { operatorManagerOptions } from '../../../src/controllers/index.ts';
import { registerMachineController } from '../../../src/controllers/machine/index.ts';
import { registerMachineBackupController } from '../../../src/controllers/machinebackup/index.ts';
import { registerPodMachineController } from '../../../src/controllers/podmachine/index.ts';
import { registerVolumeBackupController } from '../../../src/controllers/volumebackup/index.ts';
import { errorMessage } from '../../../src/runtime/log.ts';
import { ConfigError } from '../../../src/runtime/manager/config.ts';
import type { Manager } from '../../../src/runtime/manager/manager.ts';
import { runMain } from '../../../src/runtime/manager/run.ts';

export const ALL_CONTROLLERS = ['machine', 'podmachine', 'machine-backup', 'volumebackup'] as const;
export type ControllerName = (typeof ALL_CONTROLLERS)[number];

const REGISTER: Record<ControllerName, (manager: Manager, options: OperatorOptions) => void> = {
  machine: registerMachineController,
  // The restore Jobs are the PodMachine's: it gets their image and deadline, as in registerControllers.
  podmachine: registerPodMachineController,
  'machine-backup': registerMachineBackupController,
  volumebackup: registerVolumeBackupController,
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

/** Starts this file as a child process watching `namespace`, and waits until its controllers run. */
export async function startMachineOperator(
  kubeconfig: string,
  namespace: string,
  controllers?: readonly ControllerName[],
): Promise<OperatorProcess> {
  const operator = new OperatorProcess({
    name: 'machine-operator',
    args: [
      fileURLToPath(import.meta.url),
      '--kubeconfig',
      kubeconfig,
      '--namespaces',
      namespace,
      '--metrics-bind-address',
      '0',
      '--health-probe-bind-address',
      '0',
      '--log-level',
      'info',
      ...(controllers ? ['--controllers', controllers.join(',')] : []),
    ],
  });
  try {
    await operator.controllersStarted();
  } catch (err) {
    await operator.stop({ signal: 'SIGKILL' });
    throw err;
  }
  return operator;
}

if (import.meta.main) {
  let split: { controllers: ControllerName[]; rest: string[] };
  try {
    split = splitControllers(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`machine-operator: ${errorMessage(err)}\n`);
    process.exit(2);
  }
  runMain(split.rest, {
    name: 'machine-operator',
    flags: OPERATOR_FLAGS,
    setup: (flags) => {
      const options = readOperatorFlags(flags);
      return (manager) => {
        for (const name of split.controllers) REGISTER[name](manager, options);
      };
    },
    manager: operatorManagerOptions,
  });
}

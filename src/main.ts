import { OPERATOR_FLAGS, readOperatorFlags } from './controllers/flags.ts';
import { operatorManagerOptions, registerControllers } from './controllers/index.ts';
import { runMain } from './runtime/manager/run.ts';

/** The operator's entry point: parse configuration, register the controllers, run until SIGTERM. */
runMain(process.argv.slice(2), {
  name: 'basic-operator',
  about: [
    'Runs the BasicDeployment, BasicReplicaSet, Machine, PodMachine and VolumeBackup controllers',
    'against the cluster of the current kubeconfig.',
  ].join('\n'),
  flags: OPERATOR_FLAGS,
  setup: (flags) => {
    const options = readOperatorFlags(flags);
    return (manager) => registerControllers(manager, options);
  },
  manager: operatorManagerOptions,
});

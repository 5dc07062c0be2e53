// The StatefulSetMachine provider as a process of its own, beside the operator (not inside it):
//   node examples/statefulset-provider/src/main.ts --kubeconfig ~/.kube/config --namespaces demo
// It takes the manager's flags (--namespaces, --metrics-bind-address, --health-probe-bind-address,
// --leader-elect, --log-level, ...; --help lists them) and two of its own for restores.
import { runMain } from './basic-operator.ts';
import { providerManagerOptions, registerStatefulSetMachineController } from './controller.ts';
import { MANAGER_DEFAULTS, PROVIDER_FLAGS, readProviderFlags } from './flags.ts';

runMain(process.argv.slice(2), {
  name: 'statefulset-provider',
  about: [
    'Realizes StatefulSetMachines (examples.basicoperator.dev/v1alpha1) as StatefulSets: a provider',
    'of the Machine infrastructure contract v1 (docs/contracts.md), run beside basic-operator.',
  ].join('\n'),
  flags: PROVIDER_FLAGS,
  managerDefaults: MANAGER_DEFAULTS,
  setup: (flags) => {
    const options = readProviderFlags(flags);
    return (manager) => registerStatefulSetMachineController(manager, options);
  },
  manager: providerManagerOptions,
});

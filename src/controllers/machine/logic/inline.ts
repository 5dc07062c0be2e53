// The PodMachine an inline Machine is realized as, built from the Machine's spec alone (pure). This
// is the one place the Machine controller names a provider's kind: it creates the object, and reads
// it back only through the contract, like any other provider's.
import {
  CREATED_FOR_ANNOTATION,
  MACHINE,
  MACHINE_POD_FIELDS,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  type Machine,
  POD_MACHINE,
  type PodMachine,
} from '../../../apis/index.ts';
import { controllerReference } from '../../../runtime/write/owner-refs.ts';

/**
 * A PodMachine of the Machine's name and namespace, its spec the Machine's image, command, args,
 * volumes and pod fields (immutable on both, so it never needs rewriting), controlled by the Machine,
 * and saying which Machine created it (CREATED_FOR_ANNOTATION).
 */
export function desiredPodMachine(machine: Machine): PodMachine {
  const { image, command, args, volumes } = machine.spec;
  const podFields = Object.fromEntries(
    MACHINE_POD_FIELDS.filter((field) => machine.spec[field] !== undefined).map((field) => [
      field,
      structuredClone(machine.spec[field]),
    ]),
  );
  return {
    apiVersion: POD_MACHINE.apiVersion,
    kind: POD_MACHINE.kind,
    metadata: {
      name: machine.metadata.name,
      namespace: machine.metadata.namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      annotations: { [CREATED_FOR_ANNOTATION]: machine.metadata.uid ?? '' },
      ownerReferences: [controllerReference(machine, MACHINE)],
    },
    spec: {
      image: image ?? '',
      ...(command ? { command: [...command] } : {}),
      ...(args ? { args: [...args] } : {}),
      ...(volumes ? { volumes: volumes.map((v) => structuredClone(v)) } : {}),
      ...podFields,
    },
  };
}

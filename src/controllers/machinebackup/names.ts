// The labels of the VolumeBackups the machine-backup controller records; their name is backupName
// (shared/volume-backups.ts), which the volumebackup controller derives too.
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, type Machine } from '../../apis/index.ts';
import { boundedName, MAX_LABEL_VALUE } from '../shared/names.ts';

/** On a VolumeBackup: the name of the Machine it backs up (bounded to a label value). */
const MACHINE_LABEL = 'infra.basicoperator.dev/machine';
/** On a VolumeBackup: the uid of that Machine. */
const MACHINE_UID_LABEL = 'infra.basicoperator.dev/machine-uid';

export function backupLabels(machine: Machine): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [MACHINE_LABEL]: boundedName(machine.metadata.name ?? '', MAX_LABEL_VALUE),
    [MACHINE_UID_LABEL]: machine.metadata.uid ?? '',
  };
}

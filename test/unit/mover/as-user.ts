// Runs the mover (src/mover/main.ts, with this process's arguments) as MOVER_UID:MOVER_GID with the
// supplementary groups MOVER_GROUPS (comma-separated), as a copy pod with that runAsUser, runAsGroup
// and fsGroup runs it. Started as root: Node's spawn({uid, gid}) would drop every supplementary group.
const ids = (name: string): number[] =>
  (process.env[name] ?? '')
    .split(',')
    .filter((s) => s !== '')
    .map(Number);

process.setgroups!(ids('MOVER_GROUPS'));
process.setgid!(ids('MOVER_GID')[0]!);
process.setuid!(ids('MOVER_UID')[0]!);
await import('../../../src/mover/main.ts');

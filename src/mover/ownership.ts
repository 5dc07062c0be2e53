import { displayPath } from './display.ts';
import { MoverError } from './errors.ts';
import { walkTree } from './walk.ts';

/** Who the copy runs as. */
export interface Identity {
  readonly uid: number;
  readonly gid: number;
  /** Supplementary groups. */
  readonly groups: readonly number[];
}

export function processIdentity(): Identity {
  return { uid: process.getuid!(), gid: process.getgid!(), groups: process.getgroups!() };
}

const ROOT = Buffer.from('.');

/** How many foreign entries the message lists. */
const LISTED = 5;

/**
 * A copy that is not root can make files only of its own uid (and of its groups), so it refuses a
 * source with entries of anybody else rather than changing their owners. It looks at owners only
 * (lstat), before any content is read: another user's files may well be unreadable, and their
 * owner is the better answer than "permission denied". Throws an Ownership error.
 */
export function checkOwnership(
  source: string,
  identity: Identity,
  podSecurityLevel: string | undefined,
): void {
  const groups = new Set([identity.gid, ...identity.groups]);
  const listed: string[] = [];
  let count = 0;
  let unlisted = 0;
  walkTree(source, {
    enter: ({ abs, rel, stats }) => {
      // The root is the claim's mount point, made by its provisioner: copied as it is when the
      // target's root already matches it (copyTree), never a reason to refuse.
      if (rel.equals(ROOT)) return;
      if (Number(stats.uid) === identity.uid && groups.has(Number(stats.gid))) return;
      count++;
      if (listed.length < LISTED) listed.push(`${displayPath(abs)} (${stats.uid}:${stats.gid})`);
    },
    // A directory of another user's that this user cannot list: counted, its contents are not.
    skipUnlistable: (dir, error) => {
      const foreign = Number(dir.stats.uid) !== identity.uid;
      if (foreign && error.code === 'EACCES') unlisted++;
      return foreign && error.code === 'EACCES';
    },
  });
  if (count === 0) return;
  const level =
    podSecurityLevel === undefined
      ? ''
      : `; the namespace's Pod Security level ${JSON.stringify(podSecurityLevel)} allows copies only as a non-root user`;
  const entries = count === 1 ? '1 entry of the source belongs' : `${count} entries of the source belong`;
  const more =
    unlisted === 0
      ? ''
      : ` (and whatever is inside ${unlisted === 1 ? 'a directory' : `${unlisted} directories`} it cannot list)`;
  throw new MoverError(
    'Ownership',
    `the copy runs as uid ${identity.uid}, not root, and cannot give files to other users${level}. ` +
      `${entries} to other users${more}, first: ${listed.join(', ')}; ` +
      'nothing was copied, and no owner was changed',
  );
}

import { MoverError } from './errors.ts';
import type { Manifest } from './manifest.ts';

/**
 * Throws a Mismatch unless the target's manifest equals the source's or, for a restore, the
 * manifest `--expect` gave (the backup's, taken when it was made). The message names each of files,
 * bytes and digest that differs, with both values.
 */
export function verifyCopy(source: Manifest, target: Manifest, expected: Manifest | undefined): void {
  const [want, wantName, gotName, summary] =
    expected === undefined
      ? [source, 'source', 'copy', 'the copy differs from the source']
      : [expected, 'expected', 'restored', "the restored tree differs from the backup's manifest"];
  const differences: string[] = [];
  for (const field of ['files', 'bytes', 'digest'] as const) {
    if (target[field] !== want[field]) {
      differences.push(`${field}: ${wantName} ${want[field]}, ${gotName} ${target[field]}`);
    }
  }
  if (differences.length > 0) throw new MoverError('Mismatch', `${summary}: ${differences.join('; ')}`);
}

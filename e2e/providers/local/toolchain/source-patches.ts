/**
 * Fixes applied to an upstream module's source before it is built. Each one replaces one exact
 * piece of text, so that a new upstream version that moved or fixed the code fails the build loudly
 * instead of being patched in the wrong place.
 */
export interface SourcePatch {
  /** Path inside the module. */
  file: string;
  /** What is wrong upstream and what the fix changes. */
  why: string;
  find: string;
  replace: string;
}

export const KWOK_PATCHES: readonly SourcePatch[] = [
  {
    file: 'pkg/utils/informer/event.go',
    why:
      'kwok v0.8.0 sets resourceVersion "0" on every request of its pod informer, watches ' +
      'included, so each time kube-apiserver closes its pod watch (it closes watchers that fall ' +
      'behind) kwok starts over from "0" and receives every bound pod again as ADDED. It then ' +
      'replays the "pod-ready" stage on pods it had already made Ready, and kube-apiserver refuses ' +
      'those patches (a second pod IP); at 1000x10 that was 3,000 to 6,500 refused patches and twice ' +
      'kwok\'s CPU. The fix keeps "0" for a first list or watch and lets the reflector resume ' +
      'from the resource version it has seen, as every client-go informer does.',
    find: `	if !o.EnableListPager || o.EnableStreamWatch {
		opts.ResourceVersion = "0"
	}`,
    replace: `	if (!o.EnableListPager || o.EnableStreamWatch) && opts.ResourceVersion == "" {
		opts.ResourceVersion = "0"
	}`,
  },
];

/** The patched text; throws unless `find` occurs exactly once. */
export function applySourcePatch(text: string, patch: SourcePatch): string {
  const at = text.indexOf(patch.find);
  if (at < 0) throw new Error(`source patch for ${patch.file} does not apply: text not found`);
  if (text.indexOf(patch.find, at + 1) >= 0) {
    throw new Error(`source patch for ${patch.file} does not apply: text found more than once`);
  }
  return text.slice(0, at) + patch.replace + text.slice(at + patch.find.length);
}

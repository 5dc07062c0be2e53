import { parseKinds } from './generator.ts';

/**
 * The seeds `npm test` runs (test/integration/parity): few, short, with small replica counts, so the
 * run stays around two minutes on two cores. `npm run parity -- --seeds N` runs more.
 * Every operation kind is included: on code with a known divergence these seeds fail, printing it.
 */
export const FIXED_SEEDS = [3, 7, 12];
export const FIXED_STEPS = 6;
export const FIXED_KINDS = parseKinds(undefined);

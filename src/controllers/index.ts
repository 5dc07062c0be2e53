import type { Manager } from '../runtime/manager/manager.ts';

/** Registers every controller of the operator with the manager. */
export function registerControllers(_manager: Manager): void {}

import { createRequire } from 'node:module';
import type { Agent as UndiciAgent } from 'undici';

/**
 * undici's Agent and its request(), without the rest of the package. Importing `undici` loads fetch,
 * WebSocket, EventSource, caches and mocks as well (12 MiB of resident memory in a bare process, 2 to
 * 5 MiB more in the running operator) for an operator that sends requests through one Agent. undici's
 * index gives dispatchers their request() the same way (Object.assign of lib/api onto
 * Dispatcher.prototype); where a test or tool imports the whole package, it assigns the same functions
 * again.
 */
const require = createRequire(import.meta.url);
const Dispatcher = require('undici/lib/dispatcher/dispatcher') as { prototype: object };
Object.assign(Dispatcher.prototype, require('undici/lib/api'));

export const Agent = require('undici/lib/dispatcher/agent') as typeof UndiciAgent;
export type Agent = UndiciAgent;

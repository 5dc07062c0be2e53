import { operatorCacheOptions, registerControllers } from './controllers/index.ts';
import { runMain } from './runtime/manager/run.ts';

/** The operator's entry point: parse configuration, register the controllers, run until SIGTERM. */
runMain(process.argv.slice(2), {
  name: 'basic-operator',
  register: registerControllers,
  manager: { cache: operatorCacheOptions },
});

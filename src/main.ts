import { registerControllers } from './controllers/index.ts';
import { errorMessage } from './runtime/log.ts';
import { ConfigError, parseConfig, usage } from './runtime/manager/config.ts';
import { ClusterUnreachableError, Manager } from './runtime/manager/manager.ts';

/** The operator's entry point: parse configuration, register the controllers, run until SIGTERM. */
async function main(argv: string[]): Promise<number> {
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(argv);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`basic-operator: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (config === 'help') {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  let manager: Manager;
  try {
    manager = new Manager(config);
  } catch (err) {
    process.stderr.write(`basic-operator: cannot load the kubeconfig: ${errorMessage(err)}\n`);
    return 1;
  }
  registerControllers(manager);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    manager.log.info('received signal', { signal });
    manager.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        manager.log.error('shutdown failed', { error: errorMessage(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    await manager.start();
  } catch (err) {
    if (err instanceof ClusterUnreachableError) {
      process.stderr.write(`basic-operator: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  return -1; // keep running
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(
      `basic-operator: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);

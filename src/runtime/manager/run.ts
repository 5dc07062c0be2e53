import { loadKubeConfig } from '../client/kubeconfig.ts';
import { errorMessage } from '../log.ts';
import {
  type CommandLine,
  ConfigError,
  type FlagReader,
  type FlagSpecs,
  type ManagerFlagDefaults,
  parseCommandLine,
  usage,
} from './config.ts';
import { ClusterUnreachableError, Manager, type ManagerOptions } from './manager.ts';

export interface RunOptions {
  /** The program's name: --help shows it, and it prefixes messages on stderr. */
  name: string;
  /** What the program runs, for --help. */
  about?: string;
  /** The program's own flags, parsed with the manager's (as a Go main declares its flags beside controller-runtime's). */
  flags?: FlagSpecs;
  /** The program's own defaults for some of the manager's flags (e.g. its Lease name). */
  managerDefaults?: ManagerFlagDefaults;
  /**
   * Reads the program's flags (a ConfigError for a bad value exits 2, as the manager's do) and returns
   * what registers the controllers; runs before the manager exists.
   */
  setup(flags: FlagReader): (manager: Manager) => void;
  /** Called once the manager is started (tests log a marker here). */
  started?(manager: Manager): void;
  /** Passed to the Manager (cache selections). */
  manager?: ManagerOptions;
}

/**
 * The process around a manager: parse flags and environment, register controllers, start, and on
 * SIGTERM/SIGINT stop gracefully and exit 0. Exit codes: 2 bad configuration, 1 no cluster or a
 * failed shutdown. Resolves only when the process should exit at once (help, errors).
 */
export async function runOperator(argv: string[], options: RunOptions): Promise<number> {
  let commandLine: CommandLine | 'help';
  let register: (manager: Manager) => void;
  try {
    commandLine = parseCommandLine(argv, process.env, options.flags, options.managerDefaults);
    if (commandLine === 'help') {
      process.stdout.write(`${usage(options)}\n`);
      return 0;
    }
    register = options.setup(commandLine.flags);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${options.name}: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  let manager: Manager;
  try {
    const kubeConfig = await loadKubeConfig(commandLine.config.kubeconfig);
    manager = new Manager(commandLine.config, kubeConfig, { userAgent: options.name, ...options.manager });
  } catch (err) {
    process.stderr.write(`${options.name}: cannot load the kubeconfig: ${errorMessage(err)}\n`);
    return 1;
  }
  register(manager);
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
      process.stderr.write(`${options.name}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  options.started?.(manager);
  return new Promise<number>(() => {}); // runs until a signal
}

/** Runs `runOperator` as the process's main function. */
export function runMain(argv: string[], options: RunOptions): void {
  runOperator(argv, options).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(
        `${options.name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exit(1);
    },
  );
}

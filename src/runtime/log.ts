import winston from 'winston';

export type Logger = winston.Logger;
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];

let root: Logger | undefined;

/** The process-wide JSON logger; every component logs through a child with its own fields. */
export function rootLogger(level?: LogLevel): Logger {
  if (!root) {
    root = winston.createLogger({
      level: level ?? (process.env.LOG_LEVEL as LogLevel | undefined) ?? 'info',
      format: winston.format.combine(
        winston.format.timestamp(),
        winston.format.errors({ stack: true }),
        winston.format.json(),
      ),
      transports: [new winston.transports.Console({ stderrLevels: [] })],
    });
    skipDisabledLevels(root);
  } else if (level) {
    root.level = level;
  }
  return root;
}

/**
 * winston runs every call through its whole format chain (timestamp, JSON serialization) and only
 * then lets the transport drop it for its level: a filtered debug line costs as much as a written
 * one. This makes each level method of `logger`, and of every child made from it, return at once
 * when the level is off (checked at each call, so a later level change applies).
 */
export function skipDisabledLevels(logger: Logger): Logger {
  const methods = logger as unknown as Record<string, (...args: unknown[]) => Logger>;
  for (const level of Object.keys(logger.levels)) {
    const write = methods[level];
    if (typeof write !== 'function') continue;
    methods[level] = function (this: Logger, ...args: unknown[]): Logger {
      const self = this ?? logger;
      return self.isLevelEnabled(level) ? write.apply(self, args) : self;
    };
  }
  return logger;
}

export function logger(fields: Record<string, unknown>): Logger {
  return rootLogger().child(fields);
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

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
  } else if (level) {
    root.level = level;
  }
  return root;
}

export function logger(fields: Record<string, unknown>): Logger {
  return rootLogger().child(fields);
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

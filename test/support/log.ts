import { type Logger, type LogLevel, rootLogger } from '../../src/runtime/log.ts';

/** Quiet by default so test output stays readable; TEST_LOG_LEVEL=debug shows everything. */
export function testLogger(): Logger {
  return rootLogger((process.env.TEST_LOG_LEVEL as LogLevel | undefined) ?? 'error');
}

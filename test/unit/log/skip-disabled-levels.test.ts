import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import winston from 'winston';
import { skipDisabledLevels } from '../../../src/runtime/log.ts';

/** Collects the message of every line a Stream transport writes. */
function memory() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        lines.push(String((JSON.parse(line) as { message: unknown }).message));
      }
      done();
    },
  });
  return { lines, transport: new winston.transports.Stream({ stream }) };
}

function counted(level: string) {
  let formatted = 0;
  const sink = memory();
  const logger = winston.createLogger({
    level,
    format: winston.format.combine(
      winston.format((info) => {
        formatted++;
        return info;
      })(),
      winston.format.json(),
    ),
    transports: [sink.transport],
  });
  return { logger: skipDisabledLevels(logger), memory: sink, formatted: () => formatted };
}

describe('skipDisabledLevels', () => {
  it('drops a disabled level before formatting, in the logger and its children', () => {
    const { logger, memory, formatted } = counted('warn');
    logger.debug('not this');
    logger.child({ controller: 'x' }).info('nor this', { key: 1 });
    assert.equal(formatted(), 0);
    assert.deepEqual(memory.lines, []);
  });

  it('still writes enabled levels, with a child keeping its fields', () => {
    const { logger, memory, formatted } = counted('info');
    logger.warn('written');
    logger.child({ controller: 'x' }).info('also written');
    logger.debug('dropped');
    assert.equal(formatted(), 2);
    assert.deepEqual(memory.lines, ['written', 'also written']);
  });

  it('follows a level changed after the logger was made', () => {
    const { logger, memory } = counted('warn');
    logger.debug('before');
    logger.level = 'debug';
    logger.child({ reconcileID: 'r1' }).debug('after');
    assert.deepEqual(memory.lines, ['after']);
  });
});

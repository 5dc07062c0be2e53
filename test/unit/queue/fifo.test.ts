import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Fifo } from '../../../src/runtime/queue/fifo.ts';

describe('Fifo', () => {
  it('keeps order across internal compaction', () => {
    const fifo = new Fifo<number>();
    let nextIn = 0;
    let nextOut = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 300; i++) fifo.push(nextIn++);
      for (let i = 0; i < 250; i++) assert.equal(fifo.shift(), nextOut++);
      assert.equal(fifo.length, nextIn - nextOut);
    }
    while (fifo.length > 0) assert.equal(fifo.shift(), nextOut++);
    assert.equal(fifo.shift(), undefined);
    assert.equal(nextOut, nextIn);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventSpamFilter } from '../../../src/runtime/events/spam-filter.ts';
import { FakeClock } from '../../../src/runtime/queue/clock.ts';

const pod = (uid: string) => ({ kind: 'Pod', namespace: 'ns', name: uid, uid });

function allowedOf(filter: EventSpamFilter, ref: ReturnType<typeof pod>, tries: number): number {
  let allowed = 0;
  for (let i = 0; i < tries; i++) if (filter.allow(ref)) allowed++;
  return allowed;
}

describe('EventSpamFilter', () => {
  it('allows a burst of 25 per object, then drops', () => {
    const filter = new EventSpamFilter({ clock: new FakeClock() });
    assert.equal(allowedOf(filter, pod('a'), 100), 25);
    assert.equal(filter.allow(pod('a')), false);
  });

  it('refills one token per 5 minutes', () => {
    const clock = new FakeClock();
    const filter = new EventSpamFilter({ clock });
    allowedOf(filter, pod('a'), 25);
    clock.advance(299_000);
    assert.equal(filter.allow(pod('a')), false);
    clock.advance(1_000);
    assert.equal(filter.allow(pod('a')), true);
    assert.equal(filter.allow(pod('a')), false);
    clock.advance(3 * 300_000);
    assert.equal(allowedOf(filter, pod('a'), 10), 3);
  });

  it('limits each object separately', () => {
    const filter = new EventSpamFilter({ clock: new FakeClock(), burst: 2 });
    assert.equal(allowedOf(filter, pod('a'), 5), 2);
    assert.equal(allowedOf(filter, pod('b'), 5), 2);
  });

  it('tracks at most maxObjects, forgetting the least recently seen', () => {
    const filter = new EventSpamFilter({ clock: new FakeClock(), burst: 1, maxObjects: 2 });
    filter.allow(pod('a'));
    filter.allow(pod('b'));
    filter.allow(pod('a')); // a is now the most recent (and denied)
    filter.allow(pod('c')); // evicts b
    assert.equal(filter.size, 2);
    assert.equal(filter.allow(pod('a')), false);
    assert.equal(filter.allow(pod('b')), true); // forgotten, so a fresh bucket
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AccessReviews,
  cachedAccessReviews,
  type ReviewedUser,
  reviewScrape,
} from '../../../src/runtime/manager/metrics/access-review.ts';

/** Reviews that answer from tables and count the questions. */
function tableReviews(users: Record<string, string>, allowed: string[]) {
  const asked = { authenticate: 0, authorize: 0 };
  const reviews: AccessReviews = {
    async authenticate(token) {
      asked.authenticate++;
      const username = users[token];
      return username ? { username, groups: ['system:authenticated'] } : undefined;
    },
    async authorize(user: ReviewedUser, path, verb) {
      asked.authorize++;
      return verb === 'get' && path === '/metrics' && allowed.includes(user.username);
    },
  };
  return { reviews, asked };
}

/** A GET of /metrics with this Authorization header. */
const scrape = (authorization: string | undefined) => ({ authorization, path: '/metrics', verb: 'get' });

describe('reviewScrape', () => {
  const { reviews } = tableReviews({ good: 'prometheus', other: 'someone' }, ['prometheus']);

  it('answers 401 without a bearer token or with a token the API server does not accept', async () => {
    assert.equal((await reviewScrape(reviews, scrape(undefined))).status, 401);
    assert.equal((await reviewScrape(reviews, scrape('Basic dXNlcjpwYXNz'))).status, 401);
    assert.equal((await reviewScrape(reviews, scrape('Bearer nope'))).status, 401);
  });

  it("answers 403 when the token's user may not get /metrics, naming the user", async () => {
    const decision = await reviewScrape(reviews, scrape('Bearer other'));
    assert.deepEqual(decision, {
      status: 403,
      message: 'Forbidden: user "someone" may not get path "/metrics"',
    });
  });

  it('asks for the request method, so a POST is not a GET', async () => {
    const decision = await reviewScrape(reviews, {
      authorization: 'Bearer good',
      path: '/metrics',
      verb: 'post',
    });
    assert.deepEqual(decision, {
      status: 403,
      message: 'Forbidden: user "prometheus" may not post path "/metrics"',
    });
  });

  it('lets an authorized user through', async () => {
    assert.deepEqual(await reviewScrape(reviews, scrape('Bearer good')), { status: 200 });
  });

  it('answers 500, never an allow, when a review fails', async () => {
    const failing: AccessReviews = {
      authenticate: async () => {
        throw new Error('API server down');
      },
      authorize: async () => true,
    };
    assert.deepEqual(await reviewScrape(failing, scrape('Bearer good')), {
      status: 500,
      message: 'could not review the request: API server down',
    });
  });
});

describe('cachedAccessReviews', () => {
  const times = {
    authenticatedMs: 60_000,
    unauthenticatedMs: 10_000,
    allowedMs: 60_000,
    deniedMs: 10_000,
    maxEntries: 4,
  };

  it('asks the API server once per token and decision while the answers are fresh, then again', async () => {
    let now = 0;
    const { reviews, asked } = tableReviews({ good: 'prometheus', other: 'someone' }, ['prometheus']);
    const cached = cachedAccessReviews(reviews, times, () => now);
    for (let i = 0; i < 3; i++) {
      assert.equal((await reviewScrape(cached, scrape('Bearer good'))).status, 200);
      assert.equal((await reviewScrape(cached, scrape('Bearer other'))).status, 403);
      assert.equal((await reviewScrape(cached, scrape('Bearer nope'))).status, 401);
    }
    assert.deepEqual(asked, { authenticate: 3, authorize: 2 });
    now = 10_000; // denials and unknown tokens expire first
    await reviewScrape(cached, scrape('Bearer good'));
    await reviewScrape(cached, scrape('Bearer other'));
    await reviewScrape(cached, scrape('Bearer nope'));
    assert.deepEqual(asked, { authenticate: 4, authorize: 3 });
    now = 60_000;
    await reviewScrape(cached, scrape('Bearer good'));
    assert.deepEqual(asked, { authenticate: 5, authorize: 4 });
  });

  it('keeps at most maxEntries per cache, dropping the oldest', async () => {
    const users = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`t${i}`, `u${i}`]));
    const { reviews, asked } = tableReviews(users, Object.values(users));
    const cached = cachedAccessReviews(reviews, times, () => 0);
    for (const token of Object.keys(users)) await reviewScrape(cached, scrape(`Bearer ${token}`));
    assert.equal(cached.cached, 8);
    await reviewScrape(cached, scrape('Bearer t9'));
    assert.deepEqual(asked, { authenticate: 10, authorize: 10 });
    await reviewScrape(cached, scrape('Bearer t0'));
    assert.deepEqual(asked, { authenticate: 11, authorize: 11 });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AccessReviews,
  cachedAccessReviews,
  DEFAULT_REVIEW_LIMITS,
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
    knownTokenMs: 600_000,
    unknownTokenReviews: { burst: 100, perSecond: 100 },
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

describe('the budget for reviews of unknown tokens', () => {
  const limits = {
    ...DEFAULT_REVIEW_LIMITS,
    maxEntries: 8,
    unknownTokenReviews: { burst: 3, perSecond: 0.5 },
  };
  const randomTokens = (n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => `Bearer random-${from + i}`);

  it('sends at most `burst` TokenReviews for a flood of random tokens, answering the rest 429, then one per refill', async () => {
    let now = 0;
    const { reviews, asked } = tableReviews({}, []);
    const cached = cachedAccessReviews(reviews, limits, () => now);
    const statuses = [];
    for (const token of randomTokens(50)) statuses.push((await reviewScrape(cached, scrape(token))).status);
    assert.deepEqual(statuses.slice(0, 3), [401, 401, 401]);
    assert.ok(statuses.slice(3).every((status) => status === 429));
    assert.equal(asked.authenticate, 3);
    assert.deepEqual(await reviewScrape(cached, scrape('Bearer another')), {
      status: 429,
      message: 'Too Many Requests: too many requests with unknown bearer tokens; retry in 2s',
      retryAfterSeconds: 2,
    });
    now = 2_000; // one more review, at 0.5 a second
    for (const token of randomTokens(10, 100)) await reviewScrape(cached, scrape(token));
    assert.equal(asked.authenticate, 4);
    // A token just rejected is answered from the cache, not throttled.
    assert.equal((await reviewScrape(cached, scrape('Bearer random-100'))).status, 401);
  });

  it("reviews a known scraper's token again outside the budget, so a flood does not lock it out", async () => {
    let now = 0;
    const { reviews, asked } = tableReviews({ good: 'prometheus' }, ['prometheus']);
    const cached = cachedAccessReviews(reviews, limits, () => now);
    assert.equal((await reviewScrape(cached, scrape('Bearer good'))).status, 200);
    for (const token of randomTokens(20)) await reviewScrape(cached, scrape(token));
    assert.equal(asked.authenticate, 3);
    now = limits.authenticatedMs; // its user is stale: asked again, with the budget spent
    assert.equal((await reviewScrape(cached, scrape('Bearer good'))).status, 200);
    assert.equal(asked.authenticate, 4);
    // Once forgotten (knownTokenMs), it is an unknown token like any other.
    now = limits.knownTokenMs + limits.authenticatedMs + 1;
    for (const token of randomTokens(20, 100)) await reviewScrape(cached, scrape(token));
    assert.equal((await reviewScrape(cached, scrape('Bearer good'))).status, 429);
  });

  it('keeps its budget when the clock is set back', async () => {
    let now = 3_600_000;
    const { reviews, asked } = tableReviews({}, []);
    const cached = cachedAccessReviews(reviews, limits, () => now);
    for (const token of randomTokens(3)) await reviewScrape(cached, scrape(token));
    now = 0; // an hour back: no refill, and no hour of debt either
    assert.equal((await reviewScrape(cached, scrape('Bearer late'))).status, 429);
    now = 2_000;
    assert.equal((await reviewScrape(cached, scrape('Bearer later'))).status, 401);
    assert.equal(asked.authenticate, 4);
  });

  it('keeps accepted tokens apart from rejected ones, which cannot push them out', async () => {
    const { reviews, asked } = tableReviews({ good: 'prometheus' }, ['prometheus']);
    const cached = cachedAccessReviews(
      reviews,
      { ...limits, unknownTokenReviews: { burst: 100, perSecond: 1 } },
      () => 0,
    );
    await reviewScrape(cached, scrape('Bearer good'));
    for (const token of randomTokens(50)) await reviewScrape(cached, scrape(token));
    assert.equal(asked.authenticate, 51);
    assert.equal((await reviewScrape(cached, scrape('Bearer good'))).status, 200);
    assert.equal(asked.authenticate, 51);
  });
});

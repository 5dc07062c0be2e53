import { createHash } from 'node:crypto';
import type { KubeClient } from '../../client/kube-client.ts';

/** Who a bearer token belongs to, as a TokenReview says. */
export interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The two questions a scrape raises, asked of the API server. */
export interface AccessReviews {
  /** The token's user, or undefined when the API server does not accept the token. */
  authenticate(token: string): Promise<ReviewedUser | undefined>;
  /** Whether `user` may `verb` the non-resource URL `path`. */
  authorize(user: ReviewedUser, path: string, verb: string): Promise<boolean>;
}

interface TokenReviewStatus {
  status?: { authenticated?: boolean; user?: ReviewedUser };
}
interface SubjectAccessReviewStatus {
  status?: { allowed?: boolean };
}

const REVIEW_TIMEOUT_MS = 10_000;

/** TokenReview and SubjectAccessReview through the operator's own client (RBAC: create on both). */
export function apiAccessReviews(client: KubeClient): AccessReviews {
  return {
    async authenticate(token) {
      const review = await client.request<TokenReviewStatus>(
        'POST',
        '/apis/authentication.k8s.io/v1/tokenreviews',
        {
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
          timeoutMs: REVIEW_TIMEOUT_MS,
        },
      );
      return review.status?.authenticated && review.status.user ? review.status.user : undefined;
    },
    async authorize(user, path, verb) {
      const review = await client.request<SubjectAccessReviewStatus>(
        'POST',
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        {
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: user.username,
              uid: user.uid,
              groups: user.groups,
              extra: user.extra,
              nonResourceAttributes: { path, verb },
            },
          },
          timeoutMs: REVIEW_TIMEOUT_MS,
        },
      );
      return review.status?.allowed === true;
    },
  };
}

/** A map with a time to live per entry and a bound on its size (the oldest entry goes first). */
class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private readonly maxEntries: number;
  private readonly now: () => number;
  constructor(maxEntries: number, now: () => number) {
    this.maxEntries = maxEntries;
    this.now = now;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

export interface ReviewLimits {
  /** How long an accepted token's user is remembered. */
  authenticatedMs: number;
  /** How long a rejected token is remembered, so a bad scraper cannot flood the API server. */
  unauthenticatedMs: number;
  /** How long an allow decision is remembered. */
  allowedMs: number;
  /** How long a deny decision is remembered: shorter, so a new binding takes effect soon. */
  deniedMs: number;
  /** Entries per cache (accepted tokens, rejected tokens, decisions); the oldest goes first. */
  maxEntries: number;
  /** How long a token once accepted is reviewed again outside `unknownTokenReviews`. */
  knownTokenMs: number;
  /**
   * TokenReviews of tokens not accepted within `knownTokenMs`: `burst` at once, then `perSecond`
   * (a token bucket). A request over it is answered 429 without a review, so random bearer tokens
   * cost the API server a bounded number of reviews.
   */
  unknownTokenReviews: { burst: number; perSecond: number };
}

/**
 * controller-runtime's filters.WithAuthenticationAndAuthorization: tokens a minute either way, an
 * allow five minutes, a deny 30 seconds (a new binding soon takes effect). A scraper every 15-30s
 * costs a review now and then, not one per scrape. Beyond controller-runtime: at most 10 reviews of
 * unknown tokens at once and one a second after that; a scraper's token, once accepted, is reviewed
 * again outside that budget for an hour (a projected token's default lifetime), so a flood of
 * random tokens does not lock out a known scraper.
 */
export const DEFAULT_REVIEW_LIMITS: ReviewLimits = {
  authenticatedMs: 60_000,
  unauthenticatedMs: 60_000,
  allowedMs: 5 * 60_000,
  deniedMs: 30_000,
  maxEntries: 1024,
  knownTokenMs: 3_600_000,
  unknownTokenReviews: { burst: 10, perSecond: 1 },
};

/** Thrown instead of a review when the budget for unknown tokens is spent. */
export class ReviewThrottled extends Error {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('too many requests with unknown bearer tokens');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** `burst` takes at once, refilled at `perSecond`. */
class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly burst: number;
  private readonly perSecond: number;
  private readonly now: () => number;
  constructor(limit: { burst: number; perSecond: number }, now: () => number) {
    this.burst = limit.burst;
    this.perSecond = limit.perSecond;
    this.now = now;
    this.tokens = limit.burst;
    this.last = now();
  }

  /** 0 when a take was granted, else the milliseconds until one will be. */
  take(): number {
    const now = this.now();
    // A wall clock set back refills nothing; it must not drain the bucket for as long.
    const elapsedMs = Math.max(0, now - this.last);
    this.tokens = Math.min(this.burst, this.tokens + (elapsedMs / 1000) * this.perSecond);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) / this.perSecond) * 1000);
  }
}

/**
 * Remembers the reviews' answers for a short while, and bounds the TokenReviews of tokens it does
 * not know. Tokens are keyed by their SHA-256, never kept as they are.
 */
export function cachedAccessReviews(
  reviews: AccessReviews,
  limits: ReviewLimits = DEFAULT_REVIEW_LIMITS,
  now: () => number = Date.now,
): AccessReviews & { readonly cached: number } {
  // Accepted tokens stay for knownTokenMs; their user is fresh for authenticatedMs. Rejected ones
  // apart, so that rejected tokens cannot push accepted ones out.
  const accepted = new ExpiringCache<{ user: ReviewedUser; reviewedAt: number }>(limits.maxEntries, now);
  const rejected = new ExpiringCache<true>(limits.maxEntries, now);
  const decisions = new ExpiringCache<boolean>(limits.maxEntries, now);
  const budget = new TokenBucket(limits.unknownTokenReviews, now);
  return {
    async authenticate(token) {
      const key = createHash('sha256').update(token).digest('hex');
      const known = accepted.get(key);
      if (known && now() - known.reviewedAt < limits.authenticatedMs) return known.user;
      if (rejected.get(key)) return undefined;
      if (!known) {
        const waitMs = budget.take();
        if (waitMs > 0) throw new ReviewThrottled(Math.ceil(waitMs / 1000));
      }
      const user = await reviews.authenticate(token);
      if (user) {
        rejected.delete(key);
        accepted.set(key, { user, reviewedAt: now() }, limits.knownTokenMs);
      } else {
        accepted.delete(key);
        rejected.set(key, true, limits.unauthenticatedMs);
      }
      return user;
    },
    async authorize(user, path, verb) {
      const key = JSON.stringify([user.username, user.uid, user.groups, user.extra, path, verb]);
      const known = decisions.get(key);
      if (known !== undefined) return known;
      const allowed = await reviews.authorize(user, path, verb);
      decisions.set(key, allowed, allowed ? limits.allowedMs : limits.deniedMs);
      return allowed;
    },
    get cached() {
      return accepted.size + rejected.size + decisions.size;
    },
  };
}

export type ScrapeDecision =
  | { status: 200 }
  | { status: 401 | 403 | 500; message: string }
  | { status: 429; message: string; retryAfterSeconds: number };

/**
 * controller-runtime's filters.WithAuthenticationAndAuthorization: the bearer token must pass a
 * TokenReview (else 401) and its user a SubjectAccessReview for the request's method, lower case,
 * on its path (else 403). A failed review is a 500, never an allow; a review the budget for
 * unknown tokens does not allow is a 429 with Retry-After.
 */
export async function reviewScrape(
  reviews: AccessReviews,
  request: { authorization: string | undefined; path: string; verb: string },
): Promise<ScrapeDecision> {
  const { authorization, path, verb } = request;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match?.[1]) return { status: 401, message: 'Unauthorized: a bearer token is required' };
  try {
    const user = await reviews.authenticate(match[1]);
    if (!user) return { status: 401, message: 'Unauthorized: the token was not accepted' };
    if (!(await reviews.authorize(user, path, verb))) {
      return { status: 403, message: `Forbidden: user "${user.username}" may not ${verb} path "${path}"` };
    }
    return { status: 200 };
  } catch (err) {
    if (err instanceof ReviewThrottled) {
      return {
        status: 429,
        message: `Too Many Requests: ${err.message}; retry in ${err.retryAfterSeconds}s`,
        retryAfterSeconds: err.retryAfterSeconds,
      };
    }
    return {
      status: 500,
      message: `could not review the request: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

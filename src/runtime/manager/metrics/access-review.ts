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

export interface CacheTimes {
  /** How long an accepted token's user is remembered. */
  authenticatedMs: number;
  /** How long a rejected token is remembered, so a bad scraper cannot flood the API server. */
  unauthenticatedMs: number;
  /** How long an allow decision is remembered. */
  allowedMs: number;
  /** How long a deny decision is remembered: shorter, so a new binding takes effect soon. */
  deniedMs: number;
  maxEntries: number;
}

/**
 * controller-runtime's filters.WithAuthenticationAndAuthorization: tokens a minute either way, an
 * allow five minutes, a deny 30 seconds (a new binding soon takes effect). A scraper every 15-30s
 * costs a review now and then, not one per scrape.
 */
export const DEFAULT_CACHE_TIMES: CacheTimes = {
  authenticatedMs: 60_000,
  unauthenticatedMs: 60_000,
  allowedMs: 5 * 60_000,
  deniedMs: 30_000,
  maxEntries: 1024,
};

/**
 * Remembers the reviews' answers for a short while. Tokens are keyed by their SHA-256, never kept
 * as they are.
 */
export function cachedAccessReviews(
  reviews: AccessReviews,
  times: CacheTimes = DEFAULT_CACHE_TIMES,
  now: () => number = Date.now,
): AccessReviews & { readonly cached: number } {
  const users = new ExpiringCache<ReviewedUser | null>(times.maxEntries, now);
  const decisions = new ExpiringCache<boolean>(times.maxEntries, now);
  return {
    async authenticate(token) {
      const key = createHash('sha256').update(token).digest('hex');
      const known = users.get(key);
      if (known !== undefined) return known ?? undefined;
      const user = await reviews.authenticate(token);
      users.set(key, user ?? null, user ? times.authenticatedMs : times.unauthenticatedMs);
      return user;
    },
    async authorize(user, path, verb) {
      const key = JSON.stringify([user.username, user.uid, user.groups, user.extra, path, verb]);
      const known = decisions.get(key);
      if (known !== undefined) return known;
      const allowed = await reviews.authorize(user, path, verb);
      decisions.set(key, allowed, allowed ? times.allowedMs : times.deniedMs);
      return allowed;
    },
    get cached() {
      return users.size + decisions.size;
    },
  };
}

export type ScrapeDecision = { status: 200 } | { status: 401 | 403 | 500; message: string };

/**
 * controller-runtime's filters.WithAuthenticationAndAuthorization: the bearer token must pass a
 * TokenReview (else 401) and its user a SubjectAccessReview for the request's method, lower case,
 * on its path (else 403). A failed review is a 500, never an allow.
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
    return {
      status: 500,
      message: `could not review the request: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

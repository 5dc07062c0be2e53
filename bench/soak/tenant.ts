import { nestsDeeperThan } from '../../src/apis/nesting.ts';
import { TOTAL_ANNOTATION_BYTES } from '../../src/apis/rules.ts';
import { ApiError } from '../../src/runtime/client/errors.ts';
import { apiVersionOf, CoreTypes, collectionPath } from '../../src/runtime/client/resource.ts';
import { errorMessage } from '../../src/runtime/log.ts';
import { sleep } from '../async.ts';
import type { MeasuredCluster } from '../cluster.ts';
import { log } from '../log.ts';
import type { SoakDeployment, SoakKinds } from './kinds.ts';
import { RefusingWebhook } from './webhook.ts';

export interface TenantSettings {
  /** Template changes in a row on one deployment, each round. */
  changesInARow: number;
  /** Quiet time between rounds. */
  pauseMs: number;
  /** The webhook's refusal. */
  refusalCharacters: number;
  /** Pods the namespace's ResourceQuota allows. */
  quotaPods: number;
}

/** What the hostile tenant did, and what became of its objects. */
export interface TenantFigures {
  rounds: number;
  templateChanges: number;
  /** Each object: "created", or the API server's refusal of it. */
  objects: Record<string, string>;
  /** Each object's conditions at the end: "Type=Status/Reason (message length)". */
  conditions: Record<string, string[]>;
  /** Pods the webhook refused, and the length of its refusal as a client saw it. */
  webhookCalls: number;
  refusalSeenCharacters: number | undefined;
  /** Requests of its own the API server refused or that failed, the first few. */
  failedRequests: string[];
}

/** The tenant's work so far: its template changes, and its pods the webhook refused (the operator's creates). */
export interface TenantWork {
  templateChanges: number;
  webhookCalls: number;
}

/** The tenant's work between two readings `ms` apart, and how long that was. */
export function workBetween(
  before: TenantWork,
  after: TenantWork,
  ms: number,
): TenantWork & { seconds: number } {
  return {
    templateChanges: after.templateChanges - before.templateChanges,
    webhookCalls: after.webhookCalls - before.webhookCalls,
    seconds: ms / 1000,
  };
}

const LABEL = 'soak.basicoperator.dev';

/** A deployment the tenant makes, of either kind: the same fields in both. */
type TenantDeployment = SoakDeployment & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string };
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: { containers: Array<{ name: string; image: string }> };
    };
  };
};
/** The deepest template the operator takes (MAX_TEMPLATE_DEPTH is 100) and one far beyond it. */
const DEPTHS = [99, 5000];
/** The longest BasicDeployment name admitted (its sets are <name>-<hash of up to 10>). */
const LONGEST_NAME = 242;
const INT32_MAX = 2147483647;

/**
 * A tenant that does what the schema lets it, all in its own namespace: template annotations as
 * large as admitted, templates nested as deep as the operator takes and far deeper, a name at the
 * length limit, 2^31-1 replicas under a ResourceQuota, a webhook that refuses its pods with a
 * 40 KiB message, and, until stopped, rounds of template changes in a row on one deployment and a
 * change of the large one. Its deployments are of the kinds given: BasicDeployments for the operator,
 * apps/v1 Deployments for the reference (kube-controller-manager), which drops the unknown fields
 * of the nested templates as apps/v1 does.
 */
export class HostileTenant {
  private readonly figures: TenantFigures = {
    rounds: 0,
    templateChanges: 0,
    objects: {},
    conditions: {},
    webhookCalls: 0,
    refusalSeenCharacters: undefined,
    failedRequests: [],
  };
  private readonly stopRounds = new AbortController();
  private rounds: Promise<void> | undefined;
  private webhook: RefusingWebhook | undefined;
  private readonly cluster: MeasuredCluster;
  private readonly namespace: string;
  private readonly settings: TenantSettings;
  private readonly kinds: SoakKinds;

  constructor(cluster: MeasuredCluster, namespace: string, settings: TenantSettings, kinds: SoakKinds) {
    this.cluster = cluster;
    this.namespace = namespace;
    this.settings = settings;
    this.kinds = kinds;
  }

  /** Its objects made (in its namespace, fresh), and its rounds of changes started. */
  async start(): Promise<void> {
    const { cluster, namespace: ns } = this;
    await cluster.freshNamespace(ns);
    await cluster.client.create(CoreTypes.ResourceQuota, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'pods', namespace: ns },
      spec: { hard: { pods: String(this.settings.quotaPods) } },
    });
    this.webhook = await RefusingWebhook.install(cluster, ns, 'quota', this.settings.refusalCharacters);
    this.figures.refusalSeenCharacters = await this.refusalSeen();

    await this.make('big', this.deployment('big', 1, bigAnnotations(0)));
    for (const depth of DEPTHS) await this.makeNested(`deep-${depth}`, depth);
    await this.make('long name', this.deployment('long-name-'.padEnd(LONGEST_NAME, 'x'), 1));
    await this.make('quota', this.deployment('quota', INT32_MAX));
    await this.make('churn', this.deployment('churn', 2));
    this.rounds = this.keepChanging();
  }

  /** The webhook server's process, once started. */
  get webhookPid(): number | undefined {
    return this.webhook?.pid;
  }

  work(): TenantWork {
    return { templateChanges: this.figures.templateChanges, webhookCalls: this.webhook?.calls ?? 0 };
  }

  async stop(): Promise<TenantFigures> {
    this.stopRounds.abort();
    await this.rounds;
    this.figures.webhookCalls = this.webhook?.calls ?? 0;
    const list = await this.cluster.client.list(this.kinds.deployments, { namespace: this.namespace });
    for (const d of list.items) {
      const name = d.metadata?.name ?? '';
      this.figures.conditions[name.length > 40 ? `${name.slice(0, 20)}... (${name.length})` : name] = (
        d.status?.conditions ?? []
      ).map((c) => `${c.type}=${c.status}/${c.reason} (${c.message?.length ?? 0})`);
    }
    return this.figures;
  }

  /** The webhook configuration gone (cluster-scoped: call this whatever happened). */
  async removeWebhook(): Promise<void> {
    await this.webhook?.remove();
  }

  private deployment(name: string, replicas: number, annotations?: Record<string, string>): TenantDeployment {
    const app = name.length > 63 ? 'long-name' : name;
    return {
      apiVersion: apiVersionOf(this.kinds.deployments),
      kind: this.kinds.deployments.kind,
      metadata: { name, namespace: this.namespace },
      spec: {
        replicas,
        selector: { matchLabels: { app } },
        template: {
          metadata: { labels: { app }, ...(annotations && { annotations }) },
          spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
        },
      },
    };
  }

  /** A template `depth` levels deep (as the operator counts from spec.template), by unknown fields of its pod spec. */
  private async makeNested(name: string, depth: number): Promise<void> {
    // template (1) > spec (2) > the nested field: `{}` is one level more, each {"x": ...} another.
    const levels = depth - 2;
    const nested = `${'{"x":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
    const body = JSON.stringify(this.deployment(name, 1)).replace(
      '"spec":{"containers"',
      `"spec":{"${LABEL}-nested":${nested},"containers"`,
    );
    const template = (JSON.parse(body) as TenantDeployment).spec.template;
    if (!nestsDeeperThan(template, depth - 1) || nestsDeeperThan(template, depth)) {
      throw new Error(`${name}: the template is not ${depth} levels deep`);
    }
    // JSON.stringify overflows the stack near 3,000 levels: the body is sent as written.
    await this.make(name, () =>
      this.cluster.client.request('POST', collectionPath(this.kinds.deployments, this.namespace), { body }),
    );
  }

  private async make(what: string, object: TenantDeployment | (() => Promise<unknown>)): Promise<void> {
    try {
      if (typeof object === 'function') await object();
      else await this.cluster.client.create(this.kinds.deployments, object);
      this.figures.objects[what] = 'created';
    } catch (err) {
      this.figures.objects[what] = `refused: ${describe(err)}`;
    }
    log(`  hostile: ${what}: ${this.figures.objects[what]}`);
  }

  /**
   * The webhook's refusal as a client sees it: a pod created (dry run) in the namespace, until the
   * API server has the webhook's configuration (it takes it from a watch, a moment after the create).
   */
  private async refusalSeen(): Promise<number | undefined> {
    const probe = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'refused', namespace: this.namespace, labels: { app: 'probe' } },
      spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    };
    for (let attempt = 0; attempt < 60; attempt++) {
      try {
        await this.cluster.client.create(CoreTypes.Pod, probe, { dryRun: true });
      } catch (err) {
        return errorMessage(err).length;
      }
      await sleep(500);
    }
    this.figures.failedRequests.push('the webhook let pods through for 30 s');
    return undefined;
  }

  private async keepChanging(): Promise<void> {
    const signal = this.stopRounds.signal;
    const patch = (name: string, annotations: Record<string, string>) =>
      this.cluster.client
        .patch(this.kinds.deployments, {
          namespace: this.namespace,
          name,
          patchType: 'merge',
          body: { spec: { template: { metadata: { annotations } } } },
        })
        .then(
          () => this.figures.templateChanges++,
          (err: unknown) => {
            if (this.figures.failedRequests.length < 10) this.figures.failedRequests.push(describe(err));
          },
        );
    while (!signal.aborted) {
      const round = ++this.figures.rounds;
      for (let i = 0; i < this.settings.changesInARow && !signal.aborted; i++) {
        await patch('churn', { [`${LABEL}/change`]: `${round}-${i}` });
      }
      if (!signal.aborted) await patch('big', bigAnnotations(round));
      await sleep(this.settings.pauseMs);
    }
  }
}

/**
 * Template annotations of TOTAL_ANNOTATION_BYTES characters in all, keys and values, as the CRD
 * counts them: four of about 64 Ki each, the first telling rounds apart.
 */
function bigAnnotations(round: number): Record<string, string> {
  const keys = [0, 1, 2, 3].map((i) => `${LABEL}/big-${i}`);
  const each = Math.floor((TOTAL_ANNOTATION_BYTES - keys.reduce((n, k) => n + k.length, 0)) / keys.length);
  return Object.fromEntries(
    keys.map((key, i) => [key, (i === 0 ? `${round}-` : '').padEnd(each, 'abcdefghijklmnopqrstuvwxyz')]),
  );
}

function describe(err: unknown): string {
  const code = err instanceof ApiError ? `${err.statusCode} ` : '';
  const message = errorMessage(err);
  return `${code}${message.slice(0, 200)}${message.length > 200 ? ` ... (${message.length} characters)` : ''}`;
}

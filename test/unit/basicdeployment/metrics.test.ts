import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { BASIC_DEPLOYMENT, type BasicDeployment, type Condition } from '../../../src/apis/index.ts';
import { registerBasicDeploymentMetrics } from '../../../src/controllers/basicdeployment/metrics.ts';

function deployment(name: string, progressing?: Pick<Condition, 'status' | 'reason'>): BasicDeployment {
  return {
    apiVersion: BASIC_DEPLOYMENT.apiVersion,
    kind: BASIC_DEPLOYMENT.kind,
    metadata: { name, namespace: 'ns' },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'a', image: 'i' }] } },
    },
    ...(progressing
      ? {
          status: {
            conditions: [
              {
                type: 'Progressing',
                message: '',
                lastTransitionTime: '2026-01-01T00:00:00Z',
                ...progressing,
              },
            ],
          },
        }
      : {}),
  };
}

async function scrape(registry: Registry): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const metric of await registry.getMetricsAsJSON())
    out[metric.name] = metric.values[0]?.value ?? Number.NaN;
  return out;
}

describe('BasicDeployment gauges', () => {
  it('count the deployments and those past their progress deadline, from the cache at each scrape', async () => {
    const registry = new Registry();
    let cached: BasicDeployment[] = [];
    registerBasicDeploymentMetrics(registry, () => cached);
    assert.deepEqual(await scrape(registry), {
      basic_operator_basicdeployments: 0,
      basic_operator_basicdeployments_progress_deadline_exceeded: 0,
    });

    cached = [
      deployment('new'),
      deployment('rolling', { status: 'True', reason: 'ReplicaSetUpdated' }),
      deployment('stuck', { status: 'False', reason: 'ProgressDeadlineExceeded' }),
      deployment('also-stuck', { status: 'False', reason: 'ProgressDeadlineExceeded' }),
      // Not a deadline: another reason for Progressing=False is not counted.
      deployment('other', { status: 'False', reason: 'SomethingElse' }),
    ];
    assert.deepEqual(await scrape(registry), {
      basic_operator_basicdeployments: 5,
      basic_operator_basicdeployments_progress_deadline_exceeded: 2,
    });

    cached = cached.slice(0, 3);
    assert.deepEqual(await scrape(registry), {
      basic_operator_basicdeployments: 3,
      basic_operator_basicdeployments_progress_deadline_exceeded: 1,
    });
  });
});

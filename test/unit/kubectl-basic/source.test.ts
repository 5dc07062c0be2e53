import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rootResource } from '../../../src/cli/kubectl-basic/kinds.ts';
import { AccessError, CORE, explainReadError } from '../../../src/cli/kubectl-basic/source.ts';
import { matchLabelsSelector } from '../../../src/cli/kubectl-basic/tree.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import { obj } from './recorded.ts';

describe('kubectl basic: reading', () => {
  it('says in one line what a failed read means', () => {
    const machines = rootResource('Machine');
    const cases: Array<[Error, string]> = [
      [
        explainReadError(new ApiError(403, 'Forbidden', 'GET ...: forbidden'), 'get', machines, 'shop'),
        'forbidden (403): your kubeconfig may not get machines.infra.basicoperator.dev in namespace "shop"',
      ],
      [
        explainReadError(new ApiError(403, 'Forbidden', 'x'), 'list', CORE.Pod, undefined),
        'forbidden (403): your kubeconfig may not list pods in any namespace (-A)',
      ],
      [
        explainReadError(new ApiError(401, 'Unauthorized', 'x'), 'list', CORE.Job, 'shop'),
        'not authenticated (401): the kubeconfig\'s credentials were refused: your kubeconfig may not list jobs.batch in namespace "shop"',
      ],
      [
        explainReadError(new ApiError(404, 'NotFound', 'x'), 'list', rootResource('BasicDeployment'), 'shop'),
        "the API server does not serve basicdeployments.apps.basicoperator.dev: basic-operator's CRDs are not installed in this cluster (kubectl apply -f config/crd/bases/, or install the chart)",
      ],
      [
        explainReadError(new Error('connect ECONNREFUSED 127.0.0.1:6443'), 'get', machines, 'shop'),
        'cannot reach the API server: connect ECONNREFUSED 127.0.0.1:6443',
      ],
    ];
    for (const [err, message] of cases) {
      assert.ok(err instanceof AccessError);
      assert.equal(err.message, message);
    }
  });

  it("lists a set's pods by its selector's matchLabels", () => {
    assert.equal(
      matchLabelsSelector(
        obj('BasicReplicaSet', 's', {
          spec: {
            selector: { matchLabels: { app: 'web', 'apps.basicoperator.dev/pod-template-hash': 'abc' } },
          },
        }),
      ),
      'app=web,apps.basicoperator.dev/pod-template-hash=abc',
    );
    assert.equal(
      matchLabelsSelector(obj('BasicReplicaSet', 's', { spec: { selector: { matchExpressions: [] } } })),
      undefined,
    );
  });
});

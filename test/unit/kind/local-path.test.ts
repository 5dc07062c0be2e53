import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HELPER_TIMEOUT_SECONDS, withHelperTimeout } from '../../../e2e/providers/kind/local-path.ts';

// kind's config.json as its storage manifest writes it (pkg/build/nodeimage/const_storage.go).
const KIND_CONFIG = `{
        "nodePathMap":[
        {
                "node":"DEFAULT_PATH_FOR_NON_LISTED_NODES",
                "paths":["/var/local-path-provisioner"]
        }
        ]
}`;

describe('local-path helper timeout', () => {
  it('sets cmdTimeoutSeconds and keeps the node paths', () => {
    const config = JSON.parse(withHelperTimeout(KIND_CONFIG)) as Record<string, unknown>;
    assert.equal(config.cmdTimeoutSeconds, HELPER_TIMEOUT_SECONDS);
    assert.ok(HELPER_TIMEOUT_SECONDS < 120, 'shorter than the provisioner default');
    assert.deepEqual(config.nodePathMap, JSON.parse(KIND_CONFIG).nodePathMap);
  });

  it('replaces a timeout already set', () => {
    const config = JSON.parse(withHelperTimeout('{"cmdTimeoutSeconds": 120}', 30)) as Record<string, unknown>;
    assert.equal(config.cmdTimeoutSeconds, 30);
  });
});

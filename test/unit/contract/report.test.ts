import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CHECK_NAMES,
  type CheckResult,
  conforms,
  fail,
  formatResult,
  formatSummary,
  pass,
  skip,
} from '../../../e2e/contract/report.ts';

describe('contract-test report', () => {
  it('prints one line per check: status, the check in a column, what was seen', () => {
    assert.equal(
      formatResult(pass('crd-found', 'CRD podmachines.infra.basicoperator.dev')),
      'PASS  crd-found                CRD podmachines.infra.basicoperator.dev',
    );
    assert.equal(
      formatResult(fail('stops-on-request', 'status.stopped did not become true\n  last seen: Ready=True')),
      'FAIL  stops-on-request         status.stopped did not become true last seen: Ready=True',
    );
    assert.equal(
      formatResult(skip('stays-stopped', 'needs stops-on-request')),
      'SKIP  stays-stopped            needs stops-on-request',
    );
  });

  it('aligns the details of every check', () => {
    const columns = CHECK_NAMES.map((check) => formatResult(pass(check, 'x')).indexOf(' x'));
    assert.equal(new Set(columns).size, 1);
  });

  it('sums up, and conforms only when every check ran and passed', () => {
    const passed: CheckResult[] = CHECK_NAMES.map((check) => pass(check, 'ok'));
    assert.ok(conforms(passed));
    assert.equal(
      formatSummary(passed),
      `conforms to the Machine infrastructure contract v1: ${CHECK_NAMES.length} passed, 0 failed, 0 skipped`,
    );
    const broken = [
      pass('crd-found', 'ok'),
      fail('crd-namespaced', 'scope is Cluster'),
      skip('deleted', 'needs x'),
    ];
    assert.ok(!conforms(broken));
    assert.equal(
      formatSummary(broken),
      'does NOT conform to the Machine infrastructure contract v1: 1 passed, 1 failed, 1 skipped',
    );
    assert.ok(!conforms([]), 'no result is no conformance');
  });
});

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { load } from 'js-yaml';
import { run } from '../../../e2e/providers/exec.ts';
import { ensureGoTool } from '../../../e2e/providers/local/go-tools.ts';
import { REPO_ROOT } from '../../unit/packaging/manifests.ts';

/**
 * trivy's configuration scanner on what users install: the chart (trivy renders it with its default
 * values), config/ (kustomize's inputs, each object as written) and the Dockerfile. A HIGH or
 * CRITICAL finding fails unless .trivyignore.yaml lists it with the reason it stands (`statement`);
 * the same file works by hand: `trivy config --ignorefile .trivyignore.yaml charts`. trivy is built
 * from the Go module proxy into the tools cache (e2e/providers/local/go-tools.ts) and scans with the
 * checks built into it, offline. It needs no cluster.
 */

const SCANNED = ['charts', 'config', 'Dockerfile'] as const;
/** Files each scan must have checked, so that a scan that read nothing cannot pass. */
const MUST_CHECK: Record<(typeof SCANNED)[number], readonly string[]> = {
  charts: [
    'basic-operator/templates/deployment.yaml',
    'basic-operator/templates/clusterrole.yaml',
    'basic-operator/templates/networkpolicy.yaml',
  ],
  config: ['manager/manager.yaml', 'rbac/role.yaml', 'manager/network_policy.yaml'],
  Dockerfile: ['Dockerfile'],
};
const BLOCKING = new Set(['HIGH', 'CRITICAL']);

interface Misconfiguration {
  ID: string;
  AVDID?: string;
  Title: string;
  Severity: string;
  Status: string;
  Message?: string;
}
interface Report {
  Results?: Array<{
    Target: string;
    MisconfSummary?: { Successes: number; Failures: number };
    Misconfigurations?: Misconfiguration[];
  }>;
}
interface Exception {
  id: string;
  paths?: string[];
  statement?: string;
}

interface Finding {
  scanned: string;
  target: string;
  id: string;
  severity: string;
  title: string;
  message: string;
}

/** `id` as trivy names it in a report or an ignore file (KSV-0014, AVD-KSV-0014, KSV014): one key. */
function checkKey(id: string): string {
  const match = /^(?:AVD-)?([A-Z]+)-?0*(\d+)$/.exec(id);
  return match ? `${match[1]}-${Number(match[2])}` : id;
}

function readExceptions(): Exception[] {
  const file = load(readFileSync(join(REPO_ROOT, '.trivyignore.yaml'), 'utf8')) as {
    misconfigurations?: Exception[];
  } | null;
  return file?.misconfigurations ?? [];
}

/** Where a finding is, for people: relative to the repository. */
function repoPath(scanned: string, target: string): string {
  return target === scanned ? target : `${scanned}/${target}`;
}

/** The exception that covers `finding`: its id, and its path as trivy matches it (the target's). */
function excepted(finding: Finding, exceptions: readonly Exception[]): Exception | undefined {
  return exceptions.find(
    (e) =>
      checkKey(e.id) === checkKey(finding.id) &&
      (!e.paths || e.paths.some((path) => finding.target === path || finding.target.startsWith(`${path}/`))),
  );
}

describe('trivy config finds no HIGH or CRITICAL misconfiguration in the chart and config/', () => {
  let trivy = '';
  let cache = '';
  let findings: Finding[] = [];
  /** Files checked, by scan, with how many checks passed. */
  const checked = new Map<string, Map<string, number>>();

  before(
    async () => {
      trivy = await ensureGoTool('trivy');
      cache = mkdtempSync(join(tmpdir(), 'basic-operator-trivy-'));
      for (const scanned of SCANNED) {
        const result = await run(
          trivy,
          [
            'config',
            '--quiet',
            '--format',
            'json',
            '--cache-dir',
            cache,
            '--skip-check-update',
            '--skip-version-check',
            '--disable-telemetry',
            scanned,
          ],
          { cwd: REPO_ROOT, timeoutMs: 300_000 },
        );
        assert.equal(result.code, 0, `trivy config ${scanned}:\n${result.stderr}`);
        const report = JSON.parse(result.stdout) as Report;
        checked.set(
          scanned,
          new Map((report.Results ?? []).map((r) => [r.Target, r.MisconfSummary?.Successes ?? 0])),
        );
        for (const target of report.Results ?? []) {
          for (const m of target.Misconfigurations ?? []) {
            if (m.Status !== 'FAIL') continue;
            findings.push({
              scanned,
              target: target.Target,
              id: m.ID,
              severity: m.Severity,
              title: m.Title,
              message: m.Message ?? '',
            });
          }
        }
      }
      const bySeverity = new Map<string, number>();
      for (const f of findings) bySeverity.set(f.severity, (bySeverity.get(f.severity) ?? 0) + 1);
      process.stderr.write(
        `[trivy] ${findings.length} findings: ${[...bySeverity].map(([s, n]) => `${s} ${n}`).join(', ') || 'none'}\n`,
      );
    },
    { timeout: 60 * 60_000 },
  );
  after(() => {
    if (cache) rmSync(cache, { recursive: true, force: true });
    findings = [];
  });

  it('checks the rendered chart, the kustomize objects and the Dockerfile', () => {
    for (const scanned of SCANNED) {
      for (const file of MUST_CHECK[scanned]) {
        const passed = checked.get(scanned)?.get(file) ?? 0;
        assert.ok(passed > 0, `trivy config ${scanned} checked nothing in ${file}`);
      }
    }
  });

  it('has each exception written down with its reason', () => {
    for (const exception of readExceptions()) {
      assert.ok(exception.id, `an exception without an id: ${JSON.stringify(exception)}`);
      assert.ok(
        (exception.statement ?? '').trim().length >= 20,
        `${exception.id}: say why it stands, in statement`,
      );
    }
  });

  it('finds nothing HIGH or CRITICAL that is not an exception, and no exception that no longer applies', () => {
    const exceptions = readExceptions();
    const blocking = findings.filter((f) => BLOCKING.has(f.severity) && !excepted(f, exceptions));
    assert.deepEqual(
      blocking.map((f) => `${f.severity} ${f.id} ${repoPath(f.scanned, f.target)}: ${f.title}: ${f.message}`),
      [],
    );
    const stale = exceptions.filter((e) => !findings.some((f) => excepted(f, [e])));
    assert.deepEqual(
      stale.map((e) => e.id),
      [],
      'exceptions that match no finding: remove them',
    );
  });
});

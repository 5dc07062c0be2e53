import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_SETTLE_SECONDS,
  DEFAULT_TIMEOUT_SECONDS,
  parseArgs,
  parseKind,
} from '../../../e2e/contract/args.ts';

describe('contract-test arguments', () => {
  it('needs only --kind; the rest has defaults', () => {
    assert.deepEqual(parseArgs(['--kind', 'PodMachine.infra.basicoperator.dev']), {
      options: {
        kind: 'PodMachine.infra.basicoperator.dev',
        timeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
        settleSeconds: DEFAULT_SETTLE_SECONDS,
      },
    });
  });

  it('reads every option, as `--flag value` or `--flag=value`', () => {
    assert.deepEqual(
      parseArgs([
        '--kind=StatefulSetMachine.examples.basicoperator.dev',
        '--version',
        'v1alpha1',
        '--sample=examples/statefulset-provider/samples/statefulsetmachine.yaml',
        '--namespace',
        'providers',
        '--timeout',
        '300',
        '--settle=2.5',
        '--kubeconfig',
        '/tmp/kubeconfig',
      ]),
      {
        options: {
          kind: 'StatefulSetMachine.examples.basicoperator.dev',
          version: 'v1alpha1',
          sample: 'examples/statefulset-provider/samples/statefulsetmachine.yaml',
          namespace: 'providers',
          timeoutSeconds: 300,
          settleSeconds: 2.5,
          kubeconfig: '/tmp/kubeconfig',
        },
      },
    );
  });

  it('answers --help and -h with the usage, whatever else is given', () => {
    assert.deepEqual(parseArgs(['--help']), { help: true });
    assert.deepEqual(parseArgs(['--kind', 'X.y.z', '-h']), { help: true });
  });

  it('says what is wrong with bad input', () => {
    const cases: [string[], string][] = [
      [[], '--kind <Kind>.<group> is required'],
      [['--kind'], '--kind needs a value'],
      [['--kind', '--timeout', '5'], '--kind needs a value'],
      [['--kind='], '--kind needs a value'],
      [
        ['--kind', 'PodMachine'],
        '--kind "PodMachine" is not <Kind>.<group> (e.g. PodMachine.infra.basicoperator.dev)',
      ],
      [
        ['--kind', 'PodMachine.infra'],
        '--kind "PodMachine.infra" is not <Kind>.<group> (e.g. PodMachine.infra.basicoperator.dev)',
      ],
      [['--kind', 'A.b.c', '--kind', 'D.e.f'], '--kind is given twice'],
      [['--kind', 'A.b.c', '--timeout', '0'], '--timeout must be a positive number of seconds, not "0"'],
      [['--kind', 'A.b.c', '--timeout', '2m'], '--timeout must be a positive number of seconds, not "2m"'],
      [['--kind', 'A.b.c', '--settle', '-1'], '--settle must be a positive number of seconds, not "-1"'],
      [['--kind', 'A.b.c', '--watch'], 'unknown option --watch'],
      [['--kind', 'A.b.c', '--wait=5'], 'unknown option --wait'],
      [['--kind', 'A.b.c', 'extra'], 'unexpected argument "extra"'],
    ];
    for (const [argv, error] of cases) assert.deepEqual(parseArgs(argv), { error }, argv.join(' '));
  });
});

describe('parseKind', () => {
  it('splits at the first dot', () => {
    assert.deepEqual(parseKind('PodMachine.infra.basicoperator.dev'), {
      kind: 'PodMachine',
      group: 'infra.basicoperator.dev',
    });
    assert.deepEqual(parseKind('Vm.example.com'), { kind: 'Vm', group: 'example.com' });
  });

  it('refuses a group without a dot, an upper-case group and an empty kind', () => {
    for (const text of [
      'PodMachine.',
      '.infra.basicoperator.dev',
      'PodMachine.Infra.dev',
      'Pod-Machine.a.b',
    ]) {
      assert.ok('error' in parseKind(text), text);
    }
  });
});

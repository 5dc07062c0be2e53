import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseArgs, UsageError } from '../../../src/cli/kubectl-basic/args.ts';
import { resolveKind } from '../../../src/cli/kubectl-basic/kinds.ts';

function invocation(args: string[]) {
  const parsed = parseArgs(args);
  assert.equal(parsed.help, false);
  if (parsed.help) throw new Error('unreachable');
  return parsed.invocation;
}

describe('kubectl basic: arguments', () => {
  it('reads KIND/NAME and the flags, in any order and in kubectl forms', () => {
    assert.deepEqual(
      invocation(['tree', 'bd/web', '-n', 'shop', '-o', 'json', '--kubeconfig', '/k', '--context=c']),
      {
        command: 'tree',
        kind: 'BasicDeployment',
        name: 'web',
        namespace: 'shop',
        allNamespaces: false,
        output: 'json',
        kubeconfig: '/k',
        context: 'c',
      },
    );
    const short = invocation(['-nshop', 'why', 'machine', 'db', '-ojson']);
    assert.equal(short.namespace, 'shop');
    assert.equal(short.output, 'json');
    assert.equal(short.kind, 'Machine');
    assert.equal(short.name, 'db');
    assert.equal(invocation(['tree', 'vb', '-A']).name, undefined);
    assert.equal(invocation(['tree', 'machines/x', '--all-namespaces']).allNamespaces, true);
  });

  it('answers help without a command', () => {
    assert.deepEqual(parseArgs([]), { help: true });
    assert.deepEqual(parseArgs(['why', '--help']), { help: true });
  });

  it('refuses what it cannot do, saying what to type', () => {
    const cases: Array<[string[], RegExp]> = [
      [['get', 'bd/x'], /unknown command "get"/],
      [['tree'], /needs KIND\/NAME/],
      [['tree', 'deployments/x'], /unknown kind "deployments"/],
      [['why', 'bd'], /give KIND\/NAME/],
      [['why', 'bd', '-A'], /give KIND\/NAME/],
      [['tree', 'bd/'], /name after "\/" is empty/],
      [['tree', 'bd/x', '-o', 'yaml'], /-o yaml/],
      [['tree', 'bd/x', '-n'], /-n needs a value/],
      [['tree', 'bd/x', '-A', '-n', 'a'], /exclude each other/],
      [['tree', 'bd/x', '--watch'], /unknown flag --watch/],
      [['tree', 'bd/x', 'extra'], /unexpected argument "extra"/],
    ];
    for (const [args, message] of cases) {
      assert.throws(
        () => parseArgs(args),
        (err: unknown) => err instanceof UsageError && message.test(err.message),
        args.join(' '),
      );
    }
  });

  it('knows each kind by its name, plural, short names and full resource name', () => {
    const expected: Record<string, string> = {
      BasicDeployment: 'BasicDeployment',
      basicdeployments: 'BasicDeployment',
      bd: 'BasicDeployment',
      bdeploy: 'BasicDeployment',
      brs: 'BasicReplicaSet',
      basicreplicaset: 'BasicReplicaSet',
      machine: 'Machine',
      'machines.infra.basicoperator.dev': 'Machine',
      podmachines: 'PodMachine',
      vb: 'VolumeBackup',
      VolumeBackups: 'VolumeBackup',
    };
    for (const [text, kind] of Object.entries(expected)) assert.equal(resolveKind(text), kind, text);
    assert.equal(resolveKind('pods'), undefined);
    assert.equal(resolveKind('machines.apps.basicoperator.dev'), undefined);
  });
});

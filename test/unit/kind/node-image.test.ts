import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { load } from 'js-yaml';
import { clusterConfig } from '../../../e2e/providers/kind/cluster-config.ts';
import { defaultCniManifest } from '../../../e2e/providers/kind/node/cni-manifest.ts';
import { normalized } from '../../../e2e/providers/kind/node/node-image.ts';
import { goConcatenatedConstant } from '../../../e2e/providers/kind/node/sources.ts';

describe('the locally built kind node image', () => {
  it("reads a manifest kind assembles from raw strings and constants (const_storage.go's shape)", () => {
    const source = [
      'const storageHelperImage = "docker.io/kindest/local-path-helper:v1"',
      'const defaultStorageManifest = `',
      'kind: Namespace',
      '---',
      'image: ` + storageHelperImage + `',
      'args: [x]',
      '`',
      '',
      'func other() {}',
    ].join('\n');
    assert.equal(
      goConcatenatedConstant(source, 'defaultStorageManifest'),
      '\nkind: Namespace\n---\nimage: docker.io/kindest/local-path-helper:v1\nargs: [x]\n',
    );
    assert.throws(() => goConcatenatedConstant(source, 'missing'), /no constant missing/);
  });

  it('writes a CNI DaemonSet kind templates with the pod subnet, tolerating every taint', () => {
    const manifest = defaultCniManifest('docker.io/kindest/local-path-helper:v1');
    assert.ok(
      manifest.startsWith('# would you kindly template this file'),
      'kind only templates marked files',
    );
    // What kind's template step does with it.
    const templated = manifest.replaceAll('{{ .PodSubnet }}', '10.244.0.0/16');
    const daemonSet = load(templated) as {
      kind: string;
      spec: {
        template: {
          spec: {
            hostNetwork: boolean;
            tolerations: Array<{ operator: string }>;
            containers: Array<{ image: string; command: string[] }>;
          };
        };
      };
    };
    assert.equal(daemonSet.kind, 'DaemonSet');
    const pod = daemonSet.spec.template.spec;
    assert.equal(pod.hostNetwork, true, 'it runs before the pod network exists');
    assert.deepEqual(pod.tolerations, [{ operator: 'Exists' }], 'it runs on a NotReady node');
    const script = pod.containers[0]?.command[2] ?? '';
    const conflist = JSON.parse(script.slice(script.indexOf('{'), script.lastIndexOf('}') + 1)) as {
      plugins: Array<{ type: string; ipMasq?: boolean; ipam?: { ranges: Array<Array<{ subnet: string }>> } }>;
    };
    assert.deepEqual(
      conflist.plugins.map((p) => p.type),
      ['ptp', 'portmap'],
    );
    assert.equal(conflist.plugins[0]?.ipMasq, true);
    assert.equal(conflist.plugins[0]?.ipam?.ranges[0]?.[0]?.subnet, '10.244.0.0/16');
  });

  it('names images the way containerd lists them', () => {
    assert.equal(normalized('busybox:1.36'), 'docker.io/library/busybox:1.36');
    assert.equal(normalized('kindest/node:v1'), 'docker.io/kindest/node:v1');
    assert.equal(normalized('registry.k8s.io/pause:3.10'), 'registry.k8s.io/pause:3.10');
    assert.equal(normalized('basic-operator.local/busybox'), 'basic-operator.local/busybox:latest');
    assert.equal(normalized('localhost:5000/x:1'), 'localhost:5000/x:1');
  });

  it('lets the kubelet run on a cgroup v1 host, with the node image when one is given', () => {
    const plain = load(clusterConfig({})) as {
      nodes: Array<{ image?: string }>;
      kubeadmConfigPatches: string[];
    };
    assert.equal(plain.nodes.length, 1);
    assert.equal(plain.nodes[0]?.image, undefined);
    assert.match(plain.kubeadmConfigPatches[0] ?? '', /failCgroupV1: false/);
    const local = load(clusterConfig({ nodeImage: 'basic-operator.local/kind-node:v1.36.3' })) as {
      nodes: Array<{ image?: string }>;
    };
    assert.equal(local.nodes[0]?.image, 'basic-operator.local/kind-node:v1.36.3');
  });
});

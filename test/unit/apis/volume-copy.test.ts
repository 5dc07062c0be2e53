// Who a copy pod runs as: root where admission admits it, else the workload's user and groups.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type CopyPrivilege,
  copyIdentityOf,
  copyPrivilege,
  describeCopyPrivilege,
  VOLUME_COPY_USER,
  volumeCopyPodTemplate,
} from '../../../src/apis/index.ts';
import { restrictedViolations } from '../../support/pod-security.ts';

const REFUSAL =
  'pods "x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)';
const POSTGRES = { runAsUser: 999, runAsGroup: 999, fsGroup: 999 };

function podOf(privilege: CopyPrivilege) {
  return volumeCopyPodTemplate({
    image: 'op:1',
    sourceClaim: 'web-data',
    targetClaim: 'web-1-data',
    labels: {},
    privilege,
  }).spec!;
}

describe('copyPrivilege', () => {
  it('is root wherever admission admits a root copy, whoever the workload is', () => {
    assert.deepEqual(copyPrivilege(undefined, POSTGRES), { mode: 'root' });
    assert.deepEqual(copyPrivilege('pods "x" is forbidden: exceeded quota: q', POSTGRES), { mode: 'root' });
  });

  it("refused by Pod Security: the workload's user, group and fsGroup, with the level", () => {
    assert.deepEqual(copyPrivilege(REFUSAL, POSTGRES), {
      mode: 'nonroot',
      uid: 999,
      gid: 999,
      fsGroup: 999,
      level: 'restricted',
    });
    assert.deepEqual(copyPrivilege(REFUSAL, { runAsUser: 1001, runAsGroup: 0 }), {
      mode: 'nonroot',
      uid: 1001,
      gid: 0,
      level: 'restricted',
    });
  });

  it('refused by Pod Security, the workload unknown: uid and gid 65532, no fsGroup', () => {
    assert.deepEqual(copyPrivilege(REFUSAL, undefined), {
      mode: 'nonroot',
      uid: VOLUME_COPY_USER,
      gid: VOLUME_COPY_USER,
      level: 'restricted',
    });
  });
});

describe('copyIdentityOf: how the pod of a podSecurityContext runs', () => {
  it('its runAsUser, runAsGroup and fsGroup, each 65532 when not named', () => {
    assert.deepEqual(copyIdentityOf({}), { runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 });
    assert.deepEqual(copyIdentityOf({ podSecurityContext: { runAsUser: 999, runAsGroup: 999 } }), {
      runAsUser: 999,
      runAsGroup: 999,
      fsGroup: 65532,
    });
    assert.deepEqual(
      copyIdentityOf({
        podSecurityContext: { runAsUser: 999, runAsGroup: 999, fsGroup: 999, runAsNonRoot: true },
      }),
      POSTGRES,
    );
  });

  it('none for a pod that runs as root', () => {
    assert.equal(copyIdentityOf({ podSecurityContext: { runAsUser: 0 } }), undefined);
    assert.equal(
      copyIdentityOf({ podSecurityContext: { runAsUser: 999 }, securityContext: { runAsUser: 0 } }),
      undefined,
    );
  });

  it("the container's runAsUser and runAsGroup win over the pod's, as the kubelet applies them; fsGroup is the pod's", () => {
    assert.deepEqual(
      copyIdentityOf({
        podSecurityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 999 },
        securityContext: { runAsUser: 999, runAsGroup: 998 },
      }),
      { runAsUser: 999, runAsGroup: 998, fsGroup: 999 },
    );
    assert.deepEqual(copyIdentityOf({ securityContext: { runAsUser: 999 } }), {
      runAsUser: 999,
      runAsGroup: 65532,
      fsGroup: 65532,
    });
  });
});

describe('volumeCopyPodTemplate as the workload', () => {
  it("runs as the workload's user and group, meets restricted, and gives the fsGroup to the target only", () => {
    const pod = podOf(copyPrivilege(REFUSAL, POSTGRES));
    assert.deepEqual(pod.securityContext, {
      runAsNonRoot: true,
      runAsUser: 999,
      runAsGroup: 999,
      fsGroup: 999,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(pod.containers[0]?.securityContext, {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
    });
    // The kubelet applies no fsGroup to a volume mounted read-only: the source's groups stay.
    assert.deepEqual(pod.volumes?.[0], {
      name: 'source',
      persistentVolumeClaim: { claimName: 'web-data', readOnly: true },
    });
    assert.deepEqual(restrictedViolations(pod), []);
  });

  it('as 65532 without fsGroup when the workload is unknown', () => {
    const pod = podOf(copyPrivilege(REFUSAL, undefined));
    assert.equal(pod.securityContext?.runAsUser, 65532);
    assert.equal(pod.securityContext?.runAsGroup, 65532);
    assert.equal(pod.securityContext?.fsGroup, undefined);
    assert.equal(pod.securityContext?.fsGroupChangePolicy, undefined);
    assert.deepEqual(restrictedViolations(pod), []);
  });
});

describe('describeCopyPrivilege', () => {
  it('says who the copy runs as', () => {
    assert.equal(describeCopyPrivilege({ mode: 'root' }), 'as root');
    assert.equal(describeCopyPrivilege(copyPrivilege(REFUSAL, POSTGRES)), 'as uid 999, gid 999, fsGroup 999');
    assert.equal(describeCopyPrivilege(copyPrivilege(REFUSAL, undefined)), 'as uid 65532, gid 65532');
  });
});

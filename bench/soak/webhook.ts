import { type ChildProcess, fork } from 'node:child_process';
import type { V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { resourceOf } from '../../src/runtime/client/resource.ts';
import { selfSignedMaterial } from '../../src/runtime/manager/metrics/tls-material.ts';
import type { MeasuredCluster } from '../cluster.ts';

const WEBHOOK_CONFIGURATION = resourceOf<V1ValidatingWebhookConfiguration>()({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
});

const NAME = 'basic-operator-soak-refuse-pods';

/**
 * A validating webhook that refuses every pod created in one namespace (but those labelled
 * app=`exemptApp`) with a message of `messageCharacters`: served by a child process
 * (webhook-server.ts, so its work is not timed with the soak's) over HTTPS on 127.0.0.1 (the local
 * control plane runs on this machine) with a self-signed certificate the configuration trusts.
 * Cluster-scoped: `remove()` must run, also when the soak fails.
 */
export class RefusingWebhook {
  /** Admission reviews answered. */
  calls = 0;
  readonly message: string;
  private readonly server: ChildProcess;
  private readonly cluster: MeasuredCluster;

  private constructor(cluster: MeasuredCluster, server: ChildProcess, message: string) {
    this.cluster = cluster;
    this.server = server;
    this.message = message;
  }

  /** The server's process, whose CPU the soak counts. */
  get pid(): number | undefined {
    return this.server.pid;
  }

  static async install(
    cluster: MeasuredCluster,
    namespace: string,
    exemptApp: string,
    messageCharacters: number,
  ): Promise<RefusingWebhook> {
    const sentence = `pods in namespace ${namespace} are refused by the soak's hostile tenant; `;
    const message = sentence
      .repeat(Math.ceil(messageCharacters / sentence.length))
      .slice(0, messageCharacters);
    const tls = selfSignedMaterial();
    const server = fork(new URL('./webhook-server.ts', import.meta.url), [], { stdio: 'inherit' });
    const webhook = new RefusingWebhook(cluster, server, message);
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.once('exit', (code) =>
        reject(new Error(`the webhook's server exited (${code}) before listening`)),
      );
      server.on('message', (m: { port?: number; calls?: number }) => {
        if (m.port !== undefined) resolve(m.port);
        if (m.calls !== undefined) webhook.calls = m.calls;
      });
      server.send({ cert: tls.cert, key: tls.key, message });
    });
    await deleteConfiguration(cluster);
    await cluster.client.create(WEBHOOK_CONFIGURATION, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: NAME },
      webhooks: [
        {
          name: 'refuse-pods.soak.basicoperator.dev',
          clientConfig: {
            url: `https://127.0.0.1:${port}/refuse`,
            caBundle: Buffer.from(tls.cert).toString('base64'),
          },
          rules: [
            {
              operations: ['CREATE'],
              apiGroups: [''],
              apiVersions: ['v1'],
              resources: ['pods'],
              scope: 'Namespaced',
            },
          ],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
          objectSelector: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: [exemptApp] }] },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          failurePolicy: 'Fail',
          timeoutSeconds: 5,
        },
      ],
    });
    return webhook;
  }

  /** Deletes the configuration and stops serving. */
  async remove(): Promise<void> {
    await deleteConfiguration(this.cluster);
    this.server.kill();
  }
}

/** The configuration gone, if there is one (of this run, or left by an earlier one). */
const deleteConfiguration = (cluster: MeasuredCluster) =>
  cluster.client.delete(WEBHOOK_CONFIGURATION, undefined, NAME).catch(() => undefined);

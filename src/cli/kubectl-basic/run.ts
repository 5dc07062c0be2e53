// `kubectl basic`: parse, connect with the user's kubeconfig, read, print; returns the exit code.
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../runtime/client/kube-client.ts';
import type { Unstructured } from '../../runtime/client/object.ts';
import { type Invocation, parseArgs, UsageError } from './args.ts';
import { kindNames, rootResource } from './kinds.ts';
import { renderFinding, renderTrees, treeToJson } from './render.ts';
import { AccessError, ClusterSource, type ObjectSource } from './source.ts';
import { jsonText, printable } from './terminal.ts';
import { buildTree } from './tree.ts';
import { WhyWalk } from './why.ts';

export const EXIT_READY = 0;
export const EXIT_BLOCKED = 1;
export const EXIT_ERROR = 2;

export const USAGE = `kubectl basic: the tree of basic-operator's objects, and why one is not Ready.

Usage:
  kubectl basic tree KIND/NAME [-n NS | -A] [-o json]
  kubectl basic tree KIND -A [-o json]          every object of the kind, in every namespace
  kubectl basic why KIND/NAME [-n NS] [-o json]

Kinds: ${kindNames().join('; ')}
Flags: -n/--namespace NS, -A/--all-namespaces, -o/--output json, --kubeconfig FILE, --context NAME
Exit codes: 0 Ready (why) or printed (tree); 1 blocked (why); 2 usage, access or missing-object errors.
See docs/kubectl-plugin.md.`;

export interface Output {
  out(text: string): void;
  err(text: string): void;
}

/** The user's kubeconfig as kubectl reads it: --kubeconfig, else $KUBECONFIG, else ~/.kube/config. */
function connect(invocation: Invocation): { client: KubeClient; namespace: string } {
  const kc = new KubeConfig();
  try {
    if (invocation.kubeconfig) kc.loadFromFile(invocation.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    throw new AccessError(`cannot load the kubeconfig: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (invocation.context) {
    if (!kc.getContextObject(invocation.context)) {
      throw new AccessError(`the kubeconfig has no context "${invocation.context}"`);
    }
    kc.setCurrentContext(invocation.context);
  }
  if (!kc.getCurrentCluster()) throw new AccessError('the kubeconfig has no current context with a cluster');
  const namespace =
    invocation.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  return { client: new KubeClient(kc, { userAgent: 'kubectl-basic' }), namespace };
}

async function roots(
  source: ObjectSource,
  invocation: Invocation,
  namespace: string,
): Promise<Unstructured[]> {
  const type = rootResource(invocation.kind);
  if (invocation.allNamespaces) {
    const all = await source.list(type, undefined);
    const chosen = invocation.name ? all.filter((o) => o.metadata?.name === invocation.name) : all;
    if (chosen.length === 0) {
      throw new AccessError(
        `no ${invocation.kind}${invocation.name ? ` named "${invocation.name}"` : ''} in any namespace`,
      );
    }
    return chosen.sort((a, b) =>
      `${a.metadata?.namespace}/${a.metadata?.name}`.localeCompare(
        `${b.metadata?.namespace}/${b.metadata?.name}`,
      ),
    );
  }
  const name = invocation.name ?? '';
  const obj = await source.get(type, namespace, name);
  if (!obj) throw new AccessError(`${invocation.kind} "${name}" not found in namespace "${namespace}"`);
  return [obj];
}

/** Runs one command against `source`; the namespace is the one to read in (unless -A). */
export async function execute(
  invocation: Invocation,
  source: ObjectSource,
  namespace: string,
  output: Output,
  now: number,
): Promise<number> {
  const objects = await roots(source, invocation, namespace);
  const trees = await Promise.all(objects.map((o) => buildTree(source, invocation.kind, o)));
  if (invocation.command === 'tree') {
    if (invocation.output === 'json') {
      output.out(jsonText({ items: trees.map(treeToJson) }));
    } else {
      output.out(printable(renderTrees(trees, now, invocation.allNamespaces)));
    }
    return EXIT_READY;
  }
  const walk = new WhyWalk(source, now);
  const findings = [];
  for (const tree of trees) findings.push(await walk.explain(tree));
  if (invocation.output === 'json') output.out(jsonText({ items: findings }));
  else output.out(printable(findings.map(renderFinding).join('\n')));
  return findings.some((f) => f.blocked) ? EXIT_BLOCKED : EXIT_READY;
}

export async function run(args: readonly string[], output: Output): Promise<number> {
  try {
    const parsed = parseArgs(args);
    if (parsed.help) {
      output.out(USAGE);
      return EXIT_READY;
    }
    const { client, namespace } = connect(parsed.invocation);
    return await execute(parsed.invocation, new ClusterSource(client), namespace, output, Date.now());
  } catch (err) {
    // Error messages carry the API server's text and the names the user or the cluster gave.
    if (err instanceof UsageError) {
      output.err(printable(`error: ${err.message} (see kubectl basic --help)`));
      return EXIT_ERROR;
    }
    output.err(printable(`error: ${err instanceof Error ? err.message : String(err)}`));
    return EXIT_ERROR;
  }
}

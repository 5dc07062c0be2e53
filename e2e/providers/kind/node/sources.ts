import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { moduleDir } from '../../local/toolchain.ts';

export { moduleDir };

/**
 * Facts the node's components are built to match, read from upstream sources in the Go module
 * cache rather than copied here: the image names kind's node image preloads and its manifests run
 * (sigs.k8s.io/kind), and how Kubernetes builds its pause image (k8s.io/kubernetes). The parsers
 * are pure so they are unit-tested against excerpts of those files.
 */

/** `const name = "value"` declarations of a Go file (single-line, interpreted string literals). */
export function goStringConstants(source: string): Record<string, string> {
  const constants: Record<string, string> = {};
  for (const match of source.matchAll(
    /^\s*const\s+([A-Za-z_]\w*)(?:\s+string)?\s*=\s*"((?:[^"\\]|\\.)*)"/gm,
  )) {
    constants[match[1]!] = match[2]!;
  }
  return constants;
}

/** `ARG NAME="value"` / `ARG NAME=value` defaults of a Dockerfile (the last one wins, as in stages). */
export function dockerfileArgs(dockerfile: string): Record<string, string> {
  const args: Record<string, string> = {};
  for (const match of dockerfile.matchAll(/^\s*ARG\s+([A-Za-z_]\w*)=(?:"([^"]*)"|(\S*))\s*$/gm)) {
    args[match[1]!] = match[2] ?? match[3] ?? '';
  }
  return args;
}

/** A make variable's value: `NAME=value`, `NAME ?= value` or `NAME := value` (the first assignment). */
export function makeVariable(makefile: string, name: string): string | undefined {
  const pattern = new RegExp(`^${name}\\s*[?:]?=\\s*(.*?)\\s*$`, 'm');
  return pattern.exec(makefile)?.[1];
}

/** A string setting of a TOML file, wherever it is (`key = "value"`); kind's config has each once. */
export function tomlString(toml: string, key: string): string | undefined {
  const pattern = new RegExp(`^\\s*${key}\\s*=\\s*"([^"]*)"`, 'm');
  return pattern.exec(toml)?.[1];
}

/** The name of an image without registry, path and tag: `registry.k8s.io/coredns/coredns:v1` → coredns. */
export function imageName(ref: string): string {
  const last = ref.split('/').at(-1) ?? ref;
  return last.split('@')[0]!.split(':')[0]!;
}

/** The tag of an image reference (`registry.k8s.io/pause:3.10.2` → 3.10.2). */
export function imageTag(ref: string): string {
  const last = ref.split('/').at(-1) ?? ref;
  const colon = last.indexOf(':');
  if (colon < 0) throw new Error(`image reference ${ref} has no tag`);
  return last.slice(colon + 1);
}

/**
 * The output of `kubeadm config images list -o json`, keyed by image name
 * (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, coredns, pause, etcd).
 */
export function kubeadmImages(json: string): Record<string, string> {
  const parsed = JSON.parse(json) as { images?: unknown };
  if (!Array.isArray(parsed.images) || !parsed.images.every((i) => typeof i === 'string')) {
    throw new Error(`unexpected kubeadm images list: ${json.slice(0, 200)}`);
  }
  const images: Record<string, string> = {};
  for (const ref of parsed.images as string[]) images[imageName(ref)] = ref;
  return images;
}

/** What kind's node image names and builds, read from kind's module. */
export interface KindFacts {
  /** docker.io/kindest/local-path-provisioner:… as kind's storage manifest runs it. */
  storageProvisionerImage: string;
  /** docker.io/kindest/local-path-helper:… as kind's storage manifest runs it. */
  storageHelperImage: string;
  /** The sandbox (pause) image kind's containerd config names. */
  sandboxImage: string;
  /** The storage manifest kind writes into its node images (/kind/manifests/default-storage.yaml). */
  storageManifest: string;
  /** The rancher/local-path-provisioner version kind builds its image from. */
  localPathProvisionerVersion: string;
  /** Versions kind's base image builds (CONTAINERD_VERSION, RUNC_VERSION, CNI_PLUGINS_VERSION, …). */
  baseArgs: Record<string, string>;
}

export function readKindFacts(kindDir: string): KindFacts {
  const read = (...path: string[]) => readFileSync(join(kindDir, ...path), 'utf8');
  const storageSource = read('pkg', 'build', 'nodeimage', 'const_storage.go');
  const storage = goStringConstants(storageSource);
  const config = read('images', 'base', 'files', 'etc', 'containerd', 'config.toml');
  const provisionerMakefile = read('images', 'local-path-provisioner', 'Makefile');
  const facts = {
    storageProvisionerImage: storage.storageProvisionerImage,
    storageHelperImage: storage.storageHelperImage,
    sandboxImage: tomlString(config, 'sandbox_image'),
    localPathProvisionerVersion: makeVariable(provisionerMakefile, 'VERSION'),
  };
  for (const [key, value] of Object.entries(facts)) {
    if (!value) throw new Error(`cannot read ${key} from kind's sources in ${kindDir}`);
  }
  return {
    ...(facts as Omit<KindFacts, 'baseArgs' | 'storageManifest'>),
    storageManifest: goConcatenatedConstant(storageSource, 'defaultStorageManifest'),
    baseArgs: dockerfileArgs(read('images', 'base', 'Dockerfile')),
  };
}

/**
 * A Go constant assembled from raw strings and other string constants
 * (`const m = ` + "`...image: `" + ` + name + ` + "`...`"), as kind's defaultStorageManifest is.
 */
export function goConcatenatedConstant(source: string, name: string): string {
  const start = new RegExp(`^const\\s+${name}\\s*=\\s*`, 'm').exec(source);
  if (!start) throw new Error(`no constant ${name} in the Go source`);
  const constants = goStringConstants(source);
  let value = '';
  let rest = source.slice(start.index + start[0].length);
  for (;;) {
    const piece = /^\s*(?:`([^`]*)`|([A-Za-z_]\w*))/.exec(rest);
    if (!piece) throw new Error(`cannot read constant ${name}: unexpected ${rest.slice(0, 40)}`);
    if (piece[1] !== undefined) value += piece[1];
    else {
      const named = constants[piece[2] as string];
      if (named === undefined) throw new Error(`constant ${name} uses unknown constant ${piece[2]}`);
      value += named;
    }
    rest = rest.slice(piece[0].length);
    const plus = /^\s*\+\s*/.exec(rest);
    if (!plus) return value;
    rest = rest.slice(plus[0].length);
  }
}

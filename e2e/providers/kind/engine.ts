import { spawn } from 'node:child_process';
import { pipeline } from 'node:stream';
import { run, runOk } from '../exec.ts';

/**
 * The container engine kind runs its nodes on: Docker (kind's default provider) or Podman
 * (KIND_EXPERIMENTAL_PROVIDER=podman). Everything here goes through the engine's CLI, as kind does.
 */
export interface ContainerEngine {
  readonly name: 'docker' | 'podman';
  readonly bin: string;
}

export type EngineProbe = { engine: ContainerEngine } | { engine?: undefined; reason: string };

/**
 * The engine that answers: BASIC_OPERATOR_ENGINE (docker or podman) if set, else Docker, else Podman.
 * A CLI without a daemon behind it (the machine's `docker` client alone) does not count.
 */
export async function detectEngine(
  preferred = process.env.BASIC_OPERATOR_ENGINE ?? process.env.KIND_EXPERIMENTAL_PROVIDER,
): Promise<EngineProbe> {
  const candidates: ContainerEngine['name'][] =
    preferred === 'podman' ? ['podman'] : preferred === 'docker' ? ['docker'] : ['docker', 'podman'];
  const reasons: string[] = [];
  for (const name of candidates) {
    const answer = await run(name, ['info', '--format', '{{json .}}'], { timeoutMs: 20_000 }).catch(
      (err: unknown) => ({ code: 127, stdout: '', stderr: err instanceof Error ? err.message : String(err) }),
    );
    if (answer.code === 0) return { engine: { name, bin: name } };
    const why = (answer.stderr || answer.stdout).trim().split('\n').at(-1) ?? '';
    reasons.push(`${name}: ${answer.code === 127 ? 'not installed' : why}`);
  }
  return { reason: `no container engine answers (${reasons.join('; ')})` };
}

/** The image's labels, or undefined when the engine does not have it. */
export async function imageLabels(
  engine: ContainerEngine,
  ref: string,
): Promise<Record<string, string> | undefined> {
  const result = await run(engine.bin, ['image', 'inspect', '--format', '{{json .Config.Labels}}', ref]);
  if (result.code !== 0) return undefined;
  return (JSON.parse(result.stdout.trim() || 'null') as Record<string, string> | null) ?? {};
}

/** The image's ID (sha256:...), or undefined when the engine does not have it. */
export async function imageId(engine: ContainerEngine, ref: string): Promise<string | undefined> {
  const result = await run(engine.bin, ['image', 'inspect', '--format', '{{.Id}}', ref]);
  return result.code === 0 ? result.stdout.trim() : undefined;
}

/**
 * `tar -C dir -c . | engine import`: one layer holding the folder, with the Dockerfile-style
 * `changes` (ENV, USER, ENTRYPOINT, LABEL ...) applied to its configuration. Every file is root's
 * unless `keepOwners` (a Debian root file system has files of other groups, such as /etc/shadow,
 * and distroless-style images own /home/nonroot by 65532).
 */
export async function importFolder(
  engine: ContainerEngine,
  dir: string,
  ref: string,
  changes: readonly string[],
  options: { keepOwners?: boolean } = {},
): Promise<void> {
  const owners = options.keepOwners ? [] : ['--owner=0', '--group=0'];
  const args = ['import', ...changes.flatMap((c) => ['--change', c]), '-', ref];
  await pipe(
    'tar',
    ['--numeric-owner', ...owners, '--exclude=./.complete', '-C', dir, '-c', '.'],
    engine.bin,
    args,
  );
}

export interface BuildOptions {
  context: string;
  dockerfile?: string;
  tag: string;
  buildArgs?: Record<string, string>;
  labels?: Record<string, string>;
  /** Network of the build's RUN steps (`host` where the default bridge has no route out). */
  network?: string;
}

/** `engine build`: the classic builder on Docker, never pulling what is present locally. */
export async function buildImage(engine: ContainerEngine, options: BuildOptions): Promise<void> {
  const args = ['build', '--force-rm', '-t', options.tag];
  if (options.dockerfile) args.push('-f', options.dockerfile);
  for (const [key, value] of Object.entries(options.buildArgs ?? {}))
    args.push('--build-arg', `${key}=${value}`);
  for (const [key, value] of Object.entries(options.labels ?? {})) args.push('--label', `${key}=${value}`);
  if (options.network) args.push('--network', options.network);
  if (engine.name === 'podman') args.push('--pull=never');
  args.push(options.context);
  await runOk(engine.bin, args, { inherit: true, env: { DOCKER_BUILDKIT: '0' } });
}

/** Runs `a | b`; fails with the stderr of whichever side failed. */
export function pipe(a: string, aArgs: string[], b: string, bArgs: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const left = spawn(a, aArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    const right = spawn(b, bArgs, { stdio: ['pipe', 'pipe', 'pipe'] });
    // pipeline() closes the left side's output when the right side stops reading, as a shell does
    // (the left side then exits on SIGPIPE); .pipe() would leave it blocked on a full pipe.
    pipeline(left.stdout, right.stdin, () => {});
    let errors = '';
    left.stderr.on('data', (d: Buffer) => {
      errors += d.toString();
    });
    right.stderr.on('data', (d: Buffer) => {
      errors += d.toString();
    });
    const codes: Array<number | null> = [];
    const done = (code: number | null) => {
      codes.push(code);
      if (codes.length < 2) return;
      if (codes.every((c) => c === 0)) resolve();
      else reject(new Error(`${a} | ${b} ${bArgs.join(' ')} failed (exits ${codes.join(', ')}):\n${errors}`));
    };
    left.on('error', reject);
    right.on('error', reject);
    left.on('close', done);
    right.on('close', done);
  });
}

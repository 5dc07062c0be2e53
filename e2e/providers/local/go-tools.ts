import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withFileLock } from './lock.ts';
import { cacheRoot, goCompile } from './toolchain.ts';

/**
 * Small Go programs the tests run (not part of the cluster), built with the toolchain's goCompile
 * into their own folder of the cache: either a wrapper module in toolchain/<name> whose go.mod pins
 * what it uses from the Go module proxy, or an upstream command installed as released (UPSTREAM).
 * They have their own stamps, so building one never changes the control plane's stamps (which
 * would recreate the cluster).
 */
export type GoTool = 'kstatus' | 'argocd-lua' | 'promtool' | 'trivy';

interface UpstreamCommand {
  /** `go install` path: the command's package and its module's version on the proxy. */
  install: string;
  tags: readonly string[];
  ldflags: string;
  /** Environment of the build, e.g. a GOEXPERIMENT the module needs. */
  env?: Readonly<Record<string, string>>;
}

/**
 * Commands built as `go install pkg@version`, with the module's own go.mod and go.sum.
 * promtool: Prometheus v3.16.0 (module versions v0.3xx.y are releases v3.xx.y). The
 * `remove_all_sd` tag leaves out the service-discovery plugins (AWS, Azure, GCE, ...) that rule
 * checks and rule unit tests never use: Prometheus's own switch for slim builds, which spares
 * downloading and compiling those SDKs.
 */
const UPSTREAM: Partial<Record<GoTool, UpstreamCommand>> = {
  promtool: {
    install: 'github.com/prometheus/prometheus/cmd/promtool@v0.316.0',
    tags: ['remove_all_sd'],
    ldflags: '-s -w -X github.com/prometheus/common/version.Version=3.16.0',
  },
  // trivy's configuration scanner (`trivy config`), with its checks built in (the trivy-checks
  // module embeds them), so it scans with no download. It uses encoding/json/v2, which Go 1.26
  // has behind GOEXPERIMENT=jsonv2, as trivy's own release build sets.
  trivy: {
    install: 'github.com/aquasecurity/trivy/cmd/trivy@v0.74.0',
    tags: [],
    ldflags: '-s -w -X github.com/aquasecurity/trivy/pkg/version/app.ver=0.74.0',
    env: { GOEXPERIMENT: 'jsonv2' },
  },
};

const WRAPPERS = join(dirname(fileURLToPath(import.meta.url)), 'toolchain');

function toolsDir(): string {
  return join(cacheRoot(), 'go-tools', 'bin');
}

function fingerprint(tool: GoTool): string {
  const hash = createHash('sha256');
  const upstream = UPSTREAM[tool];
  if (upstream) hash.update(JSON.stringify(upstream));
  else {
    const source = join(WRAPPERS, tool);
    for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(source, file)));
  }
  return hash.digest('hex');
}

function build(tool: GoTool, dir: string): Promise<void> {
  const upstream = UPSTREAM[tool];
  if (upstream) {
    return goCompile({
      packages: [upstream.install],
      gobin: dir,
      tags: upstream.tags,
      ldflags: upstream.ldflags,
      env: upstream.env,
    });
  }
  return goCompile({ packages: ['.'], out: join(dir, tool), ldflags: '-s -w', cwd: join(WRAPPERS, tool) });
}

/**
 * The path of `tool`, built first if missing or out of date. A cold build of a wrapper takes 10 to
 * 30 s; promtool (Prometheus without its service-discovery SDKs, 750 packages) 2.5 minutes on 2 cores, module downloads included;
 * trivy (about 3,000 packages) 10 CPU minutes, 40 minutes on 2 cores shared with a test run.
 */
export function ensureGoTool(tool: GoTool): Promise<string> {
  const dir = toolsDir();
  mkdirSync(dir, { recursive: true });
  // Long enough to wait out a cold trivy build in another process.
  return withFileLock(join(dir, '.lock'), 60 * 60_000, async () => {
    const binary = join(dir, tool);
    const stampFile = join(dir, `${tool}.stamp`);
    const print = fingerprint(tool);
    if (existsSync(binary) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === print)
      return binary;
    const started = Date.now();
    process.stderr.write(`[go-tools] building ${tool} from the Go module proxy into ${dir}\n`);
    await build(tool, dir);
    writeFileSync(stampFile, print);
    process.stderr.write(`[go-tools] built ${tool} in ${((Date.now() - started) / 1000).toFixed(0)}s\n`);
    return binary;
  });
}

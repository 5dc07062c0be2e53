import { selectProvider } from './providers/index.ts';
import { ensureToolchain } from './providers/local/toolchain.ts';

/**
 * npm run cluster:up | cluster:down | cluster:build | cluster:status, on the local control plane or,
 * with `-- --provider kind` (or E2E_PROVIDER=kind), on kind.
 */
async function main(command: string | undefined, args: string[]): Promise<void> {
  const flag = args.indexOf('--provider');
  const named = args.find((a) => a.startsWith('--provider='))?.slice('--provider='.length);
  const provider = selectProvider(named ?? (flag >= 0 ? args[flag + 1] : undefined));
  switch (command) {
    case 'build': {
      const tools = await ensureToolchain();
      process.stdout.write(`${JSON.stringify(tools, null, 2)}\n`);
      return;
    }
    case 'up': {
      const info = await provider.up();
      process.stdout.write(
        `export KUBECONFIG=${info.kubeconfig}\n# ${info.serverVersion}; kubectl: ${info.kubectl}\n`,
      );
      return;
    }
    case 'down':
      await provider.down();
      return;
    case 'status': {
      const info = await provider.status();
      process.stdout.write(info ? `${JSON.stringify(info, null, 2)}\n` : 'not running\n');
      return;
    }
    default:
      throw new Error('usage: node e2e/cluster.ts up|down|build|status [--provider local|kind]');
  }
}

main(process.argv[2], process.argv.slice(3)).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

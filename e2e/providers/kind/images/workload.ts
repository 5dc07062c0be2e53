import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, runOk } from '../../exec.ts';
import { type ContainerEngine, importFolder } from '../engine.ts';
import { ensureImage, FINGERPRINT_LABEL } from '../image-cache.ts';
import { DEBIAN_SUITE, unpackedPackages } from './debian.ts';
import { makeHomes, NSSWITCH, TREE_SOURCE, withStaging, writeFile } from './tree.ts';

/**
 * The image the suites' own pods run where no registry is reachable (it stands in for the public
 * `busybox` image): kind's local-path helper pods and the suites' workload pods. Debian's busybox-static with every applet linked (sh, cp, wget, nslookup,
 * sleep, ...), netbase's /etc/services and /etc/protocols, /etc/passwd and /etc/group with root,
 * nobody (65534) and nonroot (65532), and /etc/nsswitch.conf.
 *
 * The binary is static glibc 2.36, whose `files` and `dns` name services are built in: host names
 * resolve through /etc/hosts and the resolv.conf the runtime mounts, without libc's shared
 * libraries. Debian builds busybox without FEATURE_WGET_TIMEOUT: `wget -T <seconds>` crashes with
 * SIGSEGV (exit 139) before it connects; `timeout <seconds> wget ...` is the portable form.
 */
export const BUSYBOX_VERSION = '1.35.0';
export const WORKLOAD_IMAGE = `basic-operator.local/busybox:${BUSYBOX_VERSION}`;

const PACKAGES = ['busybox-static', 'netbase'];
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Builds (when its inputs changed) and returns WORKLOAD_IMAGE. */
export async function ensureWorkloadImage(engine: ContainerEngine): Promise<string> {
  const ref = WORKLOAD_IMAGE;
  await ensureImage(engine, {
    ref,
    inputs: [readFileSync(fileURLToPath(import.meta.url), 'utf8'), TREE_SOURCE, DEBIAN_SUITE, ...PACKAGES],
    build: (fp) =>
      withStaging('busybox', async (dir) => {
        const packages = await unpackedPackages('busybox', PACKAGES);
        await runOk('cp', ['-a', '--link', `${packages}/.`, dir]);
        const busybox = join(dir, 'bin', 'busybox');
        const banner = (await run(busybox, [])).stdout.split('\n')[0] ?? '';
        const version = /^BusyBox v(\S+) \(Debian ([^)]+)\)/.exec(banner);
        if (version?.[1] !== BUSYBOX_VERSION) {
          throw new Error(
            `Debian's busybox-static is "${banner}", not ${BUSYBOX_VERSION}: update BUSYBOX_VERSION in workload.ts`,
          );
        }
        // Every applet, as `busybox --install -s` would link it (paths relative to /).
        for (const applet of (await runOk(busybox, ['--list-full'])).split('\n').filter(Boolean)) {
          const path = join(dir, applet);
          if (existsSync(path)) continue;
          mkdirSync(dirname(path), { recursive: true });
          symlinkSync('/bin/busybox', path);
        }
        writeFile(
          dir,
          'etc/passwd',
          [
            'root:x:0:0:root:/root:/bin/sh',
            'nobody:x:65534:65534:nobody:/nonexistent:/bin/false',
            'nonroot:x:65532:65532:nonroot:/home/nonroot:/bin/sh',
            '',
          ].join('\n'),
        );
        writeFile(dir, 'etc/group', ['root:x:0:', 'nobody:x:65534:', 'nonroot:x:65532:', ''].join('\n'));
        writeFile(dir, 'etc/nsswitch.conf', NSSWITCH);
        makeHomes(dir);
        await importFolder(
          engine,
          dir,
          ref,
          [
            `ENV PATH=${PATH}`,
            'CMD ["sh"]',
            `LABEL ${FINGERPRINT_LABEL}=${fp}`,
            `LABEL dev.basicoperator.busybox-static=${version[2]}`,
          ],
          { keepOwners: true },
        );
      }),
  });
  return ref;
}

import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, runOk } from '../../exec.ts';
import { type ContainerEngine, importFolder } from '../engine.ts';
import { ensureImage, FINGERPRINT_LABEL } from '../image-cache.ts';
import { DEBIAN_SUITE, unpackedPackages } from './debian.ts';
import { makeHomes, NSSWITCH, TREE_SOURCE, withStaging, writeFile } from './tree.ts';

/**
 * A PostgreSQL server the suites run as a real stateful workload (it stands in for the public
 * `postgres` image): Debian's postgresql-15 and postgresql-client-15 unpacked with the shared
 * libraries their binaries link (no maintainer scripts, no perl wrappers, no docs, no
 * translations, no JIT), busybox-static for the entrypoint's shell, tzdata.
 *
 * It runs as `postgres`, uid and gid POSTGRES_UID (999, as the public image). The entrypoint
 * (/usr/local/bin/postgres-entrypoint) creates $PGDATA (default /var/lib/postgresql/data/pgdata, a
 * folder inside the mounted volume) with mode 0700 and, when it has no PG_VERSION, runs initdb with
 * the superuser `postgres`, the password of $POSTGRES_PASSWORD (through --pwfile), scram-sha-256 for
 * every host connection and trust on the local socket; then it execs postgres listening on
 * 0.0.0.0:5432 (and on the socket in /run/postgresql), with its arguments appended. psql, pg_dump,
 * pg_isready and the other client programs are on PATH.
 */
export const POSTGRES_MAJOR = '15';
export const POSTGRES_IMAGE = `basic-operator.local/postgres:${POSTGRES_MAJOR}-${DEBIAN_SUITE}`;
export const POSTGRES_UID = 999;
/** Where a volume is mounted, and the data folder inside it (initdb wants a folder it may own). */
export const POSTGRES_MOUNT = '/var/lib/postgresql/data';
export const POSTGRES_PGDATA = `${POSTGRES_MOUNT}/pgdata`;

const BIN = `/usr/lib/postgresql/${POSTGRES_MAJOR}/bin`;
const PROGRAMS = ['postgres', 'initdb', 'psql', 'pg_dump', 'pg_isready', 'pg_ctl'];
const PATH = `${BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

/**
 * The server and client packages, and every package of a shared library their binaries link
 * (`ldd /usr/lib/postgresql/15/bin/*` on bookworm, mapped with `dpkg -S`); the build fails when one
 * is missing (see `checkPrograms`).
 */
const PACKAGES = [
  `postgresql-${POSTGRES_MAJOR}`,
  `postgresql-client-${POSTGRES_MAJOR}`,
  'busybox-static',
  'tzdata',
  'libaudit1',
  'libc6',
  'libcap-ng0',
  'libcap2',
  'libcom-err2',
  'libffi8',
  'libgcc-s1',
  'libgcrypt20',
  'libgmp10',
  'libgnutls30',
  'libgpg-error0',
  'libgssapi-krb5-2',
  'libhogweed6',
  'libicu72',
  'libidn2-0',
  'libk5crypto3',
  'libkeyutils1',
  'libkrb5-3',
  'libkrb5support0',
  'libldap-2.5-0',
  'liblz4-1',
  'liblzma5',
  'libnettle8',
  'libp11-kit0',
  'libpam0g',
  'libpq5',
  'libreadline8',
  'libsasl2-2',
  'libssl3',
  'libstdc++6',
  'libsystemd0',
  'libtasn1-6',
  'libtinfo6',
  'libunistring2',
  'libxml2',
  'libzstd1',
  'zlib1g',
];

const ENTRYPOINT = `#!/bin/sh
# Initializes $PGDATA on first start, then runs the server in the foreground as PID 1.
set -eu
: "\${PGDATA:=${POSTGRES_PGDATA}}"
export PGDATA
mkdir -p "$PGDATA"
chmod 0700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "\${POSTGRES_PASSWORD:-}" ]; then
    echo "postgres-entrypoint: $PGDATA holds no database and POSTGRES_PASSWORD is empty: set it to initialize one" >&2
    exit 1
  fi
  pwfile="$(mktemp)"
  printf '%s\\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --pgdata="$PGDATA" --username=postgres --pwfile="$pwfile" \\
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C
  rm -f "$pwfile"
  # initdb allows host connections from loopback only; the server listens on every address.
  printf 'host all all 0.0.0.0/0 scram-sha-256\\nhost all all ::/0 scram-sha-256\\n' >>"$PGDATA/pg_hba.conf"
fi
exec postgres -c listen_addresses='*' -c port=5432 -c jit=off "$@"
`;

/**
 * Runs every program the suites use once in the built image (`--version`): a library the tree
 * lacks fails here, naming it, instead of in a pod. The image is removed when one fails.
 */
async function checkPrograms(engine: ContainerEngine, ref: string): Promise<void> {
  const script = PROGRAMS.map((p) => `${p} --version`).join(' && ');
  const result = await run(engine.bin, ['run', '--rm', '--entrypoint', '/bin/sh', ref, '-c', script]);
  if (result.code !== 0) {
    await run(engine.bin, ['image', 'rm', ref]);
    throw new Error(
      `${ref}: ${script} failed (${result.code}): ${(result.stderr || result.stdout).trim()}; ` +
        "add the missing library's package to PACKAGES in e2e/providers/kind/images/postgres.ts",
    );
  }
}

/** Builds (when its inputs changed) and returns POSTGRES_IMAGE. */
export async function ensurePostgresImage(engine: ContainerEngine): Promise<string> {
  const ref = POSTGRES_IMAGE;
  await ensureImage(engine, {
    ref,
    inputs: [readFileSync(fileURLToPath(import.meta.url), 'utf8'), TREE_SOURCE, DEBIAN_SUITE, ...PACKAGES],
    build: (fp) =>
      withStaging('postgres', async (dir) => {
        const packages = await unpackedPackages('postgres', PACKAGES);
        await runOk('cp', ['-a', '--link', `${packages}/.`, dir]);
        for (const unused of [
          'usr/share/doc',
          'usr/share/man',
          'usr/share/info',
          'usr/share/lintian',
          'usr/share/locale',
          `usr/lib/postgresql/${POSTGRES_MAJOR}/lib/bitcode`,
          `usr/lib/postgresql/${POSTGRES_MAJOR}/lib/llvmjit.so`,
          `usr/lib/postgresql/${POSTGRES_MAJOR}/lib/llvmjit_types.bc`,
        ]) {
          rmSync(join(dir, unused), { recursive: true, force: true });
        }
        // Debian's merged /usr: the packages' /bin, /sbin and /lib are links into /usr, as debootstrap makes them.
        for (const top of ['bin', 'sbin', 'lib', 'lib64']) {
          if (existsSync(join(dir, top))) {
            mkdirSync(join(dir, 'usr', top), { recursive: true });
            await runOk('cp', ['-a', '--link', `${join(dir, top)}/.`, join(dir, 'usr', top)]);
            rmSync(join(dir, top), { recursive: true, force: true });
          }
          mkdirSync(join(dir, 'usr', top), { recursive: true });
          symlinkSync(`usr/${top}`, join(dir, top));
        }
        const busybox = join(dir, 'usr', 'bin', 'busybox');
        for (const applet of (await runOk(busybox, ['--list-full'])).split('\n').filter(Boolean)) {
          const path = join(dir, applet);
          if (existsSync(path)) continue;
          mkdirSync(join(path, '..'), { recursive: true });
          symlinkSync('/usr/bin/busybox', path);
        }
        writeFile(dir, 'usr/local/bin/postgres-entrypoint', ENTRYPOINT, 0o755);
        writeFile(
          dir,
          'etc/passwd',
          [
            'root:x:0:0:root:/root:/bin/sh',
            `postgres:x:${POSTGRES_UID}:${POSTGRES_UID}:PostgreSQL administrator:/var/lib/postgresql:/bin/sh`,
            'nobody:x:65534:65534:nobody:/nonexistent:/bin/false',
            '',
          ].join('\n'),
        );
        writeFile(
          dir,
          'etc/group',
          ['root:x:0:', `postgres:x:${POSTGRES_UID}:`, 'nobody:x:65534:', ''].join('\n'),
        );
        writeFile(dir, 'etc/nsswitch.conf', NSSWITCH);
        makeHomes(dir);
        // The socket folder Debian's build looks in (/var/run/postgresql), and the home.
        mkdirSync(join(dir, 'run', 'postgresql'), { recursive: true });
        chmodSync(join(dir, 'run', 'postgresql'), 0o2775);
        chownSync(join(dir, 'run', 'postgresql'), POSTGRES_UID, POSTGRES_UID);
        mkdirSync(join(dir, 'var'), { recursive: true });
        rmSync(join(dir, 'var', 'run'), { recursive: true, force: true });
        symlinkSync('../run', join(dir, 'var', 'run'));
        mkdirSync(join(dir, POSTGRES_MOUNT.slice(1)), { recursive: true });
        for (const owned of ['var/lib/postgresql', POSTGRES_MOUNT.slice(1)]) {
          chownSync(join(dir, owned), POSTGRES_UID, POSTGRES_UID);
        }
        chmodSync(join(dir, POSTGRES_MOUNT.slice(1)), 0o700);
        await importFolder(
          engine,
          dir,
          ref,
          [
            `ENV PATH=${PATH}`,
            `ENV PGDATA=${POSTGRES_PGDATA}`,
            'ENV TZ=UTC',
            `USER ${POSTGRES_UID}:${POSTGRES_UID}`,
            'WORKDIR /var/lib/postgresql',
            'EXPOSE 5432',
            'ENTRYPOINT ["/usr/local/bin/postgres-entrypoint"]',
            `LABEL ${FINGERPRINT_LABEL}=${fp}`,
            `LABEL dev.basicoperator.postgresql=${POSTGRES_MAJOR}`,
          ],
          { keepOwners: true },
        );
        await checkPrograms(engine, ref);
      }),
  });
  return ref;
}

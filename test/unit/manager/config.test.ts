import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ConfigError,
  type FlagSpecs,
  parseCommandLine,
  parseConfig,
  usage,
} from '../../../src/runtime/manager/config.ts';

const PROGRAM_FLAGS = {
  'copy-image': { type: 'string', default: 'busybox', help: 'Image of the copies.' },
  'copy-deadline': { type: 'string', default: '1h', help: 'How long a copy may take.' },
  'dry-run': { type: 'boolean', default: false, help: 'Change nothing.' },
} as const satisfies FlagSpecs;

function parse(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const parsed = parseCommandLine(argv, env, PROGRAM_FLAGS);
  assert.notEqual(parsed, 'help');
  if (parsed === 'help') throw new Error('unexpected help');
  return parsed;
}

describe("parseCommandLine with the program's own flags", () => {
  it('reads them from the command line, else the environment, else their defaults', () => {
    const { flags } = parse(['--copy-image', 'alpine', '--dry-run'], {
      BASIC_OPERATOR_COPY_DEADLINE: '90s',
    });
    assert.equal(flags.string('copy-image'), 'alpine');
    assert.equal(flags.duration('copy-deadline'), 90_000);
    assert.equal(flags.boolean('dry-run'), true);
    assert.equal(parse([]).flags.string('copy-image'), 'busybox');
    assert.equal(parse([]).flags.boolean('dry-run'), false);
  });

  it("parses the manager's flags in the same pass", () => {
    const { config } = parse(['--copy-image', 'alpine', '--graceful-shutdown-timeout', '5s']);
    assert.equal(config.gracefulShutdownMs, 5000);
    assert.equal(config.defaultConcurrency, 20);
  });

  it('names the flag when a value is bad', () => {
    assert.throws(
      () => parse([], { BASIC_OPERATOR_COPY_DEADLINE: 'soon' }).flags.duration('copy-deadline'),
      (err) => err instanceof ConfigError && /--copy-deadline: "soon" is not a duration/.test(err.message),
    );
    assert.throws(
      () => parse([], { BASIC_OPERATOR_DRY_RUN: 'maybe' }).flags.boolean('dry-run'),
      /BASIC_OPERATOR_DRY_RUN: "maybe" must be true or false/,
    );
  });

  it('rejects flags that neither the manager nor the program defines', () => {
    assert.throws(() => parseConfig(['--copy-image', 'alpine'], {}), /Unknown option '--copy-image'/);
    assert.throws(() => parse(['--no-such-flag']), /Unknown option '--no-such-flag'/);
  });

  it("refuses a program flag that redefines one of the manager's", () => {
    const flags: FlagSpecs = { 'log-level': { type: 'string', default: 'debug', help: 'Mine.' } };
    assert.throws(
      () => parseCommandLine([], {}, flags),
      /defined by both the program and the manager: log-level/,
    );
  });

  it("lists both in --help, under the program's name and purpose", () => {
    const text = usage({ name: 'copier', about: 'Copies volumes.', flags: PROGRAM_FLAGS });
    assert.match(text, /^Usage: copier \[flags\]\n\nCopies volumes\.\n/);
    assert.match(text, /--graceful-shutdown-timeout/);
    assert.match(
      text,
      /--copy-deadline +How long a copy may take\.\n +default "1h"; env BASIC_OPERATOR_COPY_DEADLINE/,
    );
    assert.ok(text.indexOf('--copy-image') < text.indexOf('--help'), 'help comes last');
    assert.equal(parseCommandLine(['--help'], {}, PROGRAM_FLAGS), 'help');
  });

  it("takes the program's defaults for the manager's flags, below the command line and the environment", () => {
    const defaults = { 'leader-election-id': 'copier.example.com', 'leader-elect': true };
    const read = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
      const parsed = parseCommandLine(argv, env, PROGRAM_FLAGS, defaults);
      if (parsed === 'help') throw new Error('unexpected help');
      return parsed.config.leaderElection;
    };
    assert.equal(read([]).id, 'copier.example.com');
    assert.equal(read([]).enabled, true);
    assert.equal(read([], { BASIC_OPERATOR_LEADER_ELECTION_ID: 'from-env' }).id, 'from-env');
    assert.equal(read(['--leader-election-id', 'from-flag']).id, 'from-flag');
    assert.match(
      usage({ name: 'copier', flags: PROGRAM_FLAGS, managerDefaults: defaults }),
      /--leader-election-id +Name of the Lease\.\n +default "copier\.example\.com"/,
    );
    assert.throws(
      () => parseCommandLine([], {}, {}, { 'leader-elect': 'yes' }),
      /the default of --leader-elect must be a boolean/,
    );
  });
});

describe('the metrics flags', () => {
  const config = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    const parsed = parseConfig(argv, env);
    if (parsed === 'help') throw new Error('unexpected help');
    return parsed;
  };

  it('serve HTTPS on :8443 by default, with a self-signed certificate', () => {
    const c = config([]);
    assert.equal(c.metricsBindAddress, ':8443');
    assert.deepEqual(c.metrics, {
      secure: true,
      certPath: undefined,
      certName: 'tls.crt',
      certKey: 'tls.key',
    });
  });

  it('serve plain HTTP on :8080 with --metrics-secure=false, --no-metrics-secure or the environment', () => {
    for (const [argv, env] of [
      [['--metrics-secure=false'], {}],
      [['--no-metrics-secure'], {}],
      [[], { BASIC_OPERATOR_METRICS_SECURE: 'false' }],
    ] as const) {
      const c = config([...argv], env);
      assert.equal(c.metrics.secure, false);
      assert.equal(c.metricsBindAddress, ':8080');
    }
    assert.equal(
      config(['--metrics-secure=false', '--metrics-bind-address', ':9090']).metricsBindAddress,
      ':9090',
    );
  });

  it('take a certificate directory, and refuse one without TLS', () => {
    assert.equal(config(['--metrics-cert-path', '/certs']).metrics.certPath, '/certs');
    assert.throws(
      () => config(['--metrics-secure=false', '--metrics-cert-path', '/certs']),
      /--metrics-cert-path needs --metrics-secure/,
    );
  });

  it('read --flag=true and --flag=false for every boolean flag, and refuse other values', () => {
    assert.equal(config(['--exit-on-lost-lease=false']).exitOnLostLease, false);
    assert.equal(config(['--leader-elect=true']).leaderElection.enabled, true);
    assert.throws(
      () => config(['--metrics-secure=maybe']),
      /--metrics-secure: "maybe" must be true or false/,
    );
  });
});

describe('the client budget flags', () => {
  const config = (argv: string[]) => {
    const parsed = parseConfig(argv, {});
    if (parsed === 'help') throw new Error('unexpected help');
    return parsed;
  };

  it("bound the API requests by default: kube-controller-manager's 20 qps / 30 burst for each of five controllers", () => {
    assert.deepEqual({ qps: config([]).qps, burst: config([]).burst }, { qps: 100, burst: 150 });
  });

  it('take a rate, a burst of 1.5 x the rate unless given, and 0 to turn the limit off', () => {
    assert.deepEqual(
      { qps: config(['--kube-api-qps', '20']).qps, burst: config(['--kube-api-qps', '20']).burst },
      { qps: 20, burst: 30 },
    );
    assert.equal(config(['--kube-api-qps', '20', '--kube-api-burst', '40']).burst, 40);
    assert.deepEqual(
      { qps: config(['--kube-api-qps', '0']).qps, burst: config(['--kube-api-qps', '0']).burst },
      { qps: 0, burst: 0 },
    );
  });
});

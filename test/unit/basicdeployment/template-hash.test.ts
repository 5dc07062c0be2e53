import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { POD_TEMPLATE_HASH_MAX_LENGTH } from '../../../src/apis/index.ts';
import { canonicalJson } from '../../../src/controllers/basicdeployment/logic/canonical-json.ts';
import {
  computeTemplateHash,
  fnv1a32,
  safeEncodeString,
  templatesEqualIgnoringHash,
} from '../../../src/controllers/basicdeployment/logic/template-hash.ts';

const HASH_LABEL = 'apps.basicoperator.dev/pod-template-hash';

function template(): V1PodTemplateSpec {
  return {
    metadata: { labels: { app: 'web', tier: 'front' } },
    spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] },
  };
}

describe('canonicalJson', () => {
  it('sorts keys at every depth', () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } }),
      '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });
  it('leaves out undefined and null properties but keeps array positions', () => {
    assert.equal(canonicalJson({ a: undefined, b: null, c: [undefined, null, 1] }), '{"c":[null,null,1]}');
  });
  it('serializes dates as ISO strings and non-finite numbers as null', () => {
    assert.equal(
      canonicalJson({ t: new Date(0), n: Number.NaN }),
      '{"n":null,"t":"1970-01-01T00:00:00.000Z"}',
    );
  });
  it('serializes objects nested as deep as the apiserver allows (10,000 levels) without a stack overflow', () => {
    let nested: unknown = 'x';
    for (let i = 0; i < 5000; i++) nested = { a: [nested] };
    const json = canonicalJson(nested);
    assert.equal(json, `${'{"a":['.repeat(5000)}"x"${']}'.repeat(5000)}`);
  });
  it('rejects values JSON cannot hold', () => {
    assert.throws(() => canonicalJson({ f: () => 1 }), TypeError);
    assert.throws(() => canonicalJson(10n), TypeError);
  });
});

describe('fnv1a32', () => {
  const encode = (text: string) => new TextEncoder().encode(text);
  for (const [input, expected] of [
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['foobar', 0xbf9cf968],
  ] as const) {
    it(`hashes ${JSON.stringify(input)} like the reference vectors`, () => {
      assert.equal(fnv1a32(encode(input)), expected);
    });
  }
  it('continues from a previous hash when given one as seed', () => {
    assert.equal(fnv1a32(encode('bar'), fnv1a32(encode('foo'))), fnv1a32(encode('foobar')));
  });
});

describe('safeEncodeString', () => {
  it('maps digits like upstream rand.SafeEncodeString', () => {
    assert.equal(safeEncodeString('0123456789'), '456789bcdf');
  });
});

describe('computeTemplateHash', () => {
  it('is pinned, so upgrades do not roll every deployment', () => {
    assert.equal(computeTemplateHash(template()), computeTemplateHash(template()));
    assert.equal(computeTemplateHash(template()), PINNED_HASH);
  });
  it('ignores key order and undefined/null fields', () => {
    const reordered: V1PodTemplateSpec = {
      spec: { containers: [{ ports: [{ containerPort: 80 }], image: 'nginx:1.27', name: 'web' }] },
      metadata: { labels: { tier: 'front', app: 'web' }, annotations: undefined },
    };
    const withNull = { ...template(), metadata: { ...template().metadata, creationTimestamp: null } };
    assert.equal(computeTemplateHash(reordered), computeTemplateHash(template()));
    assert.equal(
      computeTemplateHash(withNull as unknown as V1PodTemplateSpec),
      computeTemplateHash(template()),
    );
  });
  it('changes when the template changes', () => {
    const changed = template();
    changed.spec!.containers[0]!.image = 'nginx:1.28';
    assert.notEqual(computeTemplateHash(changed), computeTemplateHash(template()));
  });
  it('changes with collisionCount, and 0 differs from no count like upstream', () => {
    const hashes = new Set([
      computeTemplateHash(template()),
      computeTemplateHash(template(), 0),
      computeTemplateHash(template(), 1),
      computeTemplateHash(template(), 2),
    ]);
    assert.equal(hashes.size, 4);
  });
  it('mixes the collision count in as 8 little-endian bytes after the template', () => {
    const base = fnv1a32(new TextEncoder().encode(canonicalJson(template())));
    const mixed = fnv1a32(Uint8Array.from([3, 0, 0, 0, 0, 0, 0, 0]), base);
    assert.equal(computeTemplateHash(template(), 3), safeEncodeString(String(mixed)));
  });
  it('is a valid label value', () => {
    for (let count = 0; count < 50; count++) {
      assert.match(computeTemplateHash(template(), count), /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    }
  });
});

describe('POD_TEMPLATE_HASH_MAX_LENGTH', () => {
  it('is the length of the hash of the largest 32-bit value, which the deployment name rule relies on', () => {
    assert.equal(safeEncodeString(String(2 ** 32 - 1)).length, POD_TEMPLATE_HASH_MAX_LENGTH);
    for (const collisionCount of [undefined, 0, 1, 2 ** 31 - 1]) {
      assert.ok(computeTemplateHash(template(), collisionCount).length <= POD_TEMPLATE_HASH_MAX_LENGTH);
    }
  });
});

describe('templatesEqualIgnoringHash', () => {
  it('ignores only the hash label', () => {
    const withHash = template();
    withHash.metadata!.labels![HASH_LABEL] = 'abc';
    assert.equal(templatesEqualIgnoringHash(withHash, template(), HASH_LABEL), true);
    const otherHash = template();
    otherHash.metadata!.labels![HASH_LABEL] = 'xyz';
    assert.equal(templatesEqualIgnoringHash(withHash, otherHash, HASH_LABEL), true);
  });
  it('sees other differences', () => {
    const changedLabel = template();
    changedLabel.metadata!.labels!.tier = 'back';
    assert.equal(templatesEqualIgnoringHash(changedLabel, template(), HASH_LABEL), false);
    const changedSpec = template();
    changedSpec.spec!.containers[0]!.name = 'app';
    assert.equal(templatesEqualIgnoringHash(changedSpec, template(), HASH_LABEL), false);
  });
  it('treats a label map holding only the hash like no label map', () => {
    const a: V1PodTemplateSpec = { metadata: { labels: { [HASH_LABEL]: 'abc' } }, spec: { containers: [] } };
    const b: V1PodTemplateSpec = { metadata: {}, spec: { containers: [] } };
    assert.equal(templatesEqualIgnoringHash(a, b, HASH_LABEL), true);
  });
  it('serializes a frozen template (the cache holds only frozen ones) once, however often it is compared', () => {
    let reads = 0;
    const counted = (): V1PodTemplateSpec => {
      const t = template();
      const spec = t.spec;
      Object.defineProperty(t, 'spec', {
        enumerable: true,
        get: () => {
          reads++;
          return spec;
        },
      });
      return t;
    };
    const frozen = Object.freeze(counted());
    for (let i = 0; i < 3; i++) {
      assert.equal(templatesEqualIgnoringHash(frozen, template(), HASH_LABEL), true);
      assert.equal(computeTemplateHash(frozen), computeTemplateHash(template()));
    }
    assert.equal(reads, 2); // once for the comparison, once for the hash
    const open = counted();
    templatesEqualIgnoringHash(open, template(), HASH_LABEL);
    templatesEqualIgnoringHash(open, template(), HASH_LABEL);
    assert.equal(reads, 4); // a template that may still change is serialized each time
  });

  it('sees a change to a template that is not frozen', () => {
    const open = template();
    assert.equal(templatesEqualIgnoringHash(open, template(), HASH_LABEL), true);
    const before = computeTemplateHash(open);
    open.spec!.containers[0]!.image = 'nginx:1.28';
    assert.equal(templatesEqualIgnoringHash(open, template(), HASH_LABEL), false);
    assert.notEqual(computeTemplateHash(open), before);
  });

  it('does not modify its inputs', () => {
    const withHash = template();
    withHash.metadata!.labels![HASH_LABEL] = 'abc';
    templatesEqualIgnoringHash(withHash, template(), HASH_LABEL);
    assert.equal(withHash.metadata!.labels![HASH_LABEL], 'abc');
  });
});

const PINNED_HASH = '588777c97d';

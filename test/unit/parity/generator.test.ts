import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generate, parseKinds } from '../../parity/generator.ts';
import { applyOp, fenceposts, OP_KINDS, type WorkloadModel } from '../../parity/model.ts';
import { Prng } from '../../parity/prng.ts';

describe('parity generator', () => {
  it('the PRNG repeats its sequence for a seed', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const seqA = Array.from({ length: 20 }, () => a.int(0, 1000));
    assert.deepEqual(
      seqA,
      Array.from({ length: 20 }, () => b.int(0, 1000)),
    );
    assert.notDeepEqual(
      seqA,
      Array.from({ length: 20 }, () => new Prng(43).int(0, 1000)),
    );
  });

  it('is deterministic, and fewer steps give a prefix of the same sequence (so a divergence replays)', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const long = generate(seed, { steps: 12 });
      assert.deepEqual(generate(seed, { steps: 12 }), long);
      assert.deepEqual(generate(seed, { steps: 5 }), long.slice(0, 6));
    }
  });

  it('keeps every model valid: replicas 0..5, deadline above minReadySeconds, not both fenceposts zero', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const ops = generate(seed, { steps: 15 });
      assert.equal(ops[0]?.kind, 'create');
      let model: WorkloadModel | undefined;
      for (const op of ops) {
        model = applyOp(model ?? (op.kind === 'create' ? op.model : model!), op);
        assert.ok(model.replicas >= 0 && model.replicas <= 5, `seed ${seed}: replicas ${model.replicas}`);
        assert.ok(model.progressDeadlineSeconds > model.minReadySeconds, `seed ${seed}: deadline`);
        if (model.strategy.type === 'RollingUpdate') {
          assert.ok(!(model.strategy.maxSurge === 0 && model.strategy.maxUnavailable === 0), `seed ${seed}`);
        }
        for (const key of Object.keys(model.template.extraLabels)) {
          assert.ok(!(key in model.selectorLabels), `seed ${seed}: template label ${key} is a selector key`);
        }
      }
    }
  });

  it('draws only the included kinds', () => {
    const kinds = parseKinds('-orphanPod,-helmLabels,-deletePod');
    for (let seed = 1; seed <= 100; seed++) {
      for (const op of generate(seed, { steps: 10, kinds }).slice(1)) {
        assert.ok(!['orphanPod', 'deletePod'].includes(op.kind), `seed ${seed}: ${op.kind}`);
      }
      const create = generate(seed, { steps: 0, kinds })[0];
      assert.ok(
        create?.kind === 'create' && !('app.kubernetes.io/managed-by' in create.model.selectorLabels),
      );
    }
    assert.deepEqual([...parseKinds('scale,image', new Set())], ['scale', 'image']);
    assert.equal(parseKinds(undefined).size, OP_KINDS.length);
    assert.throws(() => parseKinds('nope'), /unknown operation kind "nope"/);
  });

  it('never puts in one burst a change of pace behind a template change, nor two template changes', () => {
    const key = (m: WorkloadModel) => JSON.stringify(m.template);
    let bursts = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const ops = generate(seed, { steps: 8 });
      const create = ops[0];
      assert.ok(create?.kind === 'create');
      let model: WorkloadModel = create.model;
      for (const op of ops.slice(1)) {
        if (op.kind === 'burst') {
          bursts++;
          const what = `seed ${seed}: ${op.ops.map((o) => o.kind).join(', ')}`;
          let m = model;
          for (const inner of op.ops) {
            const next = applyOp(m, inner);
            const changed = key(m) !== key(model);
            assert.ok(!(changed && ['rollingParams', 'strategy'].includes(inner.kind)), what);
            assert.ok(!(changed && key(next) !== key(m)), what);
            m = next;
          }
        }
        model = applyOp(model, op);
      }
    }
    assert.ok(bursts > 100, `only ${bursts} bursts drawn`);
  });

  it('resolves fenceposts as apps/v1: surge rounds up, unavailable down, both zero means one unavailable', () => {
    const base = generate(1, { steps: 0 })[0];
    assert.ok(base?.kind === 'create');
    const m = (maxSurge: number | `${number}%`, maxUnavailable: number | `${number}%`, replicas: number) => ({
      ...base.model,
      replicas,
      strategy: { type: 'RollingUpdate' as const, maxSurge, maxUnavailable },
    });
    assert.deepEqual(fenceposts(m('25%', '25%', 3)), { surge: 1, unavailable: 0 });
    assert.deepEqual(fenceposts(m('25%', '25%', 4)), { surge: 1, unavailable: 1 });
    assert.deepEqual(fenceposts(m('25%', '0%', 2)), { surge: 1, unavailable: 0 });
    assert.deepEqual(fenceposts(m('0%', '10%', 5)), { surge: 0, unavailable: 1 });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FuzzRandom, fuzzIterations, fuzzSeed, runFuzz } from './fuzz-random.js';

describe('FuzzRandom', () => {
  it('replays the same sequence from the same seed', () => {
    const draw = (seed: number) => {
      const r = new FuzzRandom(seed);
      return [r.next(), r.string(), JSON.stringify(r.json()), r.bytes(8).toString('hex')];
    };
    assert.deepEqual(draw(42), draw(42));
    assert.notDeepEqual(draw(42), draw(43));
  });

  it('keeps numbers in range and mutations JSON-serialisable', () => {
    const r = new FuzzRandom(7);
    for (let i = 0; i < 500; i++) {
      const n = r.int(3, 9);
      assert.ok(n >= 3 && n < 9);
      const m = r.mutate({ a: 1, b: { c: 'x' } });
      assert.equal(typeof JSON.stringify(m), 'string');
    }
  });

  it('reads the seed and iteration count from the environment', () => {
    assert.equal(fuzzSeed({ AENV_FUZZ_SEED: '123' }), 123);
    assert.equal(fuzzIterations(50, { AENV_FUZZ_ITERATIONS: '5000' }), 5000);
    assert.equal(fuzzIterations(50, {}), 50);
  });

  it('names the seed and case of a failure', async () => {
    await assert.rejects(
      runFuzz('demo', { iterations: 10, seed: 99 }, (_r, i) =>
        i === 3 ? Promise.reject(new Error('boom')) : Promise.resolve(),
      ),
      /demo: case 3 failed \(replay: AENV_FUZZ_SEED=99\): boom/,
    );
    const done = await runFuzz('ok', { iterations: 4, seed: 1 }, () => Promise.resolve());
    assert.deepEqual(done, { seed: 1, cases: 4 });
  });
});

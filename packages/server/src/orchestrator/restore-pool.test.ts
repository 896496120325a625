// RestorePool's bookkeeping with STAND-IN machines (plain objects with a
// Cleanup; no VMM, slot or disk): pools follow the templates' snapshots,
// a rebuilt template's machines are drained, close destroys everything.
// The real prepared machines run in test/restore-pool.vm.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AenvError, Cleanup } from '@aenv/shared';
import type { PreparedRestore } from '@aenv/vmm';
import type { MachineSnapshot } from './launcher.js';
import type { PooledMachine, PooledMachineDeps } from './pooled-machine.js';
import { checkRestorePoolConfig, type RestorePoolConfig } from './restore-pool-config.js';
import { RestorePool } from './restore-pool.js';

const image = { virtualSize: 1 << 20, layers: ['sha256:' + '0'.repeat(64)] };
const snap = (dir: string): MachineSnapshot => ({ dir, image });
const config = (o: Partial<RestorePoolConfig> = {}): RestorePoolConfig => ({
  templates: ['base'],
  low: 1,
  high: 2,
  checkSeconds: 3600,
  ...o,
});

function standIns() {
  const live = new Set<string>();
  const destroyed: string[] = [];
  let n = 0;
  const prepare = (snapshot: MachineSnapshot): Promise<PooledMachine> => {
    const name = `pool-${++n}`;
    live.add(name);
    const cleanup = new Cleanup();
    cleanup.add('stand-in release', () => {
      live.delete(name);
      destroyed.push(name);
    });
    const prepared = { ended: new Promise<void>(() => undefined) } as PreparedRestore;
    return Promise.resolve({ name, snapshot, cleanup, prepared } as unknown as PooledMachine);
  };
  return { live, destroyed, prepare };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await sleep(5);
  assert.ok(cond(), what);
}

describe('RestorePool', () => {
  it('keeps prepared machines of each template snapshot and follows rebuilds', async () => {
    const templates = new Map([['base', snap('/snap/a')]]);
    const drained: string[] = [];
    const s = standIns();
    const pool = new RestorePool({
      config: config(),
      resolve: (t) => templates.get(t),
      machines: {} as PooledMachineDeps,
      prepare: s.prepare,
      onError: (err) => assert.fail(String(err)),
      onDrained: (t, dir) => void drained.push(`${t} ${dir}`),
    });
    pool.start();
    await until(() => pool.levels()[0]?.ready === 2, 'filled to high');
    const m = pool.take('/snap/a');
    assert.equal(m?.snapshot.dir, '/snap/a');
    assert.equal(pool.take('/snap/other'), undefined, 'only machines of that snapshot');
    templates.set('base', snap('/snap/b'));
    pool.reconcile();
    assert.deepEqual(drained, ['base /snap/a']);
    await until(() => pool.levels()[0]?.ready === 2, 'refilled for the new snapshot');
    assert.equal(pool.levels()[0]?.snapshotDir, '/snap/b');
    assert.equal(pool.take('/snap/a'), undefined);
    assert.deepEqual(s.destroyed, ['pool-2'], "the old snapshot's waiting machine was destroyed");
    assert.equal(await pool.shed(), true, 'one machine gives its slot back');
    await pool.close();
    assert.deepEqual(
      [...s.live],
      ['pool-1'],
      'only the taken machine is left (its sandbox owns it)',
    );
    await m?.cleanup.run();
  });

  it('is off without templates or with low 0, and skips templates that resolve to nothing', async () => {
    const s = standIns();
    const off = new RestorePool({
      config: config({ templates: [] }),
      resolve: () => snap('/snap/a'),
      machines: {} as PooledMachineDeps,
      prepare: s.prepare,
      onError: () => undefined,
    });
    assert.equal(off.enabled, false);
    off.start();
    assert.equal(new RestorePool({ ...optionsOf(s), config: config({ low: 0 }) }).enabled, false);
    const errors: string[] = [];
    const missing = new RestorePool({
      ...optionsOf(s),
      config: config({ templates: ['gone', 'broken'] }),
      resolve: (t) => {
        if (t === 'broken') throw new Error('catalog unavailable');
        return undefined;
      },
      onError: (err, t) => void errors.push(`${t}: ${(err as Error).message}`),
    });
    missing.start();
    await sleep(20);
    assert.deepEqual(missing.levels(), []);
    assert.deepEqual(errors, ['broken: catalog unavailable']);
    assert.equal(s.live.size, 0);
    await Promise.all([off.close(), missing.close()]);
  });

  it('refuses a low watermark above the high one', () => {
    assert.throws(
      () => checkRestorePoolConfig(config({ low: 3, high: 2 })),
      (e: unknown) => e instanceof AenvError && e.code === 'CONFIG_INVALID_VALUE',
    );
  });
});

function optionsOf(s: ReturnType<typeof standIns>) {
  return {
    config: config(),
    resolve: () => snap('/snap/a'),
    machines: {} as PooledMachineDeps,
    prepare: s.prepare,
    onError: () => undefined,
  };
}

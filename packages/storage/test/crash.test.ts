// Crash safety: a writer process is killed with SIGKILL in the middle of
// writing; after reopening its upper, every write covered by an
// acknowledged flush is there, and every block holds either its flushed
// contents or the contents of a later write to it — never anything else.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FsBlobStore } from '../src/blob/fs-blob-store.js';
import { ImageDevice } from '../src/image/image-device.js';
import type { ImageSpec } from '../src/image/image-spec.js';
import { importRawImage } from '../src/transfer/import-raw.js';
import {
  CRASH_BLOCKS,
  CRASH_BS,
  crashOps,
  stampBlock,
  type CrashOp,
} from './fixtures/crash-ops.js';
import { Prng } from './helpers/prng.js';
import { tempDir, type TempDir } from './helpers/tmp.js';

const TOTAL = 3000;

function runWriter(args: string[], killAfterFlushes: number, delayMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL('./fixtures/crash-writer.js', import.meta.url), args, {
      stdio: 'ignore',
    });
    let flushed = 0;
    let acks = 0;
    child.on('message', (m: { flushed?: number; done?: number }) => {
      if (m.flushed === undefined) return;
      flushed = m.flushed;
      acks += 1;
      if (acks === killAfterFlushes) setTimeout(() => child.kill('SIGKILL'), delayMs);
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(flushed);
      else reject(new Error(`writer exited ${code} ${signal} before being killed`));
    });
  });
}

/** For each block: contents after the first `n` ops (undefined: the base). */
function modelAfter(ops: readonly CrashOp[], n: number): (Buffer | undefined)[] {
  const blocks: (Buffer | undefined)[] = new Array<Buffer | undefined>(CRASH_BLOCKS).fill(
    undefined,
  );
  for (const op of ops.slice(0, n)) {
    for (let k = 0; k < op.count; k++) {
      blocks[op.block + k] =
        op.data?.subarray(k * CRASH_BS, (k + 1) * CRASH_BS) ?? Buffer.alloc(CRASH_BS);
    }
  }
  return blocks;
}

describe('crash safety of the upper', () => {
  let dir: TempDir;
  let store: FsBlobStore;
  let image: Required<ImageSpec>;
  let base: Buffer;

  before(async () => {
    dir = await tempDir();
    store = new FsBlobStore(join(dir.path, 'store'));
    base = Buffer.alloc(CRASH_BLOCKS * CRASH_BS);
    for (let b = 0; b < CRASH_BLOCKS; b++) stampBlock(0, b).copy(base, b * CRASH_BS);
    await writeFile(join(dir.path, 'base.raw'), base);
    ({ image } = await importRawImage(join(dir.path, 'base.raw'), { store, workDir: dir.path }));
  });
  after(async () => dir.remove());

  for (const seed of [11, 22, 33]) {
    it(`kill -9 mid-write loses no flushed write (seed ${seed})`, async () => {
      const rng = new Prng(seed);
      const upper = join(dir.path, `upper-${seed}`);
      const ops = crashOps(seed, TOTAL);
      const flushed = await runWriter(
        [store.root, JSON.stringify(image), upper, String(seed), String(TOTAL)],
        rng.int(3, 12),
        rng.int(0, 15),
      );
      assert.ok(flushed > 0, 'at least one flush was acknowledged');
      const device = await ImageDevice.open({ image, store, upper: { dir: upper, mode: 'open' } });
      try {
        const disk = Buffer.alloc(base.length);
        await device.readAt(disk, 0);
        const durable = modelAfter(ops, flushed);
        let laterSeen = 0;
        for (let b = 0; b < CRASH_BLOCKS; b++) {
          const got = disk.subarray(b * CRASH_BS, (b + 1) * CRASH_BS);
          const flushedValue = durable[b] ?? base.subarray(b * CRASH_BS, (b + 1) * CRASH_BS);
          if (got.equals(flushedValue)) continue;
          const later = ops.slice(flushed).some((op) => {
            if (b < op.block || b >= op.block + op.count) return false;
            const v = op.data?.subarray((b - op.block) * CRASH_BS, (b - op.block + 1) * CRASH_BS);
            return got.equals(v ?? Buffer.alloc(CRASH_BS));
          });
          assert.ok(
            later,
            `seed ${seed}: block ${b} holds neither its flushed value nor a later write`,
          );
          laterSeen += 1;
        }
        console.log(
          `seed ${seed}: ${flushed} ops flushed before the kill, ${laterSeen} blocks hold later writes`,
        );
      } finally {
        await device.close();
      }
    });
  }
});

/**
 * `runBlockDeviceSuite`: the contract of `WritableDevice` (see `device.ts`)
 * as `node:test` cases. Every device implementation runs it; the testkit
 * re-exports it.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { WritableDevice } from '../device.js';
import { skipReason, type SuiteSkip } from './suite-skip.js';

/** Options of {@link runBlockDeviceSuite}. */
export interface BlockDeviceSuiteOptions {
  readonly name: string;
  /** A fresh device of `size` bytes that reads as zeros. */
  readonly create: (size: number) => Promise<WritableDevice>;
  /** Called after each test with the device it created. @default device.close() */
  readonly destroy?: (device: WritableDevice) => Promise<void>;
  readonly skip?: readonly SuiteSkip[];
}

const SIZE = 1 << 20;

/** Registers the block-device conformance tests for one implementation. */
export function runBlockDeviceSuite(options: BlockDeviceSuiteOptions): void {
  const test = (name: string, fn: (d: WritableDevice) => Promise<void>) => {
    const reason = skipReason(options.skip, name);
    it(name, reason === undefined ? {} : { skip: reason }, async () => {
      const device = await options.create(SIZE);
      try {
        await fn(device);
      } finally {
        await (options.destroy ?? ((d) => d.close()))(device);
      }
    });
  };
  const read = async (d: WritableDevice, offset: number, length: number) => {
    const b = Buffer.alloc(length);
    await d.readAt(b, offset);
    return b;
  };

  describe(`block device conformance: ${options.name}`, () => {
    dataTests(test, read);
    edgeTests(test, read);
  });
}

type Test = (name: string, fn: (d: WritableDevice) => Promise<void>) => void;
type Read = (d: WritableDevice, offset: number, length: number) => Promise<Buffer>;

function dataTests(test: Test, read: Read): void {
  test('reports its size and a power-of-two block size', (d) => {
    assert.equal(d.size, SIZE);
    assert.ok(d.blockSize >= 512 && (d.blockSize & (d.blockSize - 1)) === 0);
    return Promise.resolve();
  });

  test('a fresh device reads as zeros', async (d) => {
    assert.ok((await read(d, 0, SIZE)).equals(Buffer.alloc(SIZE)));
  });

  test('reads back aligned writes', async (d) => {
    const data = randomBytes(3 * d.blockSize);
    await d.writeAt(data, 2 * d.blockSize);
    assert.ok((await read(d, 2 * d.blockSize, data.length)).equals(data));
    assert.ok((await read(d, d.blockSize, d.blockSize)).equals(Buffer.alloc(d.blockSize)));
  });

  test('unaligned writes keep the neighbouring bytes', async (d) => {
    const base = randomBytes(4 * d.blockSize);
    await d.writeAt(base, 0);
    const patch = randomBytes(d.blockSize + 123);
    await d.writeAt(patch, 1000);
    const want = Buffer.from(base);
    patch.copy(want, 1000);
    assert.ok((await read(d, 0, base.length)).equals(want));
  });

  test('writeZeroesAt zeroes exactly the range', async (d) => {
    const base = randomBytes(4 * d.blockSize);
    await d.writeAt(base, 0);
    await d.writeZeroesAt(100, 2 * d.blockSize + 50);
    const want = Buffer.from(base);
    want.fill(0, 100, 100 + 2 * d.blockSize + 50);
    assert.ok((await read(d, 0, base.length)).equals(want));
  });

  test('trimAt zeroes whole blocks and keeps partial edges', async (d) => {
    const base = randomBytes(4 * d.blockSize);
    await d.writeAt(base, 0);
    await d.trimAt(d.blockSize - 10, 2 * d.blockSize + 20);
    const want = Buffer.from(base);
    want.fill(0, d.blockSize, 3 * d.blockSize);
    assert.ok((await read(d, 0, base.length)).equals(want));
  });
}

function edgeTests(test: Test, read: Read): void {
  test('overlapping writes land in call order', async (d) => {
    const a = Buffer.alloc(3 * d.blockSize, 0xaa);
    const b = Buffer.alloc(d.blockSize + 7, 0xbb);
    await Promise.all([d.writeAt(a, 0), d.writeAt(b, 5), d.writeZeroesAt(8, 2)]);
    const want = Buffer.from(a);
    b.copy(want, 5);
    want.fill(0, 8, 10);
    assert.ok((await read(d, 0, a.length)).equals(want));
  });

  test('zero-length operations are no-ops', async (d) => {
    await d.writeAt(Buffer.alloc(0), SIZE);
    await d.writeZeroesAt(SIZE, 0);
    await d.trimAt(0, 0);
    await d.readAt(Buffer.alloc(0), SIZE);
  });

  test('ranges outside the device are refused', async (d) => {
    const code = { code: 'STORAGE_OUT_OF_RANGE' };
    await assert.rejects(d.readAt(Buffer.alloc(2), SIZE - 1), code);
    await assert.rejects(d.writeAt(Buffer.alloc(1), SIZE), code);
    await assert.rejects(d.writeZeroesAt(-1, 1), code);
    await assert.rejects(d.trimAt(SIZE, 1), code);
  });

  test('flush resolves and a closed device refuses I/O', async (d) => {
    await d.writeAt(Buffer.alloc(10, 1), 0);
    await d.flush();
    await d.close();
    await d.close();
    await assert.rejects(d.readAt(Buffer.alloc(1), 0), { code: 'STORAGE_CLOSED' });
  });
}

import assert from 'node:assert/strict';
import { readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir, type TempDir } from '../../test/helpers/tmp.js';
import { Upper } from './upper.js';
import { JOURNAL_HEADER_SIZE, RECORD_SIZE } from './upper-journal.js';

const BS = 4096;
const header = { blockSize: BS, virtualSize: 1 << 20, stackHash: 'ab'.repeat(32) };
const block = (v: number, n = 1) => Buffer.alloc(n * BS, v);

async function readBlocks(u: Upper, b: number, n: number): Promise<Buffer> {
  const out = Buffer.alloc(n * BS);
  for (const seg of u.resolve(b, n)) {
    const dst = out.subarray((seg.block - b) * BS, (seg.block - b + seg.count) * BS);
    if (seg.kind === 'data') await u.readData(dst, seg.ref);
    else dst.fill(seg.kind === 'zero' ? 0 : 0xee);
  }
  return out;
}

describe('Upper', () => {
  let dir: TempDir;
  before(async () => (dir = await tempDir()));
  after(async () => dir.remove());

  it('creates, refuses to create twice, and refuses a missing upper on open', async () => {
    const d = join(dir.path, 'u0');
    const u = await Upper.open({ dir: d, mode: 'create', header });
    await u.close();
    await assert.rejects(Upper.open({ dir: d, mode: 'create', header }), {
      code: 'STORAGE_UPPER_EXISTS',
    });
    await assert.rejects(Upper.open({ dir: join(dir.path, 'none'), mode: 'open', header }), {
      code: 'STORAGE_UPPER_NOT_FOUND',
    });
    await assert.rejects(
      Upper.open({ dir: d, header: { ...header, stackHash: 'cd'.repeat(32) } }),
      {
        code: 'STORAGE_UPPER_MISMATCH',
      },
    );
  });

  it('replays data and zero records after a reopen', async () => {
    const d = join(dir.path, 'u1');
    const u = await Upper.open({ dir: d, header });
    await u.writeBlocks(2, block(1, 3));
    await u.zeroBlocks(3, 1);
    await u.flush();
    await u.close();
    const again = await Upper.open({ dir: d, mode: 'open', header });
    try {
      const got = await readBlocks(again, 1, 5);
      assert.ok(
        got.equals(Buffer.concat([block(0xee), block(1), block(0), block(1), block(0xee)])),
      );
    } finally {
      await again.close();
    }
  });

  it('rewrites flushed blocks in place, and appends rewrites between flushes', async () => {
    const d = join(dir.path, 'u2');
    const u = await Upper.open({ dir: d, header });
    try {
      await u.writeBlocks(0, block(1, 4));
      await u.writeBlocks(0, block(2, 4));
      assert.equal(u.dataBytes, 8 * BS, 'unflushed data is never overwritten');
      await u.flush();
      await u.writeBlocks(1, block(3, 2));
      assert.equal(u.dataBytes, 8 * BS, 'flushed data is rewritten in place');
      await u.writeBlocks(1, block(4, 1));
      assert.equal(u.dataBytes, 9 * BS, 'a second rewrite before the next flush appends');
      assert.ok(
        (await readBlocks(u, 0, 4)).equals(Buffer.concat([block(2), block(4), block(3), block(2)])),
      );
    } finally {
      await u.close();
    }
  });

  it('drops a torn journal tail and records whose data never made it', async () => {
    const d = join(dir.path, 'u3');
    const u = await Upper.open({ dir: d, header });
    await u.writeBlocks(0, block(1));
    await u.flush();
    await u.writeBlocks(1, block(2));
    await u.writeBlocks(2, block(3));
    await u.close();
    // The data of block 2's write is lost (as after a power cut), and half a record follows.
    const data = join(d, 'data');
    await truncate(data, (await stat(data)).size - BS);
    const journal = join(d, 'journal');
    await writeFile(
      journal,
      Buffer.concat([await readFile(journal), Buffer.alloc(RECORD_SIZE / 2, 7)]),
    );
    const again = await Upper.open({ dir: d, mode: 'open', header });
    try {
      const got = await readBlocks(again, 0, 3);
      assert.ok(got.equals(Buffer.concat([block(1), block(2), block(0xee)])));
      const size = (await stat(journal)).size;
      assert.equal(
        (size - JOURNAL_HEADER_SIZE) % RECORD_SIZE,
        0,
        'the journal was cut at a record boundary',
      );
      await again.writeBlocks(5, block(5));
      await again.flush();
    } finally {
      await again.close();
    }
    const third = await Upper.open({ dir: d, mode: 'open', header });
    try {
      assert.ok((await readBlocks(third, 5, 1)).equals(block(5)));
    } finally {
      await third.close();
    }
  });

  it('refuses a damaged journal header as STORAGE_UPPER_CORRUPT', async () => {
    const d = join(dir.path, 'u4');
    await (await Upper.open({ dir: d, header })).close();
    const journal = join(d, 'journal');
    const bytes = await readFile(journal);
    bytes[3] = 0;
    await writeFile(journal, bytes);
    await assert.rejects(Upper.open({ dir: d, header }), { code: 'STORAGE_UPPER_CORRUPT' });
  });
});

/**
 * The private-RAM interposer and the /proc-based RAM diff, with real
 * processes but no VM: a small Python program plays QEMU (opens the RAM
 * file read-write, maps it shared, writes pages, punches holes), the
 * interposer is built with the host compiler, and the diff is saved from
 * one process and applied into another.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { buildPrivateRamHelper, privateRamEnv } from '../src/qemu/private-ram-helper.js';
import {
  applyRamDiff,
  findRamMapping,
  saveRamDiff,
  scanDirtyRuns,
} from '../src/qemu/process-memory.js';
import { PAGE_SIZE } from '../src/qemu/ram-diff.js';

const PAGES = 16;

// Opens the file read-write and maps it shared, as QEMU does with share=on;
// then obeys one command per line and answers one line each.
const FAKE_QEMU = `
import ctypes, mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, ${PAGES * PAGE_SIZE}, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate64.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
print(hex(ctypes.addressof(ctypes.c_char.from_buffer(m))), flush=True)
for line in sys.stdin:
    cmd, *args = line.split()
    if cmd == 'fill':
        page, byte = int(args[0]), int(args[1])
        m[page * 4096:(page + 1) * 4096] = bytes([byte]) * 4096
        print('ok', flush=True)
    elif cmd == 'peek':
        print(m[int(args[0]) * 4096], flush=True)
    elif cmd == 'punch':
        r = libc.fallocate64(fd, 3, int(args[0]) * 4096, 4096)
        print(r, ctypes.get_errno(), flush=True)
    elif cmd == 'write':
        try:
            os.pwrite(fd, b'x', 0)
            print('written', flush=True)
        except OSError as e:
            print(e.errno, flush=True)
`;

interface FakeQemu {
  readonly child: ChildProcessWithoutNullStreams;
  readonly address: number;
  ask(line: string): Promise<string>;
}

async function fakeQemu(file: string, env: Record<string, string>): Promise<FakeQemu> {
  const child = spawn('python3', ['-c', FAKE_QEMU, file], { env: { ...process.env, ...env } });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const r = await lines.next();
    if (r.done === true) throw new Error('the fake QEMU ended');
    return r.value;
  };
  const address = parseInt(await next(), 16);
  return {
    child,
    address,
    ask: async (line) => {
      child.stdin.write(`${line}\n`);
      return next();
    },
  };
}

const sha = async (path: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

const python = await new Promise<boolean>((resolve) => {
  const p = spawn('python3', ['-c', 'import mmap, ctypes']);
  p.on('error', () => resolve(false));
  p.on('exit', (code) => resolve(code === 0));
});

describe('private RAM: interposer and RAM diff', { skip: !python && 'python3 is missing' }, () => {
  let dir = '';
  let helper = '';
  let base = '';
  const children: ChildProcessWithoutNullStreams[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-private-ram-'));
    helper = await buildPrivateRamHelper(join(dir, 'helpers'));
    base = join(dir, 'memory');
    // page i holds byte i + 1
    await writeFile(
      base,
      Buffer.concat(Array.from({ length: PAGES }, (_, i) => Buffer.alloc(PAGE_SIZE, i + 1))),
    );
  });
  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('reuses a built helper, and refuses a directory others can write', async () => {
    assert.equal(await buildPrivateRamHelper(join(dir, 'helpers')), helper);
    await mkdir(join(dir, 'open'), { mode: 0o777 });
    await chmod(join(dir, 'open'), 0o777);
    await assert.rejects(
      buildPrivateRamHelper(join(dir, 'open')),
      (e: Error & { code?: string }) =>
        e.code === 'VMM_DRIVER_UNAVAILABLE' && /nobody else can write/.test(e.message),
    );
  });

  it('maps the file copy-on-write, never writes it, turns hole punches into drops', async () => {
    const before = await sha(base);
    const q = await fakeQemu(base, privateRamEnv(helper, base));
    children.push(q.child);
    assert.equal(await q.ask('fill 2 170'), 'ok');
    assert.equal(await q.ask('fill 3 170'), 'ok');
    assert.equal(await q.ask('fill 9 187'), 'ok');
    assert.equal(await q.ask('peek 3'), '170');
    assert.equal(await q.ask('write'), '9', 'the descriptor is read-only (EBADF)');
    const ram = await findRamMapping(q.child.pid as number, base, PAGES * PAGE_SIZE);
    assert.equal(ram.address, q.address);
    assert.deepEqual(await scanDirtyRuns(ram), [
      { first: 2, count: 2 },
      { first: 9, count: 1 },
    ]);
    const info = await saveRamDiff(ram, join(dir, 'memory.diff'));
    assert.deepEqual(info, { pages: 3, fileBytes: 32 + 2 * 16 + 3 * PAGE_SIZE });
    assert.equal(await q.ask('punch 3'), '0 0');
    assert.equal(await q.ask('peek 3'), '4', 'the private copy is dropped: the file shows again');
    assert.deepEqual(await scanDirtyRuns(ram), [
      { first: 2, count: 1 },
      { first: 9, count: 1 },
    ]);
    assert.equal(await sha(base), before, 'the file is unchanged');
  });

  it('puts a saved diff into another process before it reads its RAM', async () => {
    const q = await fakeQemu(base, privateRamEnv(helper, base));
    children.push(q.child);
    const ram = await findRamMapping(q.child.pid as number, base, PAGES * PAGE_SIZE);
    assert.equal(await applyRamDiff(ram, join(dir, 'memory.diff')), 3);
    assert.deepEqual(await Promise.all([2, 3, 4, 9].map((p) => q.ask(`peek ${p}`))), [
      '170',
      '170',
      '5',
      '187',
    ]);
    assert.deepEqual(await scanDirtyRuns(ram), [
      { first: 2, count: 2 },
      { first: 9, count: 1 },
    ]);
  });

  it('refuses a diff made for another RAM size', async () => {
    const q = await fakeQemu(base, privateRamEnv(helper, base));
    children.push(q.child);
    const ram = await findRamMapping(q.child.pid as number, base, PAGES * PAGE_SIZE);
    await assert.rejects(
      applyRamDiff({ ...ram, bytes: ram.bytes / 2 }, join(dir, 'memory.diff')),
      (e: Error & { code?: string }) => e.code === 'VMM_SNAPSHOT_INVALID',
    );
  });

  it('without the interposer the same program writes the file (what it prevents)', async () => {
    const copy = join(dir, 'memory.copy');
    await writeFile(copy, await readFile(base));
    const q = await fakeQemu(copy, {});
    children.push(q.child);
    await q.ask('fill 0 255');
    assert.equal((await readFile(copy))[0], 255);
  });
});

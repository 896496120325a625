// The NBD server's error paths, driven by a hand-written client over a unix
// socket: requests that fail get an errno reply and the connection stays
// usable; protocol violations close the connection and are reported.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { STORAGE_CHANNELS } from '../src/events.js';
import { NbdHost } from '../src/nbd/nbd-host.js';
import { Cmd, Errno, IHAVEOPT, Opt, REQUEST_MAGIC } from '../src/nbd/protocol.js';
import { tempDir, type TempDir } from './helpers/tmp.js';

const SIZE = 1 << 20;

/** A minimal NBD client: reads exactly what it asks for. */
class Client {
  #buf = Buffer.alloc(0);
  #waiters: (() => void)[] = [];
  constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      for (const w of this.#waiters.splice(0)) w();
    });
    socket.on('close', () => {
      for (const w of this.#waiters.splice(0)) w();
    });
  }
  async read(n: number): Promise<Buffer> {
    while (this.#buf.length < n) {
      if (this.socket.destroyed || this.socket.readableEnded) throw new Error('closed');
      await new Promise<void>((r) => this.#waiters.push(r));
    }
    const out = this.#buf.subarray(0, n);
    this.#buf = this.#buf.subarray(n);
    return out;
  }
  static async open(path: string, name: string): Promise<Client> {
    const socket = connect(path);
    await once(socket, 'connect');
    const c = new Client(socket);
    await c.read(18);
    const flags = Buffer.alloc(4);
    flags.writeUInt32BE(3, 0);
    socket.write(flags);
    const n = Buffer.from(name);
    const data = Buffer.alloc(4 + n.length + 2);
    data.writeUInt32BE(n.length, 0);
    n.copy(data, 4);
    const opt = Buffer.alloc(16);
    opt.writeBigUInt64BE(IHAVEOPT, 0);
    opt.writeUInt32BE(Opt.go, 8);
    opt.writeUInt32BE(data.length, 12);
    socket.write(Buffer.concat([opt, data]));
    for (;;) {
      const h = await c.read(20);
      const body = await c.read(h.readUInt32BE(16));
      void body;
      if (h.readUInt32BE(12) === 1) return c;
      if (h.readUInt32BE(12) >= 0x80000000) throw new Error(`option refused ${h.readUInt32BE(12)}`);
    }
  }
  async request(type: number, offset: number, length: number, payload?: Buffer) {
    const r = Buffer.alloc(28);
    r.writeUInt32BE(REQUEST_MAGIC, 0);
    r.writeUInt16BE(type, 6);
    r.writeBigUInt64BE(7n, 8);
    r.writeBigUInt64BE(BigInt(offset), 16);
    r.writeUInt32BE(length, 24);
    this.socket.write(payload ? Buffer.concat([r, payload]) : r);
    const h = await this.read(16);
    const error = h.readUInt32BE(4);
    const data = type === Cmd.read && error === 0 ? await this.read(length) : undefined;
    return { error, data };
  }
}

describe('NBD protocol error paths', () => {
  let dir: TempDir;
  let host: NbdHost;
  let rw: string;
  let ro: string;

  before(async () => {
    dir = await tempDir();
    host = new NbdHost({ socketDir: join(dir.path, 'sock') });
    const base = {
      image: { virtualSize: SIZE, layers: [] },
      store: { kind: 'fs' as const, root: join(dir.path, 's') },
    };
    rw = await host.addExport('rw', { ...base, upper: { dir: join(dir.path, 'u') } });
    ro = await host.addExport('ro', base);
  });
  after(async () => {
    await host.close();
    await dir.remove();
  });

  it('answers a bad request with an errno and keeps serving', async () => {
    const c = await Client.open(rw, 'rw');
    try {
      assert.equal((await c.request(Cmd.read, SIZE - 10, 20)).error, Errno.EINVAL);
      assert.equal((await c.request(Cmd.write, SIZE, 4, Buffer.alloc(4))).error, Errno.EINVAL);
      assert.equal((await c.request(99, 0, 0)).error, Errno.EINVAL);
      assert.equal((await c.request(Cmd.write, 0, 4, Buffer.from('abcd'))).error, 0);
      const r = await c.request(Cmd.read, 0, 4);
      assert.equal(r.data?.toString(), 'abcd');
      assert.equal((await c.request(Cmd.flush, 0, 0)).error, 0);
    } finally {
      c.socket.destroy();
    }
    const stats = host.stats().exports.rw;
    assert.ok((stats?.errors ?? 0) >= 3);
  });

  it('refuses writes to a read-only export with EPERM', async () => {
    const c = await Client.open(ro, '');
    try {
      assert.equal((await c.request(Cmd.write, 0, 4, Buffer.alloc(4))).error, Errno.EPERM);
      assert.equal((await c.request(Cmd.trim, 0, 4096)).error, Errno.EPERM);
      assert.equal((await c.request(Cmd.read, 0, 4)).error, 0);
    } finally {
      c.socket.destroy();
    }
  });

  it('closes the connection on a bad request magic and reports it', async () => {
    const events: unknown[] = [];
    const onError = (e: unknown) => events.push(e);
    subscribe(STORAGE_CHANNELS.nbdError, onError);
    try {
      const c = await Client.open(rw, 'rw');
      c.socket.write(Buffer.alloc(28, 0xff));
      await once(c.socket, 'close');
      assert.ok(events.some((e) => (e as Record<string, unknown>)['error.code'] === 'protocol'));
    } finally {
      unsubscribe(STORAGE_CHANNELS.nbdError, onError);
    }
  });

  it('refuses an unknown export name during NBD_OPT_GO', async () => {
    await assert.rejects(Client.open(rw, 'other'), /option refused/);
  });
});

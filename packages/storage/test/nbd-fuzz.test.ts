/**
 * Fuzzes the NBD server (a real `NbdHost` with a writable export) with
 * malformed traffic: garbage and half-valid handshakes (random client
 * flags, option codes and lengths, truncated headers) and, after a valid
 * `NBD_OPT_GO`, random requests (bad magic, unknown commands and flags,
 * out-of-range and overflowing offsets, zero and huge lengths, truncated
 * headers and payloads).
 *
 * Each case requires the server to answer (an option reply or an NBD
 * reply) or close that connection within 1 s — unless the case itself
 * left the server legitimately waiting for bytes it announced — never to
 * crash; and a control connection opened before the run must still read
 * back what it wrote after every case. `AENV_FUZZ_ITERATIONS` runs more
 * cases; `AENV_FUZZ_SEED` replays a run; `AENV_FUZZ_DEBUG=1` prints each case.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fuzzIterations, runFuzz, type FuzzRandom } from '@aenv/shared';
import { NbdHost } from '../src/nbd/nbd-host.js';
import { Cmd, IHAVEOPT, MAX_PAYLOAD, Opt, REQUEST_MAGIC } from '../src/nbd/protocol.js';
import { tempDir, type TempDir } from './helpers/tmp.js';

const SIZE = 1 << 20;

/** A socket whose bytes are read on demand. */
class Wire {
  #buf = Buffer.alloc(0);
  #wake: (() => void) | undefined;
  closed = false;
  constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      this.#wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.#wake?.();
    });
    socket.on('error', () => undefined);
  }
  static async open(path: string): Promise<Wire> {
    const socket = connect(path);
    await once(socket, 'connect');
    return new Wire(socket);
  }
  /** `n` bytes, or undefined when the server closed or `ms` passed first. */
  async read(n: number, ms = 2000): Promise<Buffer | undefined> {
    const deadline = Date.now() + ms;
    while (this.#buf.length < n && !this.closed && Date.now() < deadline) {
      await new Promise<void>((r) => {
        this.#wake = r;
        setTimeout(r, Math.max(1, deadline - Date.now()));
      });
    }
    if (this.#buf.length < n) return undefined;
    const out = this.#buf.subarray(0, n);
    this.#buf = this.#buf.subarray(n);
    return out;
  }
  /** Whether any answer came or the server closed within `ms`. */
  async reacted(ms = 1000): Promise<boolean> {
    return (await this.read(1, ms)) !== undefined || this.closed;
  }
}

function option(code: number, data: Buffer, lengthOverride?: number): Buffer {
  const head = Buffer.alloc(16);
  head.writeBigUInt64BE(IHAVEOPT, 0);
  head.writeUInt32BE(code, 8);
  head.writeUInt32BE(lengthOverride ?? data.length, 12);
  return Buffer.concat([head, data]);
}

function goOption(name: string): Buffer {
  const n = Buffer.from(name);
  const data = Buffer.alloc(4 + n.length + 2);
  data.writeUInt32BE(n.length, 0);
  n.copy(data, 4);
  return option(Opt.go, data);
}

/** Completes the handshake for `name`. */
async function handshake(wire: Wire, name: string): Promise<void> {
  assert.ok(await wire.read(18), 'greeting');
  const flags = Buffer.alloc(4);
  flags.writeUInt32BE(3, 0);
  wire.socket.write(Buffer.concat([flags, goOption(name)]));
  for (;;) {
    const h = await wire.read(20);
    assert.ok(h, 'option reply');
    await wire.read(h.readUInt32BE(16));
    if (h.readUInt32BE(12) === 1) return;
    assert.ok(h.readUInt32BE(12) < 0x80000000, `option refused ${h.readUInt32BE(12)}`);
  }
}

function request(
  type: number,
  offset: bigint,
  length: number,
  opts: { magic?: number; flags?: number } = {},
): Buffer {
  const r = Buffer.alloc(28);
  r.writeUInt32BE(opts.magic ?? REQUEST_MAGIC, 0);
  r.writeUInt16BE(opts.flags ?? 0, 4);
  r.writeUInt16BE(type, 6);
  r.writeBigUInt64BE(9n, 8);
  r.writeBigUInt64BE(offset, 16);
  r.writeUInt32BE(length, 24);
  return r;
}

/** What a case saw: an answer or close, or a server waiting for announced bytes. */
interface Outcome {
  readonly reacted: boolean;
  readonly waiting: boolean;
  readonly sent?: string;
}

/** A garbage or half-valid handshake; resolves whether the server reacted. */
async function fuzzHandshake(rng: FuzzRandom, wire: Wire): Promise<Outcome> {
  if (!(await wire.read(18))) return { reacted: true, waiting: false };
  const flags = Buffer.alloc(4);
  flags.writeUInt32BE(rng.chance(0.7) ? rng.int(0, 4) : rng.int(0, 2 ** 31), 0);
  const shortFlags = rng.chance(0.1);
  const parts: Buffer[] = [shortFlags ? rng.bytes(rng.int(0, 4)) : flags];
  // A lying length or short flags may leave the stream mid-message: the server waits, rightly.
  let waiting = shortFlags;
  for (let n = rng.int(1, 4); n > 0; n--) {
    const roll = rng.int(0, 5);
    if (roll === 0)
      parts.push(rng.bytes(rng.int(16, 64))); // a whole header's worth: a bad magic
    else if (roll === 1) parts.push(goOption(rng.string(12)));
    else {
      const data = rng.bytes(rng.int(0, 40));
      const lie = rng.chance(0.3)
        ? rng.pick([0, 2 ** 32 - 1, data.length + 10, 65 << 10])
        : undefined;
      if (lie !== undefined && lie !== data.length && lie <= 64 << 10) waiting = true;
      parts.push(option(rng.chance(0.6) ? rng.int(0, 12) : rng.int(0, 2 ** 31), data, lie));
    }
  }
  const whole = Buffer.concat(parts);
  // A cut message leaves the server waiting for the rest, as the protocol says it should.
  const cut = rng.chance(0.15);
  const bytes = cut ? whole.subarray(0, rng.int(0, whole.length)) : whole;
  wire.socket.write(bytes);
  return {
    reacted: await wire.reacted(),
    waiting: waiting || cut,
    sent: bytes.toString('hex').slice(0, 200),
  };
}

/** A random request after a valid handshake; resolves whether the server reacted. */
async function fuzzRequest(rng: FuzzRandom, wire: Wire): Promise<Outcome> {
  const type = rng.chance(0.8)
    ? rng.pick([Cmd.read, Cmd.write, Cmd.trim, Cmd.flush, Cmd.writeZeroes, Cmd.disc])
    : rng.int(0, 65536);
  const offset = rng.pick([
    0n,
    BigInt(SIZE - 1),
    BigInt(SIZE),
    2n ** 63n,
    2n ** 64n - 1n,
    BigInt(rng.int(0, SIZE * 2)),
  ]);
  const length = rng.pick([0, 1, 512, SIZE, MAX_PAYLOAD + 1, 2 ** 32 - 1, rng.int(0, 8192)]);
  const magic = rng.chance(0.9) ? REQUEST_MAGIC : rng.int(0, 2 ** 32);
  const head = request(type, offset, length, {
    magic,
    flags: rng.chance(0.8) ? 0 : rng.int(0, 65536),
  });
  let payload: Buffer = Buffer.alloc(0);
  let waiting = false;
  if (type === Cmd.write && magic === REQUEST_MAGIC) {
    const sent = rng.chance(0.8) ? Math.min(length, 8192) : rng.int(0, 100);
    payload = rng.bytes(sent);
    waiting = sent < length && length <= MAX_PAYLOAD;
  }
  const bytes = Buffer.concat([head, payload]);
  const cut = rng.chance(0.1);
  const sent = cut ? bytes.subarray(0, rng.int(0, bytes.length)) : bytes;
  wire.socket.write(sent);
  if (type === Cmd.disc && magic === REQUEST_MAGIC) return { reacted: true, waiting: true };
  return {
    reacted: await wire.reacted(),
    waiting: waiting || cut,
    sent: sent.subarray(0, 28).toString('hex'),
  };
}

describe('NBD server fuzz', () => {
  let dir: TempDir;
  let host: NbdHost;
  let socketPath: string;
  let control: Wire;

  before(async () => {
    dir = await tempDir();
    host = new NbdHost({ socketDir: join(dir.path, 'sock') });
    socketPath = await host.addExport('rw', {
      image: { virtualSize: SIZE, layers: [] },
      store: { kind: 'fs', root: join(dir.path, 's') },
      upper: { dir: join(dir.path, 'u') },
    });
    control = await Wire.open(socketPath);
    await handshake(control, 'rw');
  });
  after(async () => {
    control?.socket.destroy();
    await host.close();
    await dir.remove();
  });

  /** The control connection still writes and reads back. */
  async function controlWorks(i: number): Promise<void> {
    const data = Buffer.alloc(512, i % 251);
    control.socket.write(Buffer.concat([request(Cmd.write, 4096n, 512), data]));
    const w = await control.read(16, 30_000);
    assert.ok(
      w !== undefined && w.readUInt32BE(4) === 0,
      `control write answered: ${w?.toString('hex') ?? (control.closed ? 'closed' : 'nothing')}`,
    );
    control.socket.write(request(Cmd.read, 4096n, 512));
    const r = await control.read(16, 30_000);
    const back = await control.read(512, 30_000);
    assert.ok(
      r !== undefined && r.readUInt32BE(4) === 0 && back?.equals(data),
      'control read back',
    );
  }

  it('answers or closes on malformed handshakes and requests; other connections keep working', async () => {
    const outcomes = { reacted: 0, waiting: 0 };
    const result = await runFuzz('NBD', { iterations: fuzzIterations(200) }, async (rng, i) => {
      const wire = await Wire.open(socketPath);
      try {
        let outcome: Outcome;
        if (rng.chance(0.4)) {
          outcome = await fuzzHandshake(rng, wire);
        } else {
          await handshake(wire, 'rw');
          outcome = { reacted: true, waiting: false };
          for (let n = rng.int(1, 6); n > 0 && !wire.closed && outcome.reacted; n--) {
            outcome = await fuzzRequest(rng, wire);
            if (outcome.waiting) break;
          }
        }
        if (process.env.AENV_FUZZ_DEBUG)
          console.log(i, Date.now() % 100000, JSON.stringify(outcome));
        if (outcome.reacted) outcomes.reacted++;
        else outcomes.waiting++;
        assert.ok(
          outcome.reacted || outcome.waiting,
          `the server neither answered nor closed after ${outcome.sent ?? ''}`,
        );
      } finally {
        wire.socket.destroy();
      }
      await controlWorks(i);
    });
    console.log(
      `# NBD fuzz: ${result.cases} cases, seed ${result.seed}; answered or closed ${outcomes.reacted}, waiting for announced bytes ${outcomes.waiting}`,
    );
    assert.ok(host.stats().exports.rw !== undefined, 'the export is still served');
  });
});

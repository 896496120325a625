import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newCounters, type NbdExport, type NbdProvider } from './nbd-export.js';
import { answerOption } from './nbd-handshake.js';
import { Opt, Rep, TxFlag } from './protocol.js';

const provider = { size: 1 << 20, blockSize: 4096, readOnly: false } as unknown as NbdProvider;
const exp: NbdExport = { name: 'disk', provider, counters: newCounters() };
const lookup = (n: string) => (n === 'disk' || n === '' ? exp : undefined);
const names = () => ['disk'];

function goData(name: string, infos: number[] = []): Buffer {
  const b = Buffer.alloc(4 + name.length + 2 + infos.length * 2);
  b.writeUInt32BE(name.length, 0);
  b.write(name, 4);
  b.writeUInt16BE(infos.length, 4 + name.length);
  infos.forEach((v, i) => b.writeUInt16BE(v, 6 + name.length + i * 2));
  return b;
}

const replyType = (r: Buffer) => r.readUInt32BE(12);

describe('NBD option haggling', () => {
  it('NBD_OPT_GO sends export info, block sizes and ACK, then starts', () => {
    const out = answerOption(Opt.go, goData('disk', [3]), lookup, names, true);
    assert.equal(out.start, exp);
    assert.deepEqual(out.replies.map(replyType), [Rep.info, Rep.info, Rep.ack]);
    const info = out.replies[0] as Buffer;
    assert.equal(info.readUInt16BE(20), 0);
    assert.equal(info.readBigUInt64BE(22), BigInt(1 << 20));
    const flags = info.readUInt16BE(30);
    assert.ok(
      flags & TxFlag.sendFlush && flags & TxFlag.sendTrim && flags & TxFlag.sendWriteZeroes,
    );
    assert.equal(flags & TxFlag.readOnly, 0);
    const sizes = out.replies[1] as Buffer;
    assert.deepEqual(
      [
        sizes.readUInt16BE(20),
        sizes.readUInt32BE(22),
        sizes.readUInt32BE(26),
        sizes.readUInt32BE(30),
      ],
      [3, 1, 4096, 32 << 20],
    );
  });

  it('NBD_OPT_INFO answers without starting; unknown names get ERR_UNKNOWN', () => {
    assert.equal(answerOption(Opt.info, goData('disk'), lookup, names, true).start, undefined);
    const out = answerOption(Opt.go, goData('nope'), lookup, names, true);
    assert.deepEqual(out.replies.map(replyType), [Rep.errUnknown]);
  });

  it('malformed GO data gets ERR_INVALID', () => {
    const bad = goData('disk', [3]).subarray(0, 9);
    assert.deepEqual(answerOption(Opt.go, bad, lookup, names, true).replies.map(replyType), [
      Rep.errInvalid,
    ]);
  });

  it('lists exports, refuses structured replies, acks ABORT and closes', () => {
    const list = answerOption(Opt.list, Buffer.alloc(0), lookup, names, true);
    assert.deepEqual(list.replies.map(replyType), [Rep.server, Rep.ack]);
    assert.equal((list.replies[0] as Buffer).toString('utf8', 24), 'disk');
    const sr = answerOption(Opt.structuredReply, Buffer.alloc(0), lookup, names, true);
    assert.deepEqual(sr.replies.map(replyType), [Rep.errUnsup]);
    const abort = answerOption(Opt.abort, Buffer.alloc(0), lookup, names, true);
    assert.equal(abort.close, true);
  });

  it('EXPORT_NAME replies size and flags (with zero padding unless NO_ZEROES) or hangs up', () => {
    const ok = answerOption(Opt.exportName, Buffer.from('disk'), lookup, names, false);
    assert.equal((ok.replies[0] as Buffer).length, 134);
    assert.equal(ok.start, exp);
    const none = answerOption(Opt.exportName, Buffer.from('x'), lookup, names, true);
    assert.equal(none.close, true);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyQmp, encodeQmpCommand, QmpLineReader } from './qmp-framing.js';

describe('QmpLineReader', () => {
  it('splits CRLF-terminated JSON across arbitrary chunk boundaries', () => {
    const r = new QmpLineReader();
    const wire =
      '{"QMP": {"version": {}, "capabilities": []}}\r\n{"return": {}, "id": 1}\r\n{"event": "STOP", "data": {}, "timestamp": {}}\r\n';
    const out = [];
    for (let i = 0; i < wire.length; i += 7) out.push(...r.push(Buffer.from(wire.slice(i, i + 7))));
    assert.deepEqual(
      out.map((m) => m.kind),
      ['greeting', 'reply', 'event'],
    );
    assert.equal(r.buffered, 0);
  });

  it('keeps a partial line until it is complete, including split UTF-8', () => {
    const r = new QmpLineReader();
    const bytes = Buffer.from('{"return": "é", "id": 2}\n');
    const cut = bytes.indexOf(0xc3) + 1;
    assert.deepEqual(r.push(bytes.subarray(0, cut)), []);
    assert.deepEqual(r.push(bytes.subarray(cut)), [{ kind: 'reply', id: 2, ok: true, value: 'é' }]);
  });

  it('throws on garbage', () => {
    assert.throws(() => new QmpLineReader().push('not json\n'));
    assert.throws(() => classifyQmp([1]), /not an object/);
    assert.throws(() => classifyQmp({ foo: 1 }), /unrecognised/);
  });
});

describe('classifyQmp', () => {
  it('reads error replies and events', () => {
    assert.deepEqual(classifyQmp({ error: { class: 'CommandNotFound', desc: 'nope' }, id: 3 }), {
      kind: 'reply',
      id: 3,
      ok: false,
      errorClass: 'CommandNotFound',
      errorDesc: 'nope',
    });
    assert.deepEqual(classifyQmp({ event: 'MIGRATION', data: { status: 'completed' } }), {
      kind: 'event',
      event: 'MIGRATION',
      data: { status: 'completed' },
    });
  });
});

describe('encodeQmpCommand', () => {
  it('writes one line with the id, arguments only when given', () => {
    assert.equal(encodeQmpCommand('stop', undefined, 4), '{"execute":"stop","id":4}\r\n');
    assert.equal(
      encodeQmpCommand('migrate', { uri: 'exec:cat' }, 5),
      '{"execute":"migrate","id":5,"arguments":{"uri":"exec:cat"}}\r\n',
    );
  });
});

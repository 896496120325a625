import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { AenvError } from './aenv-error.js';
import { parseJsonObject, readBody } from './http-body.js';

const req = (...chunks: string[]): IncomingMessage =>
  Readable.from(chunks.map((c) => Buffer.from(c))) as unknown as IncomingMessage;
const invalid = (err: unknown): boolean =>
  err instanceof AenvError && err.code === 'API_BODY_INVALID';

describe('http bodies', () => {
  it('reads a body up to its bound and refuses one past it', async () => {
    assert.equal((await readBody(req('ab', 'cd'), 4)).toString(), 'abcd');
    await assert.rejects(readBody(req('ab', 'cde'), 4), invalid);
  });

  it('parses a JSON object; empty is {}; anything else is API_BODY_INVALID', () => {
    assert.deepEqual(parseJsonObject(Buffer.from(' {"a":1} ')), { a: 1 });
    assert.deepEqual(parseJsonObject(Buffer.from('  ')), {});
    for (const bad of ['{', '[1]', 'null', '3'])
      assert.throws(() => parseJsonObject(Buffer.from(bad)), invalid, bad);
  });
});

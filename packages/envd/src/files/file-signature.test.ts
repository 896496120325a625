/**
 * Unit tests for signed file URLs: the signature format and the access rule.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { EnvdState } from '../state/envd-state.js';
import { UserDb } from '../users/user-db.js';
import { authorizeFileRequest, fileSignature } from './file-signature.js';

function state(token?: string): EnvdState {
  const s = new EnvdState(new UserDb('/nonexistent', '/nonexistent'));
  s.accessToken = token;
  return s;
}

const code = (c: string) => (e: unknown) => e instanceof AenvError && e.code === c;

describe('fileSignature', () => {
  it('is v1_ + unpadded base64 of sha256 over path:op:user:token[:expiry]', () => {
    const digest = createHash('sha256')
      .update('/a b:read::tok')
      .digest('base64')
      .replace(/=+$/, '');
    assert.equal(fileSignature('/a b', 'read', '', 'tok'), `v1_${digest}`);
    const withExp = createHash('sha256')
      .update('p:write:user:tok:123')
      .digest('base64')
      .replace(/=+$/, '');
    assert.equal(fileSignature('p', 'write', 'user', 'tok', 123), `v1_${withExp}`);
    assert.doesNotMatch(fileSignature('p', 'read', '', 'tok'), /=/);
  });
});

describe('authorizeFileRequest', () => {
  const q = (o: Record<string, string>) => new URLSearchParams(o);

  it('lets everything through without a token', () => {
    authorizeFileRequest(state(), undefined, q({}), 'read');
  });

  it('accepts the token header or a matching signature', () => {
    authorizeFileRequest(state('t'), 't', q({}), 'write');
    const sig = fileSignature('f', 'read', 'u', 't');
    authorizeFileRequest(
      state('t'),
      undefined,
      q({ path: 'f', username: 'u', signature: sig }),
      'read',
    );
  });

  it('refuses wrong tokens, missing or wrong signatures, wrong operations', () => {
    assert.throws(
      () => authorizeFileRequest(state('t'), 'x', q({}), 'read'),
      code('ENVD_TOKEN_INVALID'),
    );
    assert.throws(
      () => authorizeFileRequest(state('t'), undefined, q({ path: 'f' }), 'read'),
      code('ENVD_SIGNATURE_INVALID'),
    );
    const sig = fileSignature('f', 'read', '', 't');
    assert.throws(
      () => authorizeFileRequest(state('t'), undefined, q({ path: 'f', signature: sig }), 'write'),
      code('ENVD_SIGNATURE_INVALID'),
    );
    assert.throws(
      () => authorizeFileRequest(state('t'), undefined, q({ path: 'g', signature: sig }), 'read'),
      code('ENVD_SIGNATURE_INVALID'),
    );
  });

  it('honours and enforces the expiration', () => {
    const now = 1_000_000_000_000;
    const exp = now / 1000 + 60;
    const sig = fileSignature('f', 'read', '', 't', exp);
    const query = q({ path: 'f', signature: sig, signature_expiration: String(exp) });
    authorizeFileRequest(state('t'), undefined, query, 'read', now);
    assert.throws(
      () => authorizeFileRequest(state('t'), undefined, query, 'read', now + 61_000),
      code('ENVD_SIGNATURE_EXPIRED'),
    );
    const noExp = q({ path: 'f', signature: sig });
    assert.throws(
      () => authorizeFileRequest(state('t'), undefined, noExp, 'read', now),
      code('ENVD_SIGNATURE_INVALID'),
    );
  });
});

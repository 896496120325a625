import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SessionStore } from './session-store.js';
import { parseCookies, sessionCookie, clearedSessionCookie } from './cookies.js';

describe('SessionStore', () => {
  it('maps an opaque id to its key until the TTL ends', () => {
    let now = 1000;
    const s = new SessionStore({ ttlMs: 5000, now: () => now });
    const id = s.create('e2b_key');
    assert.match(id, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(!id.includes('e2b_key'));
    assert.equal(s.keyOf(id), 'e2b_key');
    assert.equal(s.expiresAt(id), 6000);
    now = 6000;
    assert.equal(s.keyOf(id), undefined);
    assert.equal(s.size, 0);
  });

  it('refuses unknown and empty ids, and ends sessions by id or by key', () => {
    const s = new SessionStore();
    const a = s.create('k1');
    const b = s.create('k1');
    const c = s.create('k2');
    assert.equal(s.keyOf(undefined), undefined);
    assert.equal(s.keyOf(''), undefined);
    assert.equal(s.keyOf('forged'), undefined);
    s.delete(a);
    assert.equal(s.keyOf(a), undefined);
    s.deleteKey('k1');
    assert.equal(s.keyOf(b), undefined);
    assert.equal(s.keyOf(c), 'k2');
  });

  it('drops the oldest session when full', () => {
    const s = new SessionStore({ maxSessions: 2 });
    const first = s.create('k');
    const second = s.create('k');
    const third = s.create('k');
    assert.equal(s.keyOf(first), undefined);
    assert.equal(s.keyOf(second), 'k');
    assert.equal(s.keyOf(third), 'k');
  });
});

describe('session cookies', () => {
  it('are HttpOnly, SameSite=Strict, Path=/ui, Secure over TLS', () => {
    const c = sessionCookie('abc', 3_600_000, false);
    assert.equal(c, 'aenv_session=abc; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=3600');
    assert.match(sessionCookie('abc', 1000, true), /; Secure$/);
    assert.match(clearedSessionCookie(false), /^aenv_session=; .*Max-Age=0/);
  });

  it('parses a Cookie header; the first of duplicates wins', () => {
    const m = parseCookies('a=1; aenv_session="xyz"; a=2; bad; =x');
    assert.equal(m.get('a'), '1');
    assert.equal(m.get('aenv_session'), 'xyz');
    assert.equal(m.size, 2);
  });
});

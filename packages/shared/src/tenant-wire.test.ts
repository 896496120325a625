/**
 * Tests of the tenant wire helpers: id and quota validation, key hashing.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from './aenv-error.js';
import { hashApiKey, parseTenantId, parseTenantQuotas } from './tenant-wire.js';

describe('tenant wire', () => {
  it('accepts tenant ids of the documented shape and refuses the rest', () => {
    assert.equal(parseTenantId('team-a.1_x'), 'team-a.1_x');
    for (const bad of ['', '-a', 'A', 'a/b', 'a'.repeat(64), 7, null]) {
      assert.throws(
        () => parseTenantId(bad),
        (e: unknown) => e instanceof AenvError && e.code === 'TENANT_ID_INVALID',
      );
    }
  });

  it('validates quotas: known names, non-negative, integers except the rate', () => {
    assert.deepEqual(parseTenantQuotas({ maxSandboxes: 3, createsPerSecond: 0.5 }), {
      maxSandboxes: 3,
      createsPerSecond: 0.5,
    });
    assert.deepEqual(parseTenantQuotas({ maxVcpus: null }, true), { maxVcpus: null });
    for (const bad of [
      { maxVcpus: null },
      { maxSandboxes: 1.5 },
      { maxMemoryMB: -1 },
      { other: 1 },
      [],
    ]) {
      assert.throws(
        () => parseTenantQuotas(bad),
        (e: unknown) => e instanceof AenvError && e.code === 'API_BODY_INVALID',
      );
    }
  });

  it('hashes keys to a stable hex digest that differs per key', () => {
    assert.match(hashApiKey('e2b_x'), /^[0-9a-f]{64}$/);
    assert.equal(hashApiKey('e2b_x'), hashApiKey('e2b_x'));
    assert.notEqual(hashApiKey('e2b_x'), hashApiKey('e2b_y'));
  });
});

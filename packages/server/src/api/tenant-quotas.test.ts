/**
 * Tests of the tenant quota guard on its own: reservations against
 * concurrent starts, records being created counted once, the rate bucket
 * on a made-up clock.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError, type TenantQuotas } from '@aenv/shared';
import type { SandboxRecord } from '../orchestrator/sandbox.js';
import { TenantQuotaGuard, usageOfRecords } from './tenant-quotas.js';

const ONE = { sandboxes: 1, vcpus: 2, memoryMB: 512, creates: 1 };

function record(tenant: string, state: string): SandboxRecord {
  return { tenant, state, vcpus: 2, memoryMiB: 512 } as unknown as SandboxRecord;
}

function refused(retry: number, quota: string) {
  return (e: unknown): boolean =>
    e instanceof AenvError &&
    e.code === 'TENANT_QUOTA_EXCEEDED' &&
    e.fields.quota === quota &&
    e.fields.retryAfterSeconds === retry;
}

describe('TenantQuotaGuard', () => {
  it('counts reservations in flight, and releases them once', () => {
    const guard = new TenantQuotaGuard({
      quotasOf: () => ({ maxSandboxes: 2 }),
      usageOf: () => ({ sandboxes: 0, vcpus: 0, memoryMB: 0 }),
    });
    const r1 = guard.reserve('a', ONE);
    const r2 = guard.reserve('a', ONE);
    assert.throws(() => guard.reserve('a', ONE), refused(5, 'maxSandboxes'));
    assert.doesNotThrow(() => guard.reserve('b', ONE), 'another tenant has its own count');
    r1();
    r1();
    assert.equal(guard.usage('a').sandboxes, 1, 'a second release changes nothing');
    r2();
    assert.equal(guard.usage('a').sandboxes, 0);
  });

  it('does not count a sandbox being created twice (record + reservation)', () => {
    const records = [record('a', 'running'), record('a', 'creating'), record('b', 'running')];
    assert.deepEqual(usageOfRecords(records, 'a'), { sandboxes: 1, vcpus: 2, memoryMB: 512 });
    const paused = [record('a', 'paused'), record('a', 'resuming')];
    assert.deepEqual(usageOfRecords(paused, 'a'), { sandboxes: 2, vcpus: 0, memoryMB: 0 });
  });

  it('refuses vCPU and memory beyond the quota, naming it', () => {
    const quotas: TenantQuotas = { maxVcpus: 3, maxMemoryMB: 600 };
    const guard = new TenantQuotaGuard({
      quotasOf: () => quotas,
      usageOf: () => ({ sandboxes: 0, vcpus: 0, memoryMB: 0 }),
    });
    assert.throws(() => guard.reserve('a', { ...ONE, vcpus: 4 }), refused(5, 'maxVcpus'));
    assert.throws(() => guard.reserve('a', { ...ONE, memoryMB: 601 }), refused(5, 'maxMemoryMB'));
    guard.reserve('a', ONE);
  });

  it('limits the create rate with a token bucket and says when to retry', () => {
    let now = 0;
    const guard = new TenantQuotaGuard({
      quotasOf: () => ({ createsPerSecond: 0.5 }),
      usageOf: () => ({ sandboxes: 0, vcpus: 0, memoryMB: 0 }),
      now: () => now,
    });
    guard.reserve('a', ONE)();
    assert.throws(() => guard.reserve('a', ONE), refused(2, 'createsPerSecond'));
    now = 2000;
    assert.doesNotThrow(() => guard.reserve('a', ONE)());
    assert.doesNotThrow(
      () => guard.reserve('a', { ...ONE, creates: 0 }),
      'a resume takes no token',
    );
  });
});

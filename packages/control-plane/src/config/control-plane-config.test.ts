// The control plane's tenant quota defaults from the environment: the
// per-tenant `tenants.limits` override of maxSandboxes, the other defaults,
// and a bad limits entry refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { loadControlPlaneConfig, tenantQuotaDefaults } from './control-plane-config.js';

describe('tenantQuotaDefaults', () => {
  it('gives each tenant the configured defaults, limits overriding maxSandboxes', () => {
    const config = loadControlPlaneConfig(undefined, {
      AENV_TENANT_MAX_SANDBOXES: '10',
      AENV_TENANT_LIMITS: 'acme=2',
      AENV_TENANT_MAX_VCPUS: '16',
      AENV_TENANT_CREATES_PER_SECOND: '5',
    });
    const of = tenantQuotaDefaults(config);
    assert.deepEqual(of('acme'), {
      maxSandboxes: 2,
      maxVcpus: 16,
      maxMemoryMB: 0,
      createsPerSecond: 5,
    });
    assert.equal(of('other').maxSandboxes, 10);
  });

  it('refuses a limits entry that is not TENANT=N', () => {
    const config = loadControlPlaneConfig(undefined, { AENV_TENANT_LIMITS: 'acme=two' });
    assert.throws(
      () => tenantQuotaDefaults(config),
      (err) => err instanceof AenvError && err.code === 'CONFIG_INVALID_VALUE',
    );
  });
});

// `aenv admin tenant|key` against a REAL node (API, SQLite tenant store,
// orchestrator) whose machines are stand-ins running the real envd on this
// host (helpers/envd-standin-launcher.ts): tenants with quotas, a member key
// that works and sees only its tenant, key listing without keys, revocation,
// and the errors each step prints. Also checks at compile time that the
// SDK's admin types are the shapes of @aenv/shared's tenant wire.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as sdk from '@aenv/sdk';
import type * as wire from '@aenv/shared';
import { standInUnavailable } from './helpers/envd-standin-launcher.js';
import { runAenv } from './helpers/run-aenv.js';
import { startStandInNode, type StandInNode } from './helpers/standin-node.js';

/** true when A and B are the same shape. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameShapes: [
  Same<sdk.TenantView, wire.TenantView>,
  Same<sdk.TenantQuotas, wire.TenantQuotas>,
  Same<sdk.TenantQuotasUpdate, wire.UpdateTenantBody['quotas']>,
  Same<sdk.ApiKeyView, wire.ApiKeyView>,
  Same<sdk.CreatedApiKey, wire.CreatedApiKey>,
  Same<sdk.CreateTenantBody, wire.CreateTenantBody>,
  Same<sdk.CreateApiKeyBody, wire.CreateApiKeyBody>,
] = [true, true, true, true, true, true, true];

const noEnvd = standInUnavailable();
let t: StandInNode;

before(async () => {
  t = await startStandInNode();
});

after(async () => {
  await t?.close();
});

function aenv(argv: readonly string[], key?: string) {
  return runAenv(argv, key === undefined ? t.env : { ...t.env, AENV_API_KEY: key });
}

describe('aenv admin against a node', { timeout: 120_000 }, () => {
  let memberKey = '';
  let memberKeyId = '';

  it('the SDK admin types mirror the shared wire', () => {
    assert.ok(sameShapes.every((s) => s));
  });

  it('creates a tenant with quotas, and refuses bad or duplicate ones', async () => {
    const created = await aenv(['admin', 'tenant', 'create', 'team-b', '--max-sandboxes', '1']);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout, 'team-b\n');
    const again = await aenv(['admin', 'tenant', 'create', 'team-b']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^aenv admin tenant create: .*exists \(TENANT_EXISTS\)\n/);
    const bad = await aenv(['admin', 'tenant', 'create', 'Team!']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /\(TENANT_ID_INVALID\)/);
    const frac = await aenv(['admin', 'tenant', 'create', 'x', '--max-vcpus', '1.5']);
    assert.equal(frac.code, 2);
    assert.match(frac.stderr, /--max-vcpus expects a non-negative integer \(got '1\.5'\)/);
    const json = await aenv([
      'admin',
      'tenant',
      'create',
      'team-c',
      '--creates-per-second',
      '0.5',
      '--json',
    ]);
    assert.deepEqual(JSON.parse(json.stdout).quotas, { createsPerSecond: 0.5 });
  });

  it('creates a member key, shown once; listings show only its prefix', async () => {
    const made = await aenv(['admin', 'key', 'create', '--tenant', 'team-b', '--name', 'ci']);
    assert.equal(made.code, 0, made.stderr);
    memberKey = made.stdout.trim();
    assert.match(memberKey, /^\S{20,}$/);
    assert.match(made.stderr, /member key \S+ for tenant 'team-b'.*will not be shown again/);
    const listed = await aenv(['admin', 'key', 'ls', '--tenant', 'team-b', '-o', 'json']);
    const keys = JSON.parse(listed.stdout) as sdk.ApiKeyView[];
    assert.equal(keys.length, 1);
    memberKeyId = keys[0]?.id ?? '';
    assert.deepEqual(
      { ...keys[0], id: '', createdAt: '' },
      {
        id: '',
        tenant: 'team-b',
        name: 'ci',
        role: 'member',
        prefix: memberKey.slice(0, 12),
        createdAt: '',
      },
    );
    const table = await aenv(['admin', 'key', 'ls', '-o', 'table']);
    assert.ok(table.stdout.includes(memberKey.slice(0, 12)));
    assert.ok(!table.stdout.includes(memberKey), 'never the key itself');
    assert.match(table.stdout, /^KEY ID +TENANT +NAME +ROLE +PREFIX/);
    assert.ok(table.stdout.includes(' default '), 'the local admin key is listed too');
    const quiet = await aenv(['admin', 'key', 'ls', '--tenant', 'team-b', '-q']);
    assert.equal(quiet.stdout, `${memberKeyId}\n`);
    const missing = await aenv(['admin', 'key', 'create', '--tenant', 'nope']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /\(TENANT_NOT_FOUND\)/);
    assert.equal((await aenv(['admin', 'key', 'create'])).code, 2, '--tenant is required');
    const full = await aenv([
      'admin',
      'key',
      'create',
      '--tenant',
      'team-c',
      '--role',
      'admin',
      '--json',
    ]);
    const fullKey = JSON.parse(full.stdout) as sdk.CreatedApiKey;
    assert.equal(fullKey.role, 'admin');
    assert.equal(fullKey.prefix, fullKey.key.slice(0, 12));
  });

  it('the member key works within its tenant, and is no admin', async () => {
    const ls = await aenv(['ls', '-o', 'json'], memberKey);
    assert.equal(ls.code, 0, ls.stderr);
    assert.deepEqual(JSON.parse(ls.stdout), []);
    const admin = await aenv(['admin', 'tenant', 'ls'], memberKey);
    assert.equal(admin.code, 1);
    assert.match(admin.stderr, /\(TENANT_ADMIN_REQUIRED\)\n {2}This needs an admin key/);
  });

  it('shows usage against quotas, and keeps a tenant that owns sandboxes', async (ctx) => {
    if (noEnvd !== undefined) {
      ctx.skip(noEnvd);
      return;
    }
    const member = new sdk.AenvClient({ apiUrl: t.node.url, apiKey: memberKey, env: {} });
    const sbx = await member.sandboxes.create('base');
    try {
      await assert.rejects(member.sandboxes.create('base'), (err: unknown) => {
        return err instanceof sdk.ResourceExhaustedError && err.code === 'TENANT_QUOTA_EXCEEDED';
      });
      const show = await aenv(['admin', 'tenant', 'show', 'team-b']);
      assert.match(show.stdout, /^Tenant: +team-b\n/);
      assert.match(show.stdout, /\nSandboxes: +1 \(limit 1\)\n/);
      assert.match(show.stdout, /\nMemory: +256 MiB \(no limit\)\n/);
      const ls = await aenv(['admin', 'tenant', 'ls', '-o', 'table']);
      assert.match(ls.stdout, /\nteam-b +1\/1 +1\/- +256\/- +- +/);
      const rm = await aenv(['admin', 'tenant', 'rm', 'team-b']);
      assert.equal(rm.code, 1);
      assert.match(rm.stderr, /^aenv admin tenant rm team-b: .*\(TENANT_NOT_EMPTY\)\n/);
      const others = await aenv(['ls', '-o', 'json']);
      assert.ok(
        !(JSON.parse(others.stdout) as { sandboxID: string }[]).some(
          (s) => s.sandboxID === sbx.sandboxId,
        ),
        "the default tenant's admin key lists only its own sandboxes",
      );
    } finally {
      await sbx.kill();
    }
  });

  it('sets and clears quotas, and shows them', async () => {
    const set = await aenv([
      'admin',
      'tenant',
      'set',
      'team-b',
      '--max-vcpus',
      '4',
      '--max-memory-mb',
      '2048',
      '--max-sandboxes',
      'none',
    ]);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /\nSandboxes: +0 \(no limit\)\n/);
    const show = await aenv(['admin', 'tenant', 'show', 'team-b', '--json']);
    const view = JSON.parse(show.stdout) as sdk.TenantView;
    assert.deepEqual(view.quotas, { maxVcpus: 4, maxMemoryMB: 2048 });
    assert.deepEqual(view.usage, { sandboxes: 0, vcpus: 0, memoryMB: 0 });
    const text = await aenv(['admin', 'tenant', 'show', 'team-b']);
    assert.match(text.stdout, /\nvCPUs: +0 \(limit 4\)\n/);
    assert.match(text.stdout, /\nMemory: +0 MiB \(limit 2048 MiB\)\n/);
    await aenv(['admin', 'tenant', 'set', 'team-b', '--max-vcpus', '0']);
    const cleared = await aenv(['admin', 'tenant', 'show', 'team-b', '--json']);
    assert.deepEqual(JSON.parse(cleared.stdout).quotas, { maxMemoryMB: 2048 });
    assert.equal((await aenv(['admin', 'tenant', 'set', 'team-b'])).code, 2, 'nothing to set');
    const bad = await aenv(['admin', 'tenant', 'set', 'team-b', '--max-vcpus', 'lots']);
    assert.equal(bad.code, 2);
    const ids = await aenv(['admin', 'tenant', 'ls', '-q']);
    assert.deepEqual(ids.stdout.trim().split('\n').sort(), ['default', 'team-b', 'team-c']);
  });

  it('revokes the key: refused from the next request on', async () => {
    const revoked = await aenv(['admin', 'key', 'revoke', memberKeyId]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, `${memberKeyId}\n`);
    const res = await fetch(`${t.node.url}/sandboxes`, { headers: { 'x-api-key': memberKey } });
    assert.equal(res.status, 401);
    const ls = await aenv(['ls'], memberKey);
    assert.equal(ls.code, 1);
    assert.match(ls.stderr, /\(API_UNAUTHENTICATED\)/);
    const listed = await aenv(['admin', 'key', 'ls', '--tenant', 'team-b', '-o', 'json']);
    assert.ok((JSON.parse(listed.stdout) as sdk.ApiKeyView[])[0]?.revokedAt);
    const unknown = await aenv(['admin', 'key', 'revoke', 'no-such-key']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /\(API_KEY_NOT_FOUND\)/);
  });

  it('removes tenants', async () => {
    const rm = await aenv(['admin', 'tenant', 'rm', 'team-b', 'team-c']);
    assert.equal(rm.code, 0, rm.stderr);
    assert.equal(rm.stdout, 'team-b\nteam-c\n');
    const show = await aenv(['admin', 'tenant', 'show', 'team-b']);
    assert.equal(show.code, 1);
    assert.match(show.stderr, /\(TENANT_NOT_FOUND\)/);
  });

  it('answers family help and unknown subcommands', async () => {
    const admin = await aenv(['admin', '--help']);
    assert.equal(admin.code, 0);
    assert.match(admin.stdout, /\n {2}tenant create +Create a tenant/);
    assert.match(admin.stdout, /\n {2}key revoke +Revoke API keys/);
    const tenant = await aenv(['admin', 'tenant']);
    assert.equal(tenant.code, 2);
    assert.match(tenant.stdout, /^Usage: aenv admin tenant <command>/);
    const typo = await aenv(['admin', 'tenant', 'lst']);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /unknown command 'admin tenant lst'/);
  });
});

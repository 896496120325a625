import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proxyTargetOf } from './proxy-target.js';

describe('proxyTargetOf', () => {
  it('routes by E2B headers, defaulting the port to envd', () => {
    assert.deepEqual(
      proxyTargetOf({ 'e2b-sandbox-id': 'abc', 'e2b-sandbox-port': '8080', host: 'x' }, null),
      { sandboxId: 'abc', port: 8080 },
    );
    assert.deepEqual(proxyTargetOf({ 'e2b-sandbox-id': 'abc' }, null), {
      sandboxId: 'abc',
      port: 49983,
    });
  });

  it('lets headers win over the host', () => {
    const t = proxyTargetOf({ 'e2b-sandbox-id': 'hdr', host: '3000-other.example.com' }, null);
    assert.equal(t?.sandboxId, 'hdr');
  });

  it('routes by {port}-{id}.{domain} hosts, checking the domain when configured', () => {
    assert.deepEqual(proxyTargetOf({ host: '3000-abc123.sbx.local:8000' }, 'sbx.local'), {
      sandboxId: 'abc123',
      port: 3000,
    });
    assert.equal(proxyTargetOf({ host: '3000-abc123.other.local' }, 'sbx.local'), undefined);
    assert.deepEqual(proxyTargetOf({ host: '49983-abc.anything.test' }, null), {
      sandboxId: 'abc',
      port: 49983,
    });
  });

  it('leaves control-plane hosts and bad ports alone', () => {
    assert.equal(proxyTargetOf({ host: '127.0.0.1:8000' }, null), undefined);
    assert.equal(proxyTargetOf({ host: 'api.example.com' }, null), undefined);
    assert.equal(proxyTargetOf({ host: '99999-abc.example.com' }, null), undefined);
  });
});

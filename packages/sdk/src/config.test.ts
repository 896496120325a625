import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_API_URL, resolveClientConfig } from './config.js';

describe('client configuration', () => {
  it('defaults to a local node, envd traffic through the API URL', () => {
    const c = resolveClientConfig({ env: {} });
    assert.equal(c.apiUrl, DEFAULT_API_URL);
    assert.equal(c.sandboxUrl, DEFAULT_API_URL);
    assert.equal(c.apiKey, undefined);
    assert.equal(c.domain, undefined);
  });

  it('prefers options, then AENV_*, then E2B_*', () => {
    const env = {
      AENV_API_URL: 'http://a:1/',
      E2B_API_URL: 'http://e:2',
      E2B_API_KEY: 'e2b_00',
      E2B_SANDBOX_URL: 'http://s:3',
      E2B_DOMAIN: 'example.test',
    };
    const c = resolveClientConfig({ env });
    assert.equal(c.apiUrl, 'http://a:1');
    assert.equal(c.apiKey, 'e2b_00');
    assert.equal(c.sandboxUrl, 'http://s:3');
    assert.equal(c.domain, 'example.test');
    const o = resolveClientConfig({ env, apiUrl: 'http://o:4', apiKey: 'k', sandboxUrl: '' });
    assert.equal(o.apiUrl, 'http://o:4');
    assert.equal(o.apiKey, 'k');
    assert.equal(o.sandboxUrl, 'http://s:3', 'an empty option does not count');
  });
});

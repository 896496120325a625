import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { basicAuthorization, parseChallenge } from './registry-auth.js';

describe('registry auth challenges', () => {
  it('parses Docker Hub style Bearer challenges', () => {
    const c = parseChallenge(
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull"',
    );
    assert.deepEqual(c, {
      scheme: 'bearer',
      params: {
        realm: 'https://auth.docker.io/token',
        service: 'registry.docker.io',
        scope: 'repository:library/ubuntu:pull',
      },
    });
  });

  it('parses Basic, unquoted values and escapes', () => {
    assert.deepEqual(parseChallenge('Basic realm="basic-realm"'), {
      scheme: 'basic',
      params: { realm: 'basic-realm' },
    });
    assert.deepEqual(parseChallenge('bearer realm=http://x/t, error="a \\"b\\""')?.params, {
      realm: 'http://x/t',
      error: 'a "b"',
    });
    assert.equal(parseChallenge(''), undefined);
  });

  it('renders Basic credentials', () => {
    assert.equal(basicAuthorization({ username: 'a', password: 'b:c' }), `Basic ${btoa('a:b:c')}`);
  });
});

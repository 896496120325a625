import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import {
  defaultTemplateName,
  formatImageReference,
  parseImageReference,
  registryAllowed,
  registryApiHost,
} from './image-reference.js';

const D = `sha256:${'a'.repeat(64)}`;

describe('image references', () => {
  it('normalises short names the way Docker does', () => {
    const cases: [string, string][] = [
      ['ubuntu:24.04', 'docker.io/library/ubuntu:24.04'],
      ['ubuntu', 'docker.io/library/ubuntu:latest'],
      ['user/app', 'docker.io/user/app:latest'],
      ['index.docker.io/library/debian:12', 'docker.io/library/debian:12'],
      ['ghcr.io/org/team/tool:v1.2', 'ghcr.io/org/team/tool:v1.2'],
      ['localhost/app', 'localhost/app:latest'],
      ['127.0.0.1:5000/busy:1', '127.0.0.1:5000/busy:1'],
      [`alpine@${D}`, `docker.io/library/alpine@${D}`],
      [`alpine:3@${D}`, `docker.io/library/alpine:3@${D}`],
    ];
    for (const [input, want] of cases) {
      assert.equal(formatImageReference(parseImageReference(input)), want, input);
    }
  });

  it('splits registry, repository, tag and digest', () => {
    const r = parseImageReference('localhost:5000/a/b_c:tag-1');
    assert.deepEqual(r, {
      registry: 'localhost:5000',
      repository: 'a/b_c',
      tag: 'tag-1',
      digest: undefined,
    });
    assert.equal(parseImageReference(`x@${D}`).tag, undefined);
    assert.equal(registryApiHost('docker.io'), 'registry-1.docker.io');
    assert.equal(registryApiHost('ghcr.io'), 'ghcr.io');
    assert.equal(defaultTemplateName(r), 'b_c');
  });

  it('rejects malformed references with IMAGE_REFERENCE_INVALID', () => {
    for (const bad of ['', 'Ubuntu', 'ubuntu:', 'a@sha256:12', 'a//b', 'bad host!/x', '-a']) {
      assert.throws(
        () => parseImageReference(bad),
        (e: unknown) => e instanceof AenvError && e.code === 'IMAGE_REFERENCE_INVALID',
        bad,
      );
    }
  });

  it('applies the registry allow-list', () => {
    assert.equal(registryAllowed('docker.io', ['*']), true);
    assert.equal(registryAllowed('docker.io', []), false);
    assert.equal(registryAllowed('ghcr.io', ['docker.io']), false);
    assert.equal(registryAllowed('eu.gcr.io', ['*.gcr.io']), true);
    assert.equal(registryAllowed('127.0.0.1:5000', ['127.0.0.1:5000']), true);
  });
});

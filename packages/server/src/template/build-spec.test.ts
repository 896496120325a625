import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { describeStep, expandVars, parseBuildSpec } from './build-spec.js';
import { parseDockerfile } from './dockerfile.js';

const invalid = (e: unknown) => e instanceof AenvError && e.code === 'BUILD_STEP_INVALID';
const HASH = 'a'.repeat(64);

describe('build specs', () => {
  it('parses what the e2b SDK sends for Template.build', () => {
    const spec = parseBuildSpec({
      fromImage: 'python:3.12',
      force: false,
      startCmd: 'python -m http.server 8000',
      readyCmd: 'curl -s localhost:8000',
      steps: [
        { type: 'RUN', args: ['apt-get update && apt-get install -y curl', 'root'], force: false },
        { type: 'ENV', args: ['A', '1', 'B', '2'] },
        { type: 'WORKDIR', args: ['/app'] },
        { type: 'USER', args: ['user'] },
        { type: 'COPY', args: ['src', '/app/', '', '0755'], filesHash: HASH },
      ],
    });
    assert.deepEqual(spec.from, { image: 'python:3.12' });
    assert.equal(spec.steps.length, 5);
    assert.deepEqual(spec.steps[0], {
      kind: 'RUN',
      command: 'apt-get update && apt-get install -y curl',
      user: 'root',
    });
    assert.deepEqual(spec.steps[1], {
      kind: 'ENV',
      vars: [
        ['A', '1'],
        ['B', '2'],
      ],
    });
    assert.deepEqual(spec.steps[4], {
      kind: 'COPY',
      src: 'src',
      dest: '/app/',
      user: undefined,
      mode: 0o755,
      source: { kind: 'hash', hash: HASH },
    });
    assert.equal(spec.readyCmd, 'curl -s localhost:8000');
    assert.equal(describeStep(spec.steps[1] as never), 'ENV A=1 B=2');
  });

  it('names the bad step', () => {
    assert.throws(() => parseBuildSpec({ fromImage: 'x', fromTemplate: 'y' }), invalid);
    assert.throws(() => parseBuildSpec({}), invalid);
    assert.throws(
      () =>
        parseBuildSpec({
          fromImage: 'x',
          steps: [{ type: 'RUN', args: ['ls'] }, { type: 'FROB' }],
        }),
      (e: unknown) => invalid(e) && /step 2/.test((e as Error).message),
    );
    assert.throws(
      () => parseBuildSpec({ fromImage: 'x', steps: [{ type: 'COPY', args: ['a', 'b'] }] }),
      invalid,
    );
  });

  it('expands variables as Dockerfiles do', () => {
    const v = { PATH: '/bin', HOME: '/root', EMPTY: '' };
    assert.equal(expandVars('/opt/bin:$PATH', v), '/opt/bin:/bin');
    assert.equal(
      expandVars('${HOME}/x ${NONE:-dflt} ${HOME:+set} ${EMPTY:-e}', v),
      '/root/x dflt set e',
    );
    assert.equal(expandVars('\\$PATH $NONE.', v), '$PATH .');
  });
});

describe('Dockerfiles', () => {
  it('turns a Dockerfile into a build', () => {
    const spec = parseDockerfile(
      [
        '# syntax comment',
        'ARG VERSION=1',
        'FROM docker.io/library/debian:12 AS base',
        'ENV APP=/srv/app \\',
        '    GREETING="hello world"',
        'ENV LEGACY value with spaces',
        'RUN apt-get update && \\',
        '  apt-get install -y curl',
        'RUN ["echo", "it\'s"]',
        'WORKDIR $APP',
        'COPY --chown=user:user --chmod=0644 a.txt b.txt ./',
        'USER user',
        'EXPOSE 8080',
        'ENTRYPOINT ["python3", "-m", "http.server"]',
        'CMD ["8080"]',
      ].join('\n'),
    );
    assert.deepEqual(spec.from, { image: 'docker.io/library/debian:12' });
    assert.deepEqual(
      spec.steps.map((s) => s.kind),
      ['ARG', 'ENV', 'ENV', 'RUN', 'RUN', 'WORKDIR', 'COPY', 'COPY', 'USER', 'META'],
    );
    assert.deepEqual(spec.steps[1], {
      kind: 'ENV',
      vars: [
        ['APP', '/srv/app'],
        ['GREETING', 'hello world'],
      ],
    });
    assert.deepEqual(spec.steps[2], { kind: 'ENV', vars: [['LEGACY', 'value with spaces']] });
    assert.deepEqual(spec.steps[3], {
      kind: 'RUN',
      command: 'apt-get update && apt-get install -y curl',
    });
    assert.deepEqual(spec.steps[4], { kind: 'RUN', command: "echo 'it'\\''s'" });
    assert.deepEqual(spec.steps[6], {
      kind: 'COPY',
      src: 'a.txt',
      dest: './',
      user: 'user:user',
      mode: 0o644,
      source: { kind: 'context' },
    });
    assert.equal(spec.startCmd, 'python3 -m http.server 8080');
  });

  it('refuses what it cannot build', () => {
    assert.throws(() => parseDockerfile('RUN ls'), invalid);
    assert.throws(() => parseDockerfile('FROM a\nFROM b'), invalid);
    assert.throws(() => parseDockerfile('FROM a\nCOPY --from=x a b'), invalid);
    assert.throws(() => parseDockerfile('FROM a\nADD https://x/y /y'), invalid);
    assert.throws(() => parseDockerfile('FROM a\nFROBNICATE'), invalid);
  });
});

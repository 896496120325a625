import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AenvSdkError,
  CommandExitError,
  ConflictError,
  InvalidStateError,
  NotFoundError,
  SandboxNotFoundError,
  TemplateNotFoundError,
} from './errors.js';
import type * as ErrorsModule from './errors.js';

describe('SDK errors', () => {
  it('follow the class chain, with a stable name and default code', () => {
    const err = new SandboxNotFoundError('sandbox x not found', { status: 404 });
    assert.ok(err instanceof SandboxNotFoundError);
    assert.ok(err instanceof NotFoundError);
    assert.ok(err instanceof AenvSdkError);
    assert.ok(err instanceof Error);
    assert.ok(!(err instanceof TemplateNotFoundError));
    assert.ok(!(err instanceof ConflictError));
    assert.equal(err.name, 'SandboxNotFoundError');
    assert.equal(err.code, 'SBX_NOT_FOUND');
    assert.equal(err.status, 404);
    assert.ok(!(new NotFoundError('x') instanceof SandboxNotFoundError), 'a parent is not a child');
    assert.equal(new InvalidStateError('x', { code: 'OTHER' }).code, 'OTHER');
  });

  it('keep instanceof across a second copy of the module', async () => {
    const url = new URL('./errors.js?second-copy', import.meta.url).href;
    const copy = (await import(url)) as typeof ErrorsModule;
    assert.notEqual(copy.SandboxNotFoundError, SandboxNotFoundError, 'really a second copy');
    const fromCopy = new copy.SandboxNotFoundError('gone');
    assert.ok(fromCopy instanceof SandboxNotFoundError);
    assert.ok(fromCopy instanceof NotFoundError);
    assert.ok(fromCopy instanceof AenvSdkError);
    assert.ok(!(fromCopy instanceof ConflictError));
    const fromHere = new InvalidStateError('paused');
    assert.ok(fromHere instanceof copy.ConflictError);
    assert.ok(!(fromHere instanceof copy.NotFoundError));
  });

  it('do not match look-alikes or primitives', () => {
    assert.ok(!(new Error('x') instanceof AenvSdkError));
    assert.ok(!(Object.create(null) instanceof AenvSdkError));
    assert.ok(!((42 as unknown) instanceof AenvSdkError));
    assert.ok(!(({ name: 'SandboxNotFoundError' } as unknown) instanceof SandboxNotFoundError));
  });

  it('CommandExitError carries the result', () => {
    const err = new CommandExitError({
      exitCode: 3,
      stdout: 'out',
      stderr: 'err',
      error: 'exit status 3',
    });
    assert.ok(err instanceof CommandExitError && err instanceof AenvSdkError);
    assert.equal(err.exitCode, 3);
    assert.equal(err.stdout, 'out');
    assert.equal(err.stderr, 'err');
    assert.equal(err.code, 'SDK_COMMAND_EXIT');
    assert.match(err.message, /code 3 \(exit status 3\)/);
  });

  it('keep their cause', () => {
    const cause = new Error('root');
    assert.equal(new AenvSdkError('wrapped', { cause }).cause, cause);
  });
});

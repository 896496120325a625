import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorFromAnswer, errorFromConnect } from './error-mapping.js';
import {
  AlreadyExistsError,
  AuthenticationError,
  ConflictError,
  FileNotFoundError,
  InternalError,
  InvalidArgumentError,
  InvalidStateError,
  NotFoundError,
  NotSupportedError,
  ResourceExhaustedError,
  SandboxNotFoundError,
  TemplateNotFoundError,
  TimeoutError,
  UnavailableError,
} from './errors.js';

describe('error mapping', () => {
  it('maps node bodies by error_code first, then by status', () => {
    const sbx = errorFromAnswer(404, { code: 404, message: 'gone', error_code: 'SBX_NOT_FOUND' });
    assert.ok(sbx instanceof SandboxNotFoundError);
    assert.equal(sbx.message, 'gone');
    assert.equal(sbx.code, 'SBX_NOT_FOUND');
    assert.equal(sbx.status, 404);
    const tpl = errorFromAnswer(404, { code: 404, message: 'x', error_code: 'TEMPLATE_NOT_FOUND' });
    assert.ok(tpl instanceof TemplateNotFoundError);
    const state = errorFromAnswer(409, {
      code: 409,
      message: 'p',
      error_code: 'SBX_INVALID_STATE',
    });
    assert.ok(state instanceof InvalidStateError && state instanceof ConflictError);
    const generic = errorFromAnswer(409, {
      code: 409,
      message: 'x',
      error_code: 'NBD_EXPORT_EXISTS',
    });
    assert.ok(generic instanceof ConflictError && !(generic instanceof InvalidStateError));
    assert.equal(generic.code, 'NBD_EXPORT_EXISTS', 'the node code is kept');
    assert.ok(errorFromAnswer(400, { code: 400, message: 'x' }) instanceof InvalidArgumentError);
    assert.ok(errorFromAnswer(401, { code: 401, message: 'x' }) instanceof AuthenticationError);
    assert.ok(errorFromAnswer(429, { code: 429, message: 'x' }) instanceof ResourceExhaustedError);
    assert.ok(errorFromAnswer(500, undefined) instanceof InternalError);
    assert.ok(errorFromAnswer(503, { code: 503, message: 'x' }) instanceof UnavailableError);
    assert.ok(errorFromAnswer(599, undefined) instanceof UnavailableError);
  });

  it('turns a missing route into NotSupportedError naming the feature', () => {
    const err = errorFromAnswer(
      404,
      { code: 404, message: 'no route POST /sandboxes/x/fork', error_code: 'API_ROUTE_NOT_FOUND' },
      { feature: 'fork' },
    );
    assert.ok(err instanceof NotSupportedError);
    assert.ok(!(err instanceof NotFoundError));
    assert.match(err.message, /does not support fork yet \(no route POST \/sandboxes\/x\/fork\)/);
    assert.equal(err.code, 'API_ROUTE_NOT_FOUND');
  });

  it('reads the proxy 502 as a sandbox that is gone, with or without a code', () => {
    const withCode = errorFromAnswer(502, {
      code: 502,
      message: 'sandbox x is not running',
      error_code: 'SBX_NOT_FOUND',
    });
    assert.ok(withCode instanceof SandboxNotFoundError);
    assert.ok(errorFromAnswer(502, 'Bad Gateway') instanceof SandboxNotFoundError);
  });

  it('uses the text of non-JSON answers and a fallback message', () => {
    assert.equal(errorFromAnswer(500, 'boom\n').message, 'boom');
    assert.equal(errorFromAnswer(500, undefined).message, 'the node answered HTTP 500');
  });

  it('maps Connect errors (string codes), in bodies and end-stream frames', () => {
    const nf = errorFromAnswer(404, { code: 'not_found', message: "path '/x' does not exist" });
    assert.ok(nf instanceof NotFoundError && !(nf instanceof FileNotFoundError));
    const file = errorFromAnswer(
      404,
      { code: 'not_found', message: 'x' },
      { notFound: FileNotFoundError },
    );
    assert.ok(file instanceof FileNotFoundError);
    assert.ok(errorFromConnect('deadline_exceeded', 'x') instanceof TimeoutError);
    assert.ok(errorFromConnect('already_exists', 'x') instanceof AlreadyExistsError);
    assert.ok(errorFromConnect('invalid_argument', 'x') instanceof InvalidArgumentError);
    assert.ok(errorFromConnect('unauthenticated', 'x') instanceof AuthenticationError);
    assert.ok(errorFromConnect('unimplemented', 'x') instanceof NotSupportedError);
    assert.ok(errorFromConnect('failed_precondition', 'x') instanceof ConflictError);
    assert.ok(errorFromConnect('something-new', 'x') instanceof InternalError);
    assert.equal(errorFromConnect('canceled', 'x').code, 'SDK_CANCELED');
  });
});

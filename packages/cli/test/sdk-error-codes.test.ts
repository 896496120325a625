// Every error code of the registry (packages/shared/src/error-codes.ts)
// becomes an SDK error class: a specific one, or the generic class of the
// code's HTTP status, each documented in docs/sdk.md. Lives in the CLI's
// suites because the SDK may not import @aenv/shared.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ERROR_CODES, HTTP_STATUS_BY_CATEGORY, type ErrorCode } from '@aenv/shared';
import {
  AenvSdkError,
  ERROR_CLASS_BY_CODE,
  ERROR_CLASS_BY_STATUS,
  NotSupportedError,
  errorFromAnswer,
} from '@aenv/sdk';

const sdkDoc = readFileSync(new URL('../../../../docs/sdk.md', import.meta.url), 'utf8');

/** Specific classes that do not extend their code's generic class, and why. */
const EXCEPTIONS: Readonly<Partial<Record<ErrorCode, string>>> = {
  API_ROUTE_NOT_FOUND: 'a missing route means the node lacks the feature: NotSupportedError',
};

describe('SDK errors for the registry codes', () => {
  for (const [code, { category }] of Object.entries(ERROR_CODES) as [
    ErrorCode,
    { category: keyof typeof HTTP_STATUS_BY_CATEGORY },
  ][]) {
    it(code, () => {
      const status = HTTP_STATUS_BY_CATEGORY[category];
      const err = errorFromAnswer(status, { code: status, message: 'm', error_code: code });
      assert.ok(err instanceof AenvSdkError);
      assert.equal(err.code, code, 'the stable code is kept');
      assert.equal(err.status, status);
      const generic = ERROR_CLASS_BY_STATUS[status];
      assert.ok(generic !== undefined, `HTTP ${status} (${category}) has a generic class`);
      if (EXCEPTIONS[code] === undefined)
        assert.ok(err instanceof generic, `${err.name} is a ${generic.name}`);
      else assert.ok(err instanceof NotSupportedError);
      assert.ok(sdkDoc.includes(`\`${err.name}\``), `${err.name} is documented in docs/sdk.md`);
    });
  }

  it('the specific classes name only registered codes', () => {
    for (const code of Object.keys(ERROR_CLASS_BY_CODE)) {
      assert.ok(Object.hasOwn(ERROR_CODES, code), `${code} is in the registry`);
    }
  });
});

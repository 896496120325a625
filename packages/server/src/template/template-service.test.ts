/**
 * `TemplateService.close()`: unfinished builds are cancelled and awaited
 * (their machines stopped) before a node goes on closing; later builds are
 * refused. The builder is a stand-in that holds until its signal aborts,
 * then "stops its machine" — what the real builder's cleanup does.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import type { Logger } from '../log.js';
import type { BuildFiles } from './build-files.js';
import type { BuildRequest, TemplateBuilder } from './template-builder.js';
import type { TemplateCatalog } from './template-catalog.js';
import { TemplateService } from './template-service.js';

const quiet = { warn: () => undefined, info: () => undefined } as unknown as Logger;

function service(stopped: string[]): TemplateService {
  const builder = {
    build: (req: BuildRequest) =>
      new Promise((_resolve, reject) => {
        const stop = (): void => {
          setTimeout(() => {
            stopped.push(req.buildId);
            reject(req.signal?.reason as Error);
          }, 20);
        };
        if (req.signal?.aborted === true) stop();
        else req.signal?.addEventListener('abort', stop);
      }),
  } as unknown as TemplateBuilder;
  return new TemplateService({
    builder,
    templates: { find: () => undefined, list: () => [] } as unknown as TemplateCatalog,
    files: {} as BuildFiles,
    maxConcurrentBuilds: 1,
    envdVersion: '0.1.0',
    defaultShape: { vcpus: 1, memoryMiB: 256 },
    deleteTemplate: () => Promise.resolve(),
    logger: quiet,
  });
}

const spec = { from: { image: 'x/y:1' }, steps: [], startCmd: undefined, readyCmd: undefined };

describe('TemplateService.close', () => {
  it('cancels running and waiting builds and waits for them to end', async () => {
    const stopped: string[] = [];
    const s = service(stopped);
    const a = s.request({ name: 'a' });
    const b = s.request({ name: 'b' });
    s.start(a.templateId, a.buildId, spec);
    s.start(b.templateId, b.buildId, spec); // waits for the one build slot
    await new Promise((r) => setTimeout(r, 10));
    await s.close();
    assert.deepEqual(stopped.sort(), [a.buildId, b.buildId].sort());
    assert.equal(s.status(a.templateId, a.buildId, 0).status, 'error');
    assert.equal(s.status(b.templateId, b.buildId, 0).status, 'error');
    await assert.rejects(
      s.runNow({ name: 'c', spec }, {}),
      (err: unknown) => err instanceof AenvError && /shutting down/.test(err.message),
    );
  });
});

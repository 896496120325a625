import assert from 'node:assert/strict';
import { channel } from 'node:diagnostics_channel';
import { describe, it } from 'node:test';
import { LOG_FIELDS } from '@aenv/shared';
import { STORAGE_CHANNELS } from '@aenv/storage';
import { createLogger } from '../log.js';
import { logStorageEvents } from './storage-log.js';

describe('logStorageEvents', () => {
  it('logs storage events at their level until unsubscribed, and never chunk fetches', () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('debug', (l) => void lines.push(JSON.parse(l) as never));
    const stop = logStorageEvents(logger);
    channel(STORAGE_CHANNELS.nbdError).publish({ [LOG_FIELDS.driveId]: 'sbx1', x: 1 });
    channel(STORAGE_CHANNELS.seal).publish({ [LOG_FIELDS.layerDigest]: 'sha256:ab' });
    channel(STORAGE_CHANNELS.fetch).publish({ [LOG_FIELDS.bytes]: 1 });
    stop();
    channel(STORAGE_CHANNELS.nbdError).publish({ [LOG_FIELDS.driveId]: 'sbx2' });
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg, l[LOG_FIELDS.driveId] ?? l[LOG_FIELDS.layerDigest]]),
      [
        ['warn', 'nbd error', 'sbx1'],
        ['info', 'upper sealed into a layer', 'sha256:ab'],
      ],
    );
  });
});

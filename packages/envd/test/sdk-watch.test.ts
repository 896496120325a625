/**
 * Directory watching: `watchDir` through the e2b SDK (create, write, remove,
 * rename; recursive; entries) and the polling watcher RPCs.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  FileNotFoundError,
  FilesystemEventType,
  SandboxError,
  type FilesystemEvent,
  type Sandbox,
} from 'e2b';
import { EventType } from '../src/gen/filesystem/filesystem_pb.js';
import { startFixture, waitFor, type EnvdFixture } from './helpers/envd-fixture.js';
import { filesystemClient } from './helpers/rpc-clients.js';

function has(events: FilesystemEvent[], type: FilesystemEventType, name: string): boolean {
  return events.some((e) => e.type === type && e.name === name);
}

describe('watching directories', () => {
  let fx: EnvdFixture;
  let sbx: Sandbox;
  before(async () => {
    fx = await startFixture();
    sbx = await fx.sandbox();
  });
  after(() => fx.close());

  it('reports create, write, rename and remove in a directory', async () => {
    const dir = join(fx.home, 'w1');
    mkdirSync(dir);
    const events: FilesystemEvent[] = [];
    const handle = await sbx.files.watchDir('w1', (e) => void events.push(e));
    try {
      await sbx.files.write('w1/a.txt', 'first');
      await waitFor(() => has(events, FilesystemEventType.CREATE, 'a.txt'), 5000, 'create');
      await sbx.files.write('w1/a.txt', 'second');
      await waitFor(() => has(events, FilesystemEventType.WRITE, 'a.txt'), 5000, 'write');
      await sbx.files.rename('w1/a.txt', 'w1/b.txt');
      await waitFor(
        () =>
          has(events, FilesystemEventType.RENAME, 'a.txt') &&
          has(events, FilesystemEventType.CREATE, 'b.txt'),
        5000,
        'rename',
      );
      await sbx.files.remove('w1/b.txt');
      await waitFor(() => has(events, FilesystemEventType.REMOVE, 'b.txt'), 5000, 'remove');
    } finally {
      await handle.stop();
    }
  });

  it('watches a tree recursively, including directories created later, with entries', async () => {
    const dir = join(fx.home, 'w2');
    mkdirSync(join(dir, 'nested'), { recursive: true });
    const events: FilesystemEvent[] = [];
    const handle = await sbx.files.watchDir('w2', (e) => void events.push(e), {
      recursive: true,
      includeEntry: true,
    });
    try {
      writeFileSync(join(dir, 'nested', 'n.txt'), 'x');
      await waitFor(
        () => has(events, FilesystemEventType.CREATE, 'nested/n.txt'),
        5000,
        'nested create',
      );
      mkdirSync(join(dir, 'later'));
      await waitFor(() => has(events, FilesystemEventType.CREATE, 'later'), 5000, 'new dir');
      writeFileSync(join(dir, 'later', 'l.txt'), 'y');
      await waitFor(
        () => has(events, FilesystemEventType.WRITE, 'later/l.txt'),
        5000,
        'write in new dir',
      );
      const withEntry = events.find((e) => e.name === 'later/l.txt');
      assert.equal(withEntry?.entry?.path, join(dir, 'later', 'l.txt'));
    } finally {
      await handle.stop();
    }
  });

  it('refuses missing paths and files', async () => {
    writeFileSync(join(fx.home, 'plain.txt'), '');
    await assert.rejects(
      sbx.files.watchDir('no-such-dir', () => {}),
      (e: unknown) => e instanceof FileNotFoundError,
    );
    await assert.rejects(
      sbx.files.watchDir('plain.txt', () => {}),
      (e: unknown) => e instanceof SandboxError,
    );
  });

  it('serves polling watchers: create, get events since last poll, remove', async () => {
    const fs = filesystemClient(fx.url);
    const dir = join(fx.home, 'w3');
    mkdirSync(dir);
    const { watcherId } = await fs.createWatcher({ path: dir, recursive: false });
    writeFileSync(join(dir, 'p.txt'), 'p');
    let names: string[] = [];
    await waitFor(
      async () => {
        const { events } = await fs.getWatcherEvents({ watcherId });
        names = names.concat(events.map((e) => `${EventType[e.type]}:${e.name}`));
        return names.includes('CREATE:p.txt');
      },
      5000,
      'polled create',
    );
    renameSync(join(dir, 'p.txt'), join(dir, 'q.txt'));
    rmSync(join(dir, 'q.txt'));
    await waitFor(
      async () => {
        const { events } = await fs.getWatcherEvents({ watcherId });
        names = names.concat(events.map((e) => `${EventType[e.type]}:${e.name}`));
        return names.includes('REMOVE:q.txt');
      },
      5000,
      'polled remove',
    );
    await fs.removeWatcher({ watcherId });
    await assert.rejects(fs.getWatcherEvents({ watcherId }), /not_found|not found/);
    await assert.rejects(
      fs.createWatcher({ path: join(dir, 'missing') }),
      /not_found|does not exist/,
    );
  });
});

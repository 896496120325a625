// Temporary directories for tests: created under the OS temp dir, removed
// by the returned cleanup (call it in `after`/`finally`, also on failure).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempDir {
  readonly path: string;
  remove(): Promise<void>;
}

export async function tempDir(prefix = 'aenv-storage-'): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

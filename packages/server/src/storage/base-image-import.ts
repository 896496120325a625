/**
 * Importing the node's raw base image (the ext4 file `guest` prepares) into
 * the blob store as a base layer, once: the result is recorded in a small
 * JSON registry under `$AENV_HOME/storage/`, keyed by the raw file's content
 * digest, so a restarted daemon reuses the layer instead of reading gigabytes
 * again. A record is trusted only while the blob store still holds every
 * layer it names (a switched or wiped store triggers a new import).
 *
 * Registry format (version 1):
 * ```json
 * { "version": 1, "images": { "sha256:<raw file>": { "image": {…}, "importedAt": "…" } } }
 * ```
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  importRawImage,
  layerKey,
  normalizeImageSpec,
  type BlobStore,
  type ImageSpec,
} from '@aenv/storage';

/** What {@link importBaseImageOnce} needs. */
export interface BaseImageImport {
  /** The raw disk image. */
  readonly path: string;
  /** `sha256:` of the raw file, when already known (guest artifacts record it); else computed. */
  readonly contentDigest?: string | undefined;
  readonly store: BlobStore;
  /** The registry file. */
  readonly registryFile: string;
  /** Scratch directory for the layer being built. */
  readonly workDir: string;
}

/** The base image as a stack, and whether this call imported it. */
export interface BaseImageResult {
  readonly image: Required<ImageSpec>;
  readonly contentDigest: string;
  /** False when the registry's record was reused. */
  readonly imported: boolean;
  readonly durationMs: number;
}

interface RegistryRecord {
  readonly image: Required<ImageSpec>;
  readonly importedAt: string;
}

interface Registry {
  readonly version: 1;
  readonly images: Record<string, RegistryRecord>;
}

/** Returns the base image's stack, importing the raw file only if no valid record exists. */
export async function importBaseImageOnce(options: BaseImageImport): Promise<BaseImageResult> {
  const started = performance.now();
  const given = options.contentDigest;
  const contentDigest =
    given !== undefined && given !== '' ? given : await sha256OfFile(options.path);
  const registry = await readRegistry(options.registryFile);
  const known = registry.images[contentDigest];
  if (known !== undefined && (await holdsAll(options.store, known.image))) {
    return {
      image: known.image,
      contentDigest,
      imported: false,
      durationMs: performance.now() - started,
    };
  }
  await mkdir(options.workDir, { recursive: true });
  const { image } = await importRawImage(options.path, {
    store: options.store,
    workDir: options.workDir,
  });
  registry.images[contentDigest] = { image, importedAt: new Date().toISOString() };
  await writeRegistry(options.registryFile, registry);
  return { image, contentDigest, imported: true, durationMs: performance.now() - started };
}

async function holdsAll(store: BlobStore, image: Required<ImageSpec>): Promise<boolean> {
  const heads = await Promise.all(image.layers.map((d) => store.head(layerKey(d))));
  return heads.every((h) => h !== undefined);
}

/** Reads the registry; a missing or unreadable one is empty (the cost is one import). */
async function readRegistry(file: string): Promise<Registry> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<Registry>;
    if (parsed.version !== 1 || typeof parsed.images !== 'object' || parsed.images === null) {
      return { version: 1, images: {} };
    }
    const images: Record<string, RegistryRecord> = {};
    for (const [digest, rec] of Object.entries(parsed.images)) {
      try {
        images[digest] = { image: normalizeImageSpec(rec.image), importedAt: rec.importedAt };
      } catch {
        // A damaged record is dropped; the image is imported again.
      }
    }
    return { version: 1, images };
  } catch {
    return { version: 1, images: {} };
  }
}

async function writeRegistry(file: string, registry: Registry): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  await writeFile(tmp, `${JSON.stringify(registry, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const piece of createReadStream(path, { highWaterMark: 1 << 20 })) {
    hash.update(piece as Buffer);
  }
  return `sha256:${hash.digest('hex')}`;
}

/**
 * The OCI and Docker v2 documents a pull reads: manifests, indexes (manifest
 * lists) and image configs, with their media types, validated into small
 * typed shapes. Only what conversion needs is kept.
 *
 * Accepted: Docker v2 schema 2 manifests and manifest lists, OCI image
 * manifests and indexes; layers `tar`, `tar+gzip`, `tar+zstd` (OCI, also
 * non-distributable) and Docker's `rootfs.diff.tar.gzip` (also foreign).
 * Docker schema 1 and unknown layer types are `IMAGE_UNSUPPORTED`.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** Media types of manifests and indexes. */
export const MEDIA_TYPES = {
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
} as const;

/** The `Accept` header of a manifest request. */
export const MANIFEST_ACCEPT = Object.values(MEDIA_TYPES).join(', ');

/** How a layer blob is compressed. */
export type LayerCompression = 'none' | 'gzip' | 'zstd';

/** A blob a manifest points at. */
export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

/** A layer of an image manifest. */
export interface LayerDescriptor extends Descriptor {
  readonly compression: LayerCompression;
}

/** An image manifest (one platform). */
export interface ImageManifest {
  readonly kind: 'manifest';
  readonly mediaType: string;
  readonly config: Descriptor;
  readonly layers: readonly LayerDescriptor[];
}

/** A platform entry of an index. */
export interface PlatformManifest extends Descriptor {
  readonly os: string | undefined;
  readonly architecture: string | undefined;
  readonly variant: string | undefined;
}

/** An index (manifest list). */
export interface ImageIndex {
  readonly kind: 'index';
  readonly mediaType: string;
  readonly manifests: readonly PlatformManifest[];
}

/** The parts of an image config a node uses. */
export interface ImageConfig {
  readonly env: readonly string[];
  readonly workingDir: string | undefined;
  readonly user: string | undefined;
  readonly entrypoint: readonly string[] | undefined;
  readonly cmd: readonly string[] | undefined;
  readonly exposedPorts: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  /** Digests of the uncompressed layers, base first (`rootfs.diff_ids`). */
  readonly diffIds: readonly string[];
}

type Json = Record<string, unknown>;
const DIGEST = /^sha256:[a-f0-9]{64}$/;

function invalidImage(what: string, cause?: unknown): AenvError {
  return new AenvError('IMAGE_INVALID', `malformed image: ${what}`, { cause });
}

function asObject(v: unknown, what: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw invalidImage(`${what} is not an object`);
  return v as Json;
}

function descriptor(v: unknown, what: string): Descriptor {
  const o = asObject(v, what);
  const { mediaType, digest, size } = o;
  if (typeof digest !== 'string' || !DIGEST.test(digest)) {
    throw new AenvError('IMAGE_UNSUPPORTED', `${what}: digest ${String(digest)} is not sha256`);
  }
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
    throw invalidImage(`${what} has no valid size`);
  }
  return { mediaType: typeof mediaType === 'string' ? mediaType : '', digest, size };
}

/** The compression of a layer media type, or undefined when it is not a layer type we read. */
export function layerCompression(mediaType: string): LayerCompression | undefined {
  if (/^application\/vnd\.docker\.image\.rootfs\.(foreign\.)?diff\.tar\.gzip$/.test(mediaType)) {
    return 'gzip';
  }
  const m =
    /^application\/vnd\.oci\.image\.layer\.(?:nondistributable\.)?v1\.tar(\+gzip|\+zstd)?$/.exec(
      mediaType,
    );
  if (m === null) return undefined;
  return m[1] === '+gzip' ? 'gzip' : m[1] === '+zstd' ? 'zstd' : 'none';
}

/**
 * Parses a manifest or index body. `contentType` is the answer's header,
 * used when the document has no `mediaType` of its own.
 * @throws {AenvError} `IMAGE_INVALID`, `IMAGE_UNSUPPORTED`.
 */
export function parseManifest(body: Buffer, contentType: string): ImageManifest | ImageIndex {
  let doc: Json;
  try {
    doc = asObject(JSON.parse(body.toString('utf8')), 'manifest');
  } catch (err) {
    throw err instanceof AenvError ? err : invalidImage('manifest is not JSON', err);
  }
  const mediaType =
    typeof doc.mediaType === 'string' ? doc.mediaType : (contentType.split(';')[0]?.trim() ?? '');
  if (doc.schemaVersion !== 2) {
    throw new AenvError(
      'IMAGE_UNSUPPORTED',
      `manifest schema ${String(doc.schemaVersion)} is not supported (schema 2 only)`,
    );
  }
  if (Array.isArray(doc.manifests)) {
    const manifests = doc.manifests.map((m: unknown, i: number) => {
      const d = descriptor(m, `manifests[${i}]`);
      const p = (asObject(m, 'manifest').platform ?? {}) as Json;
      const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);
      return { ...d, os: str(p.os), architecture: str(p.architecture), variant: str(p.variant) };
    });
    return { kind: 'index', mediaType, manifests };
  }
  if (!Array.isArray(doc.layers)) throw invalidImage('manifest has neither layers nor manifests');
  const layers = doc.layers.map((l: unknown, i: number) => {
    const d = descriptor(l, `layers[${i}]`);
    const compression = layerCompression(d.mediaType);
    if (compression === undefined) {
      throw new AenvError(
        'IMAGE_UNSUPPORTED',
        `layer ${d.digest} has media type '${d.mediaType}', not a tar layer`,
      );
    }
    return { ...d, compression };
  });
  return { kind: 'manifest', mediaType, config: descriptor(doc.config, 'config'), layers };
}

/**
 * The linux/amd64 entry of an index.
 * @throws {AenvError} `IMAGE_UNSUPPORTED` naming the platforms there are.
 */
export function selectPlatform(index: ImageIndex): PlatformManifest {
  const found = index.manifests.find((m) => m.os === 'linux' && m.architecture === 'amd64');
  if (found !== undefined) return found;
  const have = index.manifests.map((m) => `${m.os ?? '?'}/${m.architecture ?? '?'}`).join(', ');
  throw new AenvError(
    'IMAGE_UNSUPPORTED',
    `the image has no linux/amd64 manifest (it has: ${have || 'none'})`,
  );
}

function stringList(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter((x): x is string => typeof x === 'string');
}

/**
 * Parses an image config and checks its `diff_ids` against the manifest's layers.
 * @throws {AenvError} `IMAGE_INVALID`, `IMAGE_UNSUPPORTED` (not linux/amd64).
 */
export function parseImageConfig(body: Buffer, layerCount: number): ImageConfig {
  let doc: Json;
  try {
    doc = asObject(JSON.parse(body.toString('utf8')), 'config');
  } catch (err) {
    throw err instanceof AenvError ? err : invalidImage('config is not JSON', err);
  }
  if (
    (doc.os !== undefined && doc.os !== 'linux') ||
    (doc.architecture !== undefined && doc.architecture !== 'amd64')
  ) {
    throw new AenvError(
      'IMAGE_UNSUPPORTED',
      `the image is ${String(doc.os)}/${String(doc.architecture)}, not linux/amd64`,
    );
  }
  const rootfs = asObject(doc.rootfs ?? {}, 'rootfs');
  const diffIds = stringList(rootfs.diff_ids) ?? [];
  if (diffIds.length !== layerCount || !diffIds.every((d) => DIGEST.test(d))) {
    throw invalidImage(`config lists ${diffIds.length} sha256 diff_ids for ${layerCount} layers`);
  }
  return { ...runtimeConfig((doc.config ?? {}) as Json), diffIds };
}

/** The `config` object's fields (Docker's container config names). */
function runtimeConfig(c: Json): Omit<ImageConfig, 'diffIds'> {
  const str = (x: unknown): string | undefined =>
    typeof x === 'string' && x !== '' ? x : undefined;
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries((c.Labels ?? {}) as Json)) {
    if (typeof v === 'string') labels[k] = v;
  }
  return {
    env: stringList(c.Env) ?? [],
    workingDir: str(c.WorkingDir),
    user: str(c.User),
    entrypoint: stringList(c.Entrypoint),
    cmd: stringList(c.Cmd),
    exposedPorts: Object.keys(c.ExposedPorts ?? {}),
    labels,
  };
}

/** `Env` entries (`K=V`) as a map; later entries win. */
export function envMap(env: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of env) {
    const eq = e.indexOf('=');
    if (eq > 0) out[e.slice(0, eq)] = e.slice(eq + 1);
  }
  return out;
}

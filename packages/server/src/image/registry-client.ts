/**
 * A client of the OCI Distribution API (the registry HTTP API v2), on
 * `fetch`: resolving a reference to its linux/amd64 image manifest (indexes
 * and manifest lists resolved), reading small blobs (configs) and
 * downloading layer blobs to files.
 *
 * - Auth: anonymous, Bearer tokens and Basic (`registry-auth.ts`), with
 *   credentials from the node's Docker config when a registry asks.
 * - Transport: HTTPS, or plain HTTP for registries the node's configuration
 *   names as insecure (never guessed).
 * - Integrity: every manifest and blob is checked against its digest; a
 *   mismatch is `IMAGE_DIGEST_MISMATCH` and the bytes are discarded.
 * - Failures: transient ones are retried with backoff; a download broken
 *   mid-blob resumes with a `Range` request when the registry allows it.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { AenvError } from '@aenv/shared';
import { manifestRef, registryApiHost, type ImageReference } from './image-reference.js';
import {
  MANIFEST_ACCEPT,
  parseManifest,
  selectPlatform,
  type Descriptor,
  type ImageManifest,
} from './oci-manifest.js';
import { RegistryAuth, denied, parseChallenge } from './registry-auth.js';
import type { CredentialSource, RegistryCredentials } from './registry-credentials.js';
import {
  DEFAULT_RETRY_POLICY,
  TransientError,
  describeNetworkError,
  sendOnce,
  withRetries,
  type RetryPolicy,
} from './registry-http.js';

/** Options of {@link RegistryClient}. */
export interface RegistryClientOptions {
  /** Registries (`host[:port]`) reached over plain HTTP. */
  readonly insecureRegistries: readonly string[];
  readonly credentials: CredentialSource;
  readonly retry?: RetryPolicy;
}

/** An image reference resolved to one platform's manifest. */
export interface ResolvedImage {
  readonly reference: ImageReference;
  /** Digest of the linux/amd64 image manifest. */
  readonly digest: string;
  readonly manifest: ImageManifest;
}

/** Counters of one client (tests and progress). */
export interface RegistryClientStats {
  requests: number;
  retries: number;
  blobBytes: number;
  blobsDownloaded: number;
}

const MAX_MANIFEST_BYTES = 4 << 20;

/** Speaks the registry API. */
export class RegistryClient {
  readonly #o: RegistryClientOptions;
  readonly #policy: RetryPolicy;
  readonly #auth = new RegistryAuth();
  readonly #credentials = new Map<string, Promise<RegistryCredentials | undefined>>();
  readonly stats: RegistryClientStats = {
    requests: 0,
    retries: 0,
    blobBytes: 0,
    blobsDownloaded: 0,
  };

  constructor(options: RegistryClientOptions) {
    this.#o = options;
    this.#policy = options.retry ?? DEFAULT_RETRY_POLICY;
  }

  /**
   * Resolves a reference to its linux/amd64 image manifest.
   * @throws {AenvError} `IMAGE_NOT_FOUND`, `IMAGE_REGISTRY_DENIED`,
   *   `IMAGE_REGISTRY_UNAVAILABLE`, `IMAGE_DIGEST_MISMATCH`, `IMAGE_UNSUPPORTED`, `IMAGE_INVALID`.
   */
  async resolve(ref: ImageReference, signal?: AbortSignal): Promise<ResolvedImage> {
    const top = await this.#manifest(ref, manifestRef(ref), signal);
    if (top.doc.kind === 'manifest')
      return { reference: ref, digest: top.digest, manifest: top.doc };
    const chosen = selectPlatform(top.doc);
    const inner = await this.#manifest(ref, chosen.digest, signal);
    if (inner.doc.kind !== 'manifest') {
      throw new AenvError('IMAGE_UNSUPPORTED', `${chosen.digest} is an index inside an index`);
    }
    return { reference: ref, digest: chosen.digest, manifest: inner.doc };
  }

  /**
   * Reads a small blob (an image config) into memory, verified.
   * @throws {AenvError} as {@link resolve}.
   */
  async readBlob(ref: ImageReference, blob: Descriptor, signal?: AbortSignal): Promise<Buffer> {
    if (blob.size > MAX_MANIFEST_BYTES) {
      throw new AenvError('IMAGE_INVALID', `blob ${blob.digest} is too large to read into memory`);
    }
    const body = await withRetries(
      this.#policy,
      `reading ${blob.digest}`,
      async () => {
        const res = await this.#get(ref, `blobs/${blob.digest}`, {}, signal);
        if (res.status === 404) throw notFound(ref, `blob ${blob.digest}`, res);
        if (res.status !== 200) throw unexpected(ref, res);
        return readBody(res, MAX_MANIFEST_BYTES, this.#policy.timeoutMs);
      },
      this.#onRetry,
    );
    verify(body, blob.digest, ref);
    return body;
  }

  /**
   * Downloads a blob into `file` (created or replaced), resuming after
   * broken connections; checks size and digest. On failure the file is removed.
   * @throws {AenvError} as {@link resolve}.
   */
  async downloadBlob(
    ref: ImageReference,
    blob: Descriptor,
    file: string,
    options: { onBytes?: (bytes: number) => void; signal?: AbortSignal } = {},
  ): Promise<void> {
    const fh = await open(file, 'w');
    const state = { have: 0, hash: createHash('sha256') };
    try {
      await withRetries(
        this.#policy,
        `downloading ${blob.digest}`,
        async () => {
          const range: Record<string, string> =
            state.have > 0 ? { range: `bytes=${state.have}-` } : {};
          const res = await this.#get(ref, `blobs/${blob.digest}`, range, options.signal);
          if (res.status === 404) throw notFound(ref, `blob ${blob.digest}`, res);
          if (res.status === 200 && state.have > 0) {
            // The registry ignored the range: start over.
            state.have = 0;
            state.hash = createHash('sha256');
            await fh.truncate(0);
          } else if (res.status !== 200 && res.status !== 206) {
            throw unexpected(ref, res);
          }
          await streamInto(res, this.#policy.timeoutMs, async (chunk) => {
            if (state.have + chunk.length > blob.size)
              throw mismatch(ref, blob.digest, 'more bytes than its size');
            await fh.write(chunk, 0, chunk.length, state.have);
            state.hash.update(chunk);
            state.have += chunk.length;
            this.stats.blobBytes += chunk.length;
            options.onBytes?.(state.have);
          });
        },
        this.#onRetry,
      );
      const got = `sha256:${state.hash.digest('hex')}`;
      if (state.have !== blob.size || got !== blob.digest) {
        throw mismatch(ref, blob.digest, `got ${state.have} bytes hashing to ${got}`);
      }
      this.stats.blobsDownloaded++;
      await fh.close();
    } catch (err) {
      await fh.close().catch(() => undefined);
      await rm(file, { force: true });
      throw err;
    }
  }

  readonly #onRetry = (): void => {
    this.stats.retries++;
  };

  async #manifest(ref: ImageReference, reference: string, signal?: AbortSignal) {
    const what = `manifest ${reference}`;
    const { body, type, headerDigest } = await withRetries(
      this.#policy,
      `reading ${what}`,
      async () => {
        const res = await this.#get(
          ref,
          `manifests/${reference}`,
          { accept: MANIFEST_ACCEPT },
          signal,
        );
        if (res.status === 404) throw notFound(ref, what, res);
        if (res.status !== 200) throw unexpected(ref, res);
        return {
          body: await readBody(res, MAX_MANIFEST_BYTES, this.#policy.timeoutMs),
          type: res.headers.get('content-type') ?? '',
          headerDigest: res.headers.get('docker-content-digest'),
        };
      },
      this.#onRetry,
    );
    const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
    if (reference.startsWith('sha256:')) verify(body, reference, ref);
    else if (headerDigest?.startsWith('sha256:') === true && headerDigest !== digest) {
      throw mismatch(ref, headerDigest, `the manifest hashes to ${digest}`);
    }
    return { digest, doc: parseManifest(body, type) };
  }

  /** One authenticated GET (no retry): answers a 401 challenge once. */
  async #get(
    ref: ImageReference,
    path: string,
    extra: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Response> {
    const scheme = this.#o.insecureRegistries.includes(ref.registry) ? 'http' : 'https';
    const url = `${scheme}://${registryApiHost(ref.registry)}/v2/${ref.repository}/${path}`;
    const scope = `repository:${ref.repository}:pull`;
    const credentials = await this.#credentialsOf(ref.registry);
    let authorization = this.#auth.cached(ref.registry, scope, credentials);
    for (let round = 0; round < 2; round++) {
      const headers = { ...extra, ...(authorization === undefined ? {} : { authorization }) };
      this.stats.requests++;
      const res = await sendOnce({ url, headers }, this.#policy.timeoutMs, signal);
      if (res.status !== 401 && res.status !== 403) return res;
      await res.body?.cancel();
      const challenge = parseChallenge(res.headers.get('www-authenticate') ?? '');
      if (res.status === 403 || round === 1 || challenge === undefined) {
        this.#auth.forget(ref.registry, scope);
        throw denied(
          ref.registry,
          `${res.status} for ${ref.repository} (${credentials === undefined ? 'no credentials' : 'credentials refused'})`,
        );
      }
      authorization = await this.#auth.answer(challenge, {
        registry: ref.registry,
        scope,
        credentials,
        fetch: (u, init) =>
          withRetries(this.#policy, `token for ${ref.registry}`, () =>
            sendOnce(
              { url: u, headers: (init.headers ?? {}) as Record<string, string> },
              this.#policy.timeoutMs,
              signal,
            ),
          ),
      });
    }
    throw denied(ref.registry, 'authentication did not settle');
  }

  #credentialsOf(registry: string): Promise<RegistryCredentials | undefined> {
    let found = this.#credentials.get(registry);
    if (found === undefined) {
      found = this.#o.credentials(registry);
      this.#credentials.set(registry, found);
    }
    return found;
  }
}

async function streamInto(
  res: Response,
  idleMs: number,
  onChunk: (chunk: Uint8Array) => Promise<void>,
): Promise<void> {
  if (res.body === null) return;
  const reader = res.body.getReader();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TransientError(`no data for ${idleMs} ms`)), idleMs);
      });
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await Promise.race([reader.read(), idle]);
      } catch (err) {
        if (err instanceof TransientError) throw err;
        throw new TransientError(`connection broke mid-body: ${describeNetworkError(err)}`);
      } finally {
        clearTimeout(timer);
      }
      if (chunk.done) return;
      await onChunk(chunk.value as Uint8Array);
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

async function readBody(res: Response, max: number, idleMs: number): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  let size = 0;
  await streamInto(res, idleMs, (chunk) => {
    size += chunk.length;
    if (size > max) throw new AenvError('IMAGE_INVALID', `answer exceeds ${max} bytes`);
    parts.push(chunk);
    return Promise.resolve();
  });
  return Buffer.concat(parts);
}

function verify(body: Buffer, digest: string, ref: ImageReference): void {
  const got = `sha256:${createHash('sha256').update(body).digest('hex')}`;
  if (got !== digest) throw mismatch(ref, digest, `the content hashes to ${got}`);
}

function mismatch(ref: ImageReference, digest: string, detail: string): AenvError {
  return new AenvError(
    'IMAGE_DIGEST_MISMATCH',
    `${ref.registry}/${ref.repository}: ${digest} does not match its digest (${detail})`,
    {
      fields: { digest },
    },
  );
}

function notFound(ref: ImageReference, what: string, res: Response): AenvError {
  void res.body?.cancel();
  return new AenvError('IMAGE_NOT_FOUND', `${ref.registry}/${ref.repository}: no ${what}`, {
    fields: { image: `${ref.registry}/${ref.repository}` },
  });
}

function unexpected(ref: ImageReference, res: Response): AenvError {
  void res.body?.cancel();
  return new AenvError(
    'IMAGE_REGISTRY_UNAVAILABLE',
    `${ref.registry} answered ${res.status} ${res.statusText}`.trim(),
  );
}

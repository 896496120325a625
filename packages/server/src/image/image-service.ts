/**
 * `ImageService`: the node's image side. `pull(reference)` turns any OCI
 * image into a disk of the storage engine: normalise the reference and
 * check the registry allow-list, resolve the manifest (one registry round
 * trip; a tag may have moved), and either find the image converted already
 * (`layer-cache.ts`) or read its config and convert what the cache lacks
 * (`image-converter.ts`). Pulls of the same image at once share one job.
 *
 * It also answers the layer collector: the layers of every converted image
 * (they stay until images can be removed) and of conversions in flight.
 *
 * @module
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';
import type { BlobStore, ImageSpec } from '@aenv/storage';
import {
  EXT4_RECIPE,
  growFilesystem,
  removeConversionLeftovers,
  type ConversionLeftovers,
} from './ext4-volume.js';
import { ImageConverter } from './image-converter.js';
import type { PullProgressListener } from './image-progress.js';
import {
  formatImageReference,
  parseImageReference,
  registryAllowed,
  type ImageReference,
} from './image-reference.js';
import { dockerConfigPath, retryPolicyOf, type ImageConfigSection } from './image-settings.js';
import { LayerCache, type ImageRecord } from './layer-cache.js';
import { parseImageConfig, type ImageConfig } from './oci-manifest.js';
import { RegistryClient } from './registry-client.js';
import { dockerConfigCredentials, type CredentialSource } from './registry-credentials.js';
import { DiskGrower } from './disk-grower.js';

/** Options of {@link ImageService.start}. */
export interface ImageServiceOptions {
  readonly settings: ImageConfigSection;
  /** The node's blob store (layers and conversion records). */
  readonly store: BlobStore;
  /** `$AENV_HOME`: conversions work under `images/work/`. */
  readonly home: string;
  /** Where registry credentials come from (default: the Docker config of the settings). */
  readonly credentials?: CredentialSource;
}

/** A pulled image: its disk and config. */
export interface PulledImage {
  /** The normalised reference it was pulled by. */
  readonly reference: string;
  /** Digest of its linux/amd64 manifest. */
  readonly manifestDigest: string;
  readonly image: Required<ImageSpec>;
  readonly config: ImageConfig;
  /** OCI layers downloaded and storage layers built by this pull (0 when all was cached). */
  readonly downloaded: number;
  readonly converted: number;
}

/** Options of {@link ImageService.pull}. */
export interface PullOptions {
  readonly onProgress?: PullProgressListener;
  readonly signal?: AbortSignal;
}

/** Counters since start (tests and metrics). */
export interface ImageServiceStats {
  pulls: number;
  blobsDownloaded: number;
  layersConverted: number;
}

/** Pulls and converts images. */
export class ImageService {
  readonly #o: ImageServiceOptions;
  readonly #client: RegistryClient;
  readonly #cache: LayerCache;
  readonly #converter: ImageConverter;
  readonly #grower: DiskGrower;
  readonly #jobs = new Map<string, Promise<PulledImage>>();
  /** Layers of converted images and of work in flight: never collected. */
  readonly #layers = new Set<string>();
  readonly stats: ImageServiceStats = { pulls: 0, blobsDownloaded: 0, layersConverted: 0 };
  /** What the start removed of killed conversions. */
  readonly leftovers: ConversionLeftovers;

  private constructor(o: ImageServiceOptions, leftovers: ConversionLeftovers) {
    this.#o = o;
    this.leftovers = leftovers;
    this.#cache = new LayerCache(o.store, EXT4_RECIPE);
    this.#client = new RegistryClient({
      insecureRegistries: o.settings.insecureRegistries,
      credentials: o.credentials ?? dockerConfigCredentials(dockerConfigPath(o.settings)),
      retry: retryPolicyOf(o.settings),
    });
    const workRoot = join(o.home, 'images', 'work');
    this.#converter = new ImageConverter({
      store: o.store,
      cache: this.#cache,
      workRoot,
      downloadConcurrency: o.settings.downloadConcurrency,
      onLayerStored: (d) => this.#layers.add(d),
    });
    this.#grower = new DiskGrower({
      store: o.store,
      cache: this.#cache,
      workRoot,
      onLayerStored: (d) => this.#layers.add(d),
    });
  }

  /**
   * Removes what killed conversions left (mounts, loop devices, files) and
   * loads the layers of converted images.
   */
  static async start(options: ImageServiceOptions): Promise<ImageService> {
    const workRoot = join(options.home, 'images', 'work');
    const leftovers = await removeConversionLeftovers(workRoot);
    await mkdir(workRoot, { recursive: true, mode: 0o700 });
    const service = new ImageService(options, leftovers);
    for await (const r of service.#cache.images())
      for (const l of r.image.layers) service.#layers.add(l);
    return service;
  }

  /** The registry client's counters (requests, retries, bytes). */
  get registryStats(): RegistryClient['stats'] {
    return this.#client.stats;
  }

  /** Layers the collector must keep. */
  layers(): Set<string> {
    return new Set(this.#layers);
  }

  /** The disk size images are converted to, bytes. */
  get diskSizeBytes(): number {
    return this.#o.settings.diskSizeMiB * 2 ** 20;
  }

  /**
   * Pulls an image (normalised reference or short name) and converts it.
   * @throws {AenvError} `IMAGE_REFERENCE_INVALID`, `IMAGE_REGISTRY_NOT_ALLOWED`,
   *   registry and conversion errors.
   */
  async pull(reference: string, options: PullOptions = {}): Promise<PulledImage> {
    const ref = parseImageReference(reference);
    if (!registryAllowed(ref.registry, this.#o.settings.allowedRegistries)) {
      throw new AenvError(
        'IMAGE_REGISTRY_NOT_ALLOWED',
        `registry ${ref.registry} is not allowed on this node (image.allowedRegistries)`,
        {
          fields: { registry: ref.registry },
        },
      );
    }
    this.stats.pulls++;
    const progress = options.onProgress;
    progress?.({
      stage: 'resolve',
      status: 'start',
      phase: 'resolve',
      message: formatImageReference(ref),
    });
    const resolved = await this.#client.resolve(ref, options.signal);
    progress?.({ stage: 'resolve', status: 'done', phase: 'resolve', message: resolved.digest });
    const key = this.#cache.imageKey(this.diskSizeBytes, resolved.digest);
    let job = this.#jobs.get(key);
    if (job === undefined) {
      job = this.#convert(ref, resolved.digest, resolved.manifest, key, options);
      this.#jobs.set(key, job);
      void job.finally(() => this.#jobs.delete(key)).catch(() => undefined);
    }
    return job;
  }

  /**
   * A disk of `sizeBytes` holding `image`'s filesystem, grown (one cached
   * layer on top) when bigger than the image's.
   * @throws {AenvError} `INVALID_ARGUMENT` when smaller than the image; `IMAGE_CONVERT_FAILED`.
   */
  async resize(image: Required<ImageSpec>, sizeBytes: number): Promise<Required<ImageSpec>> {
    if (sizeBytes === image.virtualSize) return image;
    if (sizeBytes < image.virtualSize) {
      throw new AenvError(
        'INVALID_ARGUMENT',
        `the disk cannot be smaller than the image's ${image.virtualSize / 2 ** 20} MiB`,
        {
          fields: { field: 'diskSizeMB' },
        },
      );
    }
    return this.#grower.grow(image, sizeBytes, growFilesystem);
  }

  async #convert(
    ref: ImageReference,
    digest: string,
    manifest: Awaited<ReturnType<RegistryClient['resolve']>>['manifest'],
    key: string,
    options: PullOptions,
  ): Promise<PulledImage> {
    const reference = formatImageReference(ref);
    const known = await this.#cache.image(key);
    if (known !== undefined) {
      options.onProgress?.({
        stage: 'image',
        status: 'done',
        phase: 'cached',
        message: 'already converted',
      });
      return pulled(known, 0, 0);
    }
    const config = parseImageConfig(
      await this.#client.readBlob(ref, manifest.config, options.signal),
      manifest.layers.length,
    );
    const result = await this.#converter.convert({
      layers: manifest.layers,
      diffIds: config.diffIds,
      virtualSize: this.diskSizeBytes,
      download: (layer, file, onBytes, signal) =>
        this.#client.downloadBlob(ref, layer, file, {
          onBytes,
          signal: anySignal(signal, options.signal),
        }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    });
    this.stats.blobsDownloaded += result.downloaded;
    this.stats.layersConverted += result.converted;
    const record: ImageRecord = {
      version: 1,
      reference,
      manifestDigest: digest,
      image: result.image,
      config,
      createdAt: new Date().toISOString(),
    };
    await this.#cache.putImage(key, record);
    for (const l of result.image.layers) this.#layers.add(l);
    options.onProgress?.({
      stage: 'image',
      status: 'done',
      message: `${result.downloaded} layers downloaded, ${result.converted} converted`,
    });
    return pulled(record, result.downloaded, result.converted);
  }
}

function pulled(r: ImageRecord, downloaded: number, converted: number): PulledImage {
  return {
    reference: r.reference,
    manifestDigest: r.manifestDigest,
    image: r.image,
    config: r.config,
    downloaded,
    converted,
  };
}

function anySignal(a: AbortSignal, b: AbortSignal | undefined): AbortSignal {
  return b === undefined ? a : AbortSignal.any([a, b]);
}

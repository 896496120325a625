/**
 * The daemon's `image` and `template` configuration sections: where images
 * may come from and how, how big their disks are, and the limits of
 * template builds.
 *
 * @module
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { field, type ResolvedConfig } from '@aenv/shared';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './registry-http.js';

/** The `image` section. */
export const imageConfigSchema = {
  allowedRegistries: field.list({
    default: ['*'],
    env: 'AENV_IMAGE_ALLOWED_REGISTRIES',
    doc: 'Registries images may come from (`docker.io`, `127.0.0.1:5000`, `*.example.com`); `*` allows all, an empty list none.',
  }),
  insecureRegistries: field.list({
    default: [],
    env: 'AENV_IMAGE_INSECURE_REGISTRIES',
    doc: 'Registries (`host:port`) reached over plain HTTP instead of HTTPS.',
  }),
  dockerConfig: field.optionalPath({
    default: undefined,
    env: 'AENV_IMAGE_DOCKER_CONFIG',
    doc: 'Docker client config with registry credentials; default $DOCKER_CONFIG/config.json, else ~/.docker/config.json.',
  }),
  diskSizeMiB: field.integer({
    default: 4096,
    min: 256,
    max: 1048576,
    env: 'AENV_IMAGE_DISK_SIZE_MIB',
    doc: 'Size of the filesystem images are converted into (sparse: costs what the image holds), MiB.',
  }),
  retries: field.integer({
    default: DEFAULT_RETRY_POLICY.retries,
    min: 0,
    max: 20,
    env: 'AENV_IMAGE_RETRIES',
    doc: 'Retries of a failed registry request (network errors, resets, 429, 5xx), with exponential backoff.',
  }),
  timeoutSeconds: field.integer({
    default: DEFAULT_RETRY_POLICY.timeoutMs / 1000,
    min: 1,
    max: 3600,
    env: 'AENV_IMAGE_TIMEOUT_SECONDS',
    doc: 'How long a registry request may wait for an answer, or a download for its next bytes.',
  }),
  downloadConcurrency: field.integer({
    default: 3,
    min: 1,
    max: 16,
    env: 'AENV_IMAGE_DOWNLOAD_CONCURRENCY',
    doc: 'Layer blobs one pull downloads at once.',
  }),
};

/** The `template` section. */
export const templateConfigSchema = {
  readyTimeoutSeconds: field.integer({
    default: 600,
    min: 1,
    max: 86400,
    env: 'AENV_TEMPLATE_READY_TIMEOUT_SECONDS',
    doc: 'How long a build waits for its readyCmd to succeed.',
  }),
  stepTimeoutSeconds: field.integer({
    default: 3600,
    min: 1,
    max: 86400,
    env: 'AENV_TEMPLATE_STEP_TIMEOUT_SECONDS',
    doc: 'Longest a build step (RUN, COPY) may run.',
  }),
  maxConcurrentBuilds: field.integer({
    default: 2,
    min: 1,
    max: 64,
    env: 'AENV_TEMPLATE_MAX_CONCURRENT_BUILDS',
    doc: 'Template builds running at once; more wait (status `waiting`).',
  }),
  maxUploadMiB: field.integer({
    default: 1024,
    min: 1,
    env: 'AENV_TEMPLATE_MAX_UPLOAD_MIB',
    doc: 'Largest COPY upload (files-hash flow, build contexts), MiB.',
  }),
};

/** The resolved `image` section. */
export type ImageConfigSection = ResolvedConfig<typeof imageConfigSchema>;

/** The resolved `template` section. */
export type TemplateConfigSection = ResolvedConfig<typeof templateConfigSchema>;

/** The Docker config file to read credentials from. */
export function dockerConfigPath(
  section: ImageConfigSection,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (section.dockerConfig !== undefined) return section.dockerConfig;
  const dir = env.DOCKER_CONFIG;
  return dir !== undefined && dir !== ''
    ? join(dir, 'config.json')
    : join(homedir(), '.docker', 'config.json');
}

/** The retry policy of the section. */
export function retryPolicyOf(section: ImageConfigSection): RetryPolicy {
  return {
    ...DEFAULT_RETRY_POLICY,
    retries: section.retries,
    timeoutMs: section.timeoutSeconds * 1000,
  };
}

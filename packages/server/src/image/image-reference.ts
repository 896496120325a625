/**
 * Image references: parsing and normalising `[registry/]repository[:tag][@digest]`
 * the way Docker does, so `ubuntu:24.04` and `docker.io/library/ubuntu:24.04`
 * name the same image.
 *
 * Rules (Docker's reference grammar):
 * - the first path component is a registry when it contains `.` or `:`, or
 *   is `localhost`; otherwise the registry is `docker.io`;
 * - on `docker.io` a single-component repository gets `library/`;
 *   `index.docker.io` is `docker.io`, whose API host is `registry-1.docker.io`;
 * - repository components are lowercase `[a-z0-9]` runs joined by `.`, `_`,
 *   `__` or dashes; a tag is `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`; the tag
 *   defaults to `latest` unless a digest is given.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** A parsed, normalised image reference. */
export interface ImageReference {
  /** Registry host (and port) as written, normalised: `docker.io`, `127.0.0.1:5000`. */
  readonly registry: string;
  /** Repository path in that registry: `library/ubuntu`. */
  readonly repository: string;
  /** The tag, when given or defaulted (`latest` without a digest). */
  readonly tag: string | undefined;
  /** `sha256:<hex>` when the reference pins one. */
  readonly digest: string | undefined;
}

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const REGISTRY = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9-]+)*(?::\d{1,5})?$/;
const IPV6_REGISTRY = /^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

function invalid(ref: string, why: string): AenvError {
  return new AenvError('IMAGE_REFERENCE_INVALID', `image reference '${ref}': ${why}`, {
    fields: { image: ref },
  });
}

/** Splits `name[:tag][@digest]` into its parts (checked). */
function splitTagAndDigest(
  input: string,
  ref: string,
): { rest: string; tag?: string; digest?: string } {
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw invalid(input, `'${digest}' is not a sha256 digest`);
  }
  const lastColon = rest.lastIndexOf(':');
  if (lastColon <= rest.lastIndexOf('/'))
    return { rest, ...(digest === undefined ? {} : { digest }) };
  const tag = rest.slice(lastColon + 1);
  if (!TAG.test(tag)) throw invalid(input, `'${tag}' is not a valid tag`);
  return { rest: rest.slice(0, lastColon), tag, ...(digest === undefined ? {} : { digest }) };
}

/** Splits `[registry/]path` into the registry and the repository components. */
function splitRegistry(input: string, name: string): { registry: string; parts: string[] } {
  const parts = name.split('/');
  const first = parts[0] ?? '';
  const explicit =
    parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (!explicit) return { registry: 'docker.io', parts };
  if (!REGISTRY.test(first) && !IPV6_REGISTRY.test(first)) {
    throw invalid(input, `'${first}' is not a registry host`);
  }
  const registry =
    first === 'index.docker.io' || first === 'registry-1.docker.io' ? 'docker.io' : first;
  return { registry, parts: parts.slice(1) };
}

/**
 * Parses and normalises an image reference.
 * @throws {AenvError} `IMAGE_REFERENCE_INVALID`.
 */
export function parseImageReference(input: string): ImageReference {
  const ref = input.trim();
  if (ref === '' || ref.length > 512) throw invalid(input, 'empty or too long');
  const { rest, tag, digest } = splitTagAndDigest(input, ref);
  const { registry, parts } = splitRegistry(input, rest);
  if (registry === 'docker.io' && parts.length === 1) parts.unshift('library');
  for (const c of parts) {
    if (!COMPONENT.test(c)) throw invalid(input, `repository component '${c}' is not valid`);
  }
  return {
    registry,
    repository: parts.join('/'),
    tag: tag ?? (digest === undefined ? 'latest' : undefined),
    digest,
  };
}

/** The canonical text of a reference: `docker.io/library/ubuntu:24.04[@sha256:…]`. */
export function formatImageReference(r: ImageReference): string {
  const tag = r.tag === undefined ? '' : `:${r.tag}`;
  const digest = r.digest === undefined ? '' : `@${r.digest}`;
  return `${r.registry}/${r.repository}${tag}${digest}`;
}

/** The host the registry's HTTP API lives on (`docker.io` → `registry-1.docker.io`). */
export function registryApiHost(registry: string): string {
  return registry === 'docker.io' ? 'registry-1.docker.io' : registry;
}

/** The manifest reference to ask for: the digest when pinned, else the tag. */
export function manifestRef(r: ImageReference): string {
  return r.digest ?? r.tag ?? 'latest';
}

/** A short default name for a template made of `r`: its repository's last component. */
export function defaultTemplateName(r: ImageReference): string {
  const leaf = r.repository.split('/').pop() ?? r.repository;
  return leaf;
}

/**
 * Whether `registry` is allowed by a node's allow-list: `*` allows every
 * registry, an empty list none; entries match a registry exactly
 * (`docker.io`, `127.0.0.1:5000`) or by a `*.` domain suffix.
 */
export function registryAllowed(registry: string, allowed: readonly string[]): boolean {
  return allowed.some((a) => {
    if (a === '*') return true;
    if (a.startsWith('*.')) return registry.endsWith(a.slice(1));
    return a === registry;
  });
}

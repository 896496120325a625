/**
 * Chooses the response encoding of `GET /files` from `Accept-Encoding`:
 * gzip when the client accepts it, else identity; when the client refuses
 * both, nothing (406), as E2B's envd does.
 *
 * @module
 */

/** The encodings envd can send. */
export type FileEncoding = 'gzip' | 'identity';

/** The encoding to answer with, or undefined when none is acceptable. */
export function chooseEncoding(header: string | undefined): FileEncoding | undefined {
  if (header === undefined || header.trim() === '') return 'identity';
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    if (name === '') continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam === undefined ? 1 : Number(qParam.slice(2));
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const star = q.get('*');
  const gzip = q.get('gzip') ?? q.get('x-gzip') ?? star ?? 0;
  if (gzip > 0) return 'gzip';
  const identity = q.get('identity') ?? (star === 0 ? 0 : 1);
  return identity > 0 ? 'identity' : undefined;
}

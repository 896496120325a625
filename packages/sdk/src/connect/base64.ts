/**
 * Base64 for proto3 JSON `bytes` fields, with only what every JavaScript
 * runtime has (`btoa`/`atob`), so the SDK needs no `Buffer`. Decoding
 * accepts the URL-safe alphabet and missing padding too.
 *
 * @module
 */

/** Standard base64 (with padding) of some bytes. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  // Chunks keep String.fromCharCode's argument list short.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** The bytes of a base64 string (standard or URL-safe, padded or not). */
export function fromBase64(text: string): Uint8Array {
  let normal = text.replace(/-/g, '+').replace(/_/g, '/');
  while (normal.length % 4 !== 0) normal += '=';
  const binary = atob(normal);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

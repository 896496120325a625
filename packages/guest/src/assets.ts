/**
 * Files shipped beside the code in `packages/guest/assets/` (shell and C
 * sources, built into the guest at artifact-build time).
 *
 * @module
 */
import { fileURLToPath } from 'node:url';

/** Names of the asset files. */
export const ASSETS = {
  initramfsInit: 'initramfs-init.sh',
  initSource: 'aenv-init.c',
} as const;

/** Absolute path of an asset (this module runs from `dist/src/`). */
export function assetPath(name: string): string {
  return fileURLToPath(new URL(`../../assets/${name}`, import.meta.url));
}

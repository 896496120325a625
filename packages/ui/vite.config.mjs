// Builds the dashboard (web/) into ui-dist/, served by @aenv/ui at /ui/.
// `npm run build` at the root runs it; the result ships in the package.
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'web',
  base: '/ui/',
  logLevel: 'warn',
  build: {
    outDir: '../ui-dist',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1024,
  },
  oxc: { jsx: { runtime: 'automatic' } },
});

// Builds the dashboard into dist/dashboard/ (served by Streamgate at /dashboard/). Relative asset
// URLs (base './') keep it working behind a proxy that adds a path prefix.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard/', import.meta.url)),
    emptyOutDir: true,
    // Everything ships as files: the Content-Security-Policy allows no inline script or style.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});

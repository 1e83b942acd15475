/**
 * The dashboard's build: a static bundle under `dist/` that the hub serves at `/ui/` (its
 * `dashboard/` module). File names carry a content hash, so the hub can let browsers cache every
 * asset for a year and only `index.html` is revalidated. No inline script or style is emitted:
 * the hub's Content-Security-Policy allows only `'self'`.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/ui/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0, // an inlined asset would be a data: URL the policy does not allow
    sourcemap: true,
  },
});

// Build and unit-test configuration for duet's web UI.
// The output in dist/ is embedded into the duet binary and served at `/`,
// so the base is relative: the assets work wherever the server mounts them.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No source maps in the embedded build: they would double the binary's payload.
    sourcemap: false,
    chunkSizeWarningLimit: 700,
    rollupOptions: {
      // The service worker is its own entry at a fixed name (sw.js, at the
      // root so its scope is the whole app); it imports types only, so it
      // shares no chunk with the page.
      input: { index: 'index.html', sw: 'src/sw/sw.ts' },
      output: { entryFileNames: (chunk) => (chunk.name === 'sw' ? 'sw.js' : 'assets/[name]-[hash].js') },
    },
  },
  // `npm run dev` against a running duet: DUET_URL=http://127.0.0.1:PORT npm run dev
  server: process.env.DUET_URL ? { proxy: { '/api': { target: process.env.DUET_URL, ws: true } } } : {},
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
  },
});

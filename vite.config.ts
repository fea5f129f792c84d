import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The web interface: plain TypeScript modules under web/, built into dist/web, which the service
// serves at / (src/http/web-interface.ts). Asset names carry content hashes, so they are cached
// for a year while index.html is always revalidated.
export default defineConfig({
  root: fileURLToPath(new URL('./web', import.meta.url)),
  base: '/',
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('./dist/web', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    // xterm is imported dynamically, so it is a chunk of its own, loaded when the terminal first
    // opens; highlight.js (core and a dozen languages) is in the main chunk, hence the higher limit.
    chunkSizeWarningLimit: 600,
  },
  server: {
    // `vite` in web/ during development; the service answers the API.
    proxy: {
      '/trpc': 'http://127.0.0.1:3000',
      '/api': { target: 'http://127.0.0.1:3000', ws: true },
      '/auth': 'http://127.0.0.1:3000',
    },
  },
});

// The dashboard's build: web/ -> web/dist (index.html + _app/, content-hashed). `npm run dev:web` serves it
// with hot reload at http://<slug>.localhost:5173 and passes API calls to the server on :3000 with the
// Host unchanged, so the organization, cookies and CSRF work as in production.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const API = ['/api', '/auth', '/grievance', '/nominee', '/consent', '/health', '/openapi.json', '/docs'];

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Not "assets": /assets is a dashboard page (the organization's consent assets).
    assetsDir: '_app',
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    // web/dist/.vite/manifest.json: which chunks each page needs (scripts/web-size.mjs reads it; never served).
    manifest: true,
  },
  server: {
    port: 5173,
    strictPort: true,
    allowedHosts: ['.localhost'],
    proxy: Object.fromEntries(API.map((path) => [path, { target: 'http://127.0.0.1:3000', changeOrigin: false }])),
  },
});

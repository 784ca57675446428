// The dashboard's build (issue 18): Vite 8 transforms TSX itself (oxc, React's automatic runtime);
// `npm run build` writes apps/dashboard/dist, which the API serves at `/` (apps/api/src/dashboard).
import { defineConfig } from 'vite';

const api = process.env.DASHBOARD_API ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  oxc: { jsx: { runtime: 'automatic' } },
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', target: 'es2022', reportCompressedSize: false },
  // `npx vite apps/dashboard`: the dev server, with the API of `npm run up` behind it.
  server: { proxy: { '/api': api, '/files': api } },
});

// Vite builds the demo into build/web: one page, one module worker that imports the rungs npm
// package (staged by the wasm-release build in build/wasm-release/npm; RUNGS_NPM_DIR overrides),
// and the bundled models from examples/models as hashed assets. Everything is served from the
// output folder; nothing is fetched from elsewhere.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const npmDir = process.env.RUNGS_NPM_DIR ?? here('../build/wasm-release/npm');
if (!existsSync(`${npmDir}/index.js`)) {
  throw new Error(`rungs npm package not found in ${npmDir}: build it first (bash scripts/web does)`);
}

export default defineConfig({
  root: here('.'),
  base: './',
  publicDir: false,
  resolve: { alias: { rungs: `${npmDir}/index.js` } },
  worker: { format: 'es' },
  build: {
    outDir: here('../build/web'),
    emptyOutDir: true,
    target: 'es2022',
    // The worker chunk holds the wasm module (embedded, ~2 MB): expected, not a warning.
    chunkSizeWarningLimit: 4096,
    assetsInlineLimit: 0,
  },
  server: { fs: { allow: [here('..'), npmDir] } },
});

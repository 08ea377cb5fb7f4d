// SPDX-License-Identifier: Apache-2.0
// Vite builds the demo into build/web: one page, one module worker that imports the rungs npm
// package (staged by the wasm-release build in build/wasm-release/npm; RUNGS_NPM_DIR overrides),
// and the bundled models from examples/models as hashed assets. Everything is served from the
// output folder; nothing is fetched from elsewhere. THIRD_PARTY_NOTICES.md, LICENSE and NOTICE
// land beside index.html (notices-plugin.js, from Vite's licence report).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { notices } from './notices-plugin.js';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const npmDir = process.env.RUNGS_NPM_DIR ?? here('../build/wasm-release/npm');
if (!existsSync(`${npmDir}/index.js`)) {
  throw new Error(`rungs npm package not found in ${npmDir}: build it first (bash scripts/web does)`);
}

const licenseFile = '.vite/license.json';
const noticeOptions = { repoRoot: here('..'), npmDir, licenseFile };

export default defineConfig({
  root: here('.'),
  plugins: [notices({ role: 'page', ...noticeOptions })],
  base: './',
  publicDir: false,
  resolve: { alias: { rungs: `${npmDir}/index.js` } },
  worker: { format: 'es', plugins: () => [notices({ role: 'worker', ...noticeOptions })] },
  build: {
    outDir: here('../build/web'),
    emptyOutDir: true,
    target: 'es2022',
    // The page chunk holds the chart code (~640 KB); the package's .wasm files are assets of their own.
    chunkSizeWarningLimit: 4096,
    assetsInlineLimit: 0,
    license: { fileName: licenseFile },
  },
  server: { fs: { allow: [here('..'), npmDir] } },
});

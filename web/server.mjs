// SPDX-License-Identifier: Apache-2.0
// A small static server for the built demo (build/web), with the headers that make the page
// cross-origin isolated: Cross-Origin-Opener-Policy: same-origin and
// Cross-Origin-Embedder-Policy: require-corp, which let the rungs package load its threaded
// WebAssembly variant (SharedArrayBuffer posted to workers). No dependencies: node:http only.
// `--no-isolation` leaves those headers out: the package then loads its single-threaded variant.
//
//   node web/server.mjs [--dir build/web] [--port 8080] [--host 127.0.0.1] [--no-isolation]
//
// Also imported by the browser test (web/test/demo.test.mjs), which starts it on a free port.
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.safetensors': 'application/octet-stream',
  '.txt': 'text/plain; charset=utf-8',
};

export const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** An http.Server serving the files under `dir` (index.html for "/"); not yet listening. */
export function createStaticServer(dir, { isolate = true } = {}) {
  const rootDir = resolve(dir);
  const headers = isolate ? isolationHeaders : {};
  return createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', ...headers }).end();
      return;
    }
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      res.writeHead(400, headers).end('bad request');
      return;
    }
    if (path.endsWith('/')) path += 'index.html';
    const file = normalize(join(rootDir, path));
    if (file !== rootDir && !file.startsWith(rootDir + sep)) {
      res.writeHead(403, headers).end('forbidden');
      return;
    }
    let st;
    try {
      st = statSync(file);
    } catch {
      st = null;
    }
    if (!st || !st.isFile()) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', ...headers }).end(`not found: ${path}`);
      return;
    }
    res.writeHead(200, {
      'Content-Type': types[extname(file)] ?? 'application/octet-stream',
      'Content-Length': st.size,
      // Hashed assets may be cached; the page itself is always revalidated.
      'Cache-Control': path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      ...headers,
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    createReadStream(file).pipe(res);
  });
}

/** Starts serving `dir`; resolves to { server, url } once listening. */
export function serve(dir, port = 0, host = '127.0.0.1', options = {}) {
  const server = createStaticServer(dir, options);
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      const shown = host === '127.0.0.1' || host === '::1' ? 'localhost' : host;
      resolvePromise({ server, url: `http://${shown}:${actual}/` });
    });
  });
}

function parseArgs(argv) {
  const args = { dir: fileURLToPath(new URL('../build/web', import.meta.url)), port: 8080, host: '127.0.0.1', isolate: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--dir') args.dir = value();
    else if (a === '--port') args.port = Number(value());
    else if (a === '--host') args.host = value();
    else if (a === '--no-isolation') args.isolate = false;
    else if (a === '--help' || a === '-h') {
      console.log('usage: node web/server.mjs [--dir build/web] [--port 8080] [--host 127.0.0.1] [--no-isolation]');
      process.exit(0);
    } else throw new Error(`unknown option ${a} (try --help)`);
  }
  if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) {
    throw new Error(`--port must be an integer in 0..65535, got ${args.port}`);
  }
  return args;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
    statSync(join(args.dir, 'index.html'));
  } catch (e) {
    console.error(`server: ${e.code === 'ENOENT' ? `no index.html in ${args.dir} (build it: bash scripts/web --build-only)` : e.message}`);
    process.exit(2);
  }
  try {
    const { url } = await serve(args.dir, args.port, args.host, { isolate: args.isolate });
    console.log(`rungs demo: ${url}  (serving ${args.dir}; Ctrl-C stops)`);
  } catch (e) {
    const hint = e.code === 'EADDRINUSE' ? ' (the port is taken: pass another with --port N)' : '';
    console.error(`server: cannot listen on ${args.host}:${args.port}: ${e.message}${hint}`);
    process.exit(1);
  }
}

// SPDX-License-Identifier: Apache-2.0
// Checks that an artefact's THIRD_PARTY_NOTICES.md names every third-party package the artefact
// really embeds. What it embeds is found independently of cmake/RungsNotices.cmake (which writes
// the notices from the CMake link graph):
//
//   node check_notices.mjs ninja <build-dir> <notices.md> <ninja-output>...
//     C++ artefacts (librungs.a, the rungs CLI, rungs_core.js): every object file ninja builds
//     into the outputs (`ninja -t inputs`) and every header the compiler read for each (`ninja -t
//     deps`, from the compiler's depfiles). A header under a package's include folder
//     (third_party/notices.json, `headers`) means the package's code is compiled in. Headers of
//     the host's C and C++ libraries are not: they are linked dynamically (glibc) or under the GCC
//     Runtime Library Exception (libstdc++). Any other header outside the source and build trees
//     is an unknown dependency and fails the check.
//   node check_notices.mjs web <dist-dir>
//     The built web demo: <dist>/.vite/modules.json (every module of every chunk, main bundle and
//     worker, written by web/vite.config.js) against <dist>/THIRD_PARTY_NOTICES.md. A module
//     under node_modules belongs to the package of its nearest package.json; a module of the rungs
//     npm package brings rungs itself and everything in that package's THIRD_PARTY_NOTICES.md.
//
// Each notice must have a `## <name> ...` section with a licence text. Then, so that the check
// itself is shown to bite, it is re-run with each required section removed and must fail each
// time. Exit code 0 only if everything holds.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const sourceRoot = path.resolve(here, '../..');
const registry = JSON.parse(readFileSync(path.join(sourceRoot, 'third_party/notices.json'), 'utf8'));

// Header folders of the host's C and C++ runtimes and of the compilers themselves.
const systemHeaders = [
  /^\/usr\/include\/[^/]+\.h$/,
  /^\/usr\/include\/(c\+\+|x86_64-linux-gnu|aarch64-linux-gnu|linux|asm|asm-generic|sys|bits)\//,
  /^\/usr\/lib\/gcc\//,
  /^\/usr\/lib\/llvm-\d+\/lib\/clang\//,
];

function fail(msg) {
  console.error(`check_notices: ${msg}`);
  process.exitCode = 1;
}

// Sections of a notices file: name -> body text.
export function parseNotices(text) {
  const sections = new Map();
  const parts = text.split(/^## /m).slice(1);
  for (const part of parts) {
    const name = part.split(/\s/, 1)[0];
    sections.set(name, part);
  }
  return sections;
}

// Names in `required` without a section that carries a licence text (a fenced block or a
// licence-sized paragraph).
export function missingNotices(text, required) {
  const sections = parseNotices(text);
  return [...required].filter((name) => {
    const body = sections.get(name);
    return !body || body.length < 200 || !/licen[cs]e|permission|copyright/i.test(body);
  });
}

function ninjaEmbedded(buildDir, outputs) {
  const ninja = (args) => execFileSync('ninja', ['-C', buildDir, '-t', ...args],
    { encoding: 'utf8', maxBuffer: 1 << 28 });
  const objects = new Set();
  for (const out of outputs) {
    for (const line of ninja(['inputs', out]).split('\n')) {
      if (/\.o(bj)?$/.test(line.trim())) objects.add(line.trim());
    }
  }
  if (objects.size === 0) throw new Error(`no object files found for ${outputs.join(', ')} in ${buildDir}`);
  const deps = ninja(['deps', ...objects]);
  const headers = new Set();
  let current = null;
  const headerCount = new Map();
  for (const line of deps.split('\n')) {
    if (/^\S.*: #deps \d+/.test(line)) {
      current = line.slice(0, line.indexOf(': #deps'));
      if (!/VALID/.test(line)) throw new Error(`stale depfile for ${current}: build first`);
      headerCount.set(current, 0);
    } else if (line.startsWith('    ') && current) {
      headers.add(path.resolve(buildDir, line.trim()));
      headerCount.set(current, headerCount.get(current) + 1);
    }
  }
  const noDeps = [...objects].filter((o) => !headerCount.get(o));
  if (noDeps.length) throw new Error(`no dependency records for ${noDeps.length} objects (e.g. ${noDeps[0]}): build first`);

  const embedded = new Map(); // name -> example header
  const unknown = new Set();
  const buildAbs = path.resolve(buildDir);
  for (const h of headers) {
    const dep = Object.entries(registry.deps).find(([, d]) => d.headers.some((frag) => h.includes(frag)));
    if (dep) {
      if (!embedded.has(dep[0])) embedded.set(dep[0], h);
      continue;
    }
    const inTree = (h.startsWith(sourceRoot + path.sep) && !h.includes(`${path.sep}.deps${path.sep}`)) ||
      h.startsWith(buildAbs + path.sep);
    if (inTree || systemHeaders.some((re) => re.test(h))) continue;
    unknown.add(h);
  }
  return { objects: objects.size, headers: headers.size, embedded, unknown };
}

function nearestPackage(file) {
  let dir = path.dirname(file);
  while (dir !== path.dirname(dir)) {
    const pj = path.join(dir, 'package.json');
    if (existsSync(pj)) {
      const j = JSON.parse(readFileSync(pj, 'utf8'));
      if (j.name) return { dir, name: j.name };
    }
    dir = path.dirname(dir);
  }
  return null;
}

function webEmbedded(dist) {
  const modules = JSON.parse(readFileSync(path.join(dist, '.vite/modules.json'), 'utf8'));
  const embedded = new Map();
  const unknown = new Set();
  for (const id of modules) {
    if (id.startsWith('\0')) continue;
    const file = id.split('?')[0];
    if (file.includes(`${path.sep}node_modules${path.sep}`)) {
      const pkg = nearestPackage(file);
      if (!pkg) unknown.add(file);
      else if (!embedded.has(pkg.name)) embedded.set(pkg.name, file);
    } else if (existsSync(path.join(path.dirname(file), 'rungs_core.js')) &&
               existsSync(path.join(path.dirname(file), 'THIRD_PARTY_NOTICES.md'))) {
      // The rungs npm package (aliased from build/wasm-release/npm): rungs and what it compiles in.
      embedded.set('rungs', file);
      const own = readFileSync(path.join(path.dirname(file), 'THIRD_PARTY_NOTICES.md'), 'utf8');
      for (const name of parseNotices(own).keys()) if (!embedded.has(name)) embedded.set(name, file);
    } else if (!file.startsWith(sourceRoot + path.sep)) {
      unknown.add(file);
    }
  }
  return { objects: modules.length, embedded, unknown };
}

function check(label, noticesPath, found) {
  if (!existsSync(noticesPath)) {
    fail(`${label}: ${noticesPath} does not exist`);
    return;
  }
  const text = readFileSync(noticesPath, 'utf8');
  for (const u of found.unknown) fail(`${label}: embeds ${u}, which belongs to no known package (add it to third_party/notices.json)`);
  const required = [...found.embedded.keys()];
  for (const name of missingNotices(text, required)) {
    fail(`${label}: embeds ${name} (${found.embedded.get(name)}) but ${noticesPath} has no notice for it`);
  }
  // The check must bite: drop each required section in turn and expect it to be reported.
  for (const name of required) {
    const without = text.split(/^(?=## )/m).filter((s) => !s.startsWith(`## ${name} `) && !s.startsWith(`## ${name}\n`)).join('');
    if (!missingNotices(without, required).includes(name)) fail(`${label}: self-test: removing ${name}'s notice went unnoticed`);
  }
  console.log(`${label}: ${found.objects} ${found.headers !== undefined ? 'objects' : 'modules'}, embeds ` +
    `${required.sort().join(', ') || 'no third-party code'}; ${noticesPath}: ${process.exitCode ? 'FAILED' : 'all present'}`);
}

const [mode, ...args] = process.argv.slice(2);
try {
  if (mode === 'ninja' && args.length >= 3) {
    const [buildDir, notices, ...outputs] = args;
    check(`notices ${path.basename(path.resolve(buildDir))} [${outputs.map((o) => path.basename(o)).join(', ')}]`,
      notices, ninjaEmbedded(buildDir, outputs));
  } else if (mode === 'web' && args.length === 1) {
    check('notices web demo', path.join(args[0], 'THIRD_PARTY_NOTICES.md'), webEmbedded(args[0]));
  } else {
    console.error('usage: check_notices.mjs ninja <build-dir> <notices.md> <ninja-output>... | web <dist-dir>');
    process.exitCode = 2;
  }
} catch (e) {
  fail(e.message);
}

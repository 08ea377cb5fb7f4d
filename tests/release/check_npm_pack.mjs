// SPDX-License-Identifier: Apache-2.0
// The npm package as it would be published:
//   node check_npm_pack.mjs <staged package dir, e.g. build/wasm-release/npm>
// - `npm pack --dry-run` prints no warning (any `npm warn` / `npm WARN` line fails);
// - the tarball lists the code, the README, LICENSE, NOTICE and THIRD_PARTY_NOTICES.md;
// - package.json has license Apache-2.0, repository, bugs, homepage and keywords, all pointing at
//   the same repository;
// - the README has the API overview, the ES-module-only note and links to the repository's docs;
// - the note is true: from CommonJS, require('rungs') fails and `await import('rungs')` works.
// Self-test: the warning detector must catch the warning npm gives for a package folder that has
// a .gitignore, no .npmignore and no "files" list.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const dir = path.resolve(process.argv[2] ?? '');
const problems = [];
const fail = (msg) => problems.push(msg);

function packDryRun(pkgDir) {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--loglevel=warn'], { cwd: pkgDir, encoding: 'utf8' });
  const warnings = `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => /^npm (warn|WARN)\b/.test(l));
  let files = [];
  try {
    files = JSON.parse(r.stdout)[0].files.map((f) => f.path);
  } catch {
    fail(`npm pack --dry-run --json gave no file list (exit ${r.status}): ${r.stderr.trim()}`);
  }
  return { status: r.status, warnings, files };
}

const pack = packDryRun(dir);
if (pack.status !== 0) fail(`npm pack --dry-run exited ${pack.status}`);
for (const w of pack.warnings) fail(`npm pack warns: ${w}`);
for (const f of ['package.json', 'index.js', 'index.d.ts', 'rungs_core.js', 'rungs_core.wasm', 'README.md', 'LICENSE',
                 'NOTICE', 'THIRD_PARTY_NOTICES.md']) {
  if (!pack.files.includes(f)) fail(`the tarball does not contain ${f}`);
}

const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
if (pkg.license !== 'Apache-2.0') fail(`package.json license is ${JSON.stringify(pkg.license)}`);
const repo = (pkg.homepage ?? '').replace(/#.*$/, '');
if (!/^https:\/\/\S+$/.test(repo)) fail(`package.json homepage is ${JSON.stringify(pkg.homepage)}`);
if (pkg.repository?.type !== 'git' || pkg.repository?.url !== `git+${repo}.git`) {
  fail(`package.json repository ${JSON.stringify(pkg.repository)} is not git+${repo}.git`);
}
if (pkg.bugs?.url !== `${repo}/issues`) fail(`package.json bugs ${JSON.stringify(pkg.bugs)} is not ${repo}/issues`);
if (!Array.isArray(pkg.keywords) || pkg.keywords.length < 3) fail('package.json has fewer than 3 keywords');

const readme = readFileSync(path.join(dir, 'README.md'), 'utf8');
if (!/^## API$/m.test(readme) || !readme.includes('BucketedCompileCache')) fail('README.md has no API overview');
if (!/^## ES module only$/m.test(readme) || !readme.includes("await import('rungs')")) {
  fail('README.md has no ES-module-only note with a dynamic import() for CommonJS');
}
if (!readme.includes(`${repo}/blob/main/docs/`)) fail(`README.md does not link the docs in ${repo}`);
if (/@[A-Z_]+@/.test(readme)) fail('README.md has an unreplaced @VARIABLE@');

// The note holds: CommonJS cannot require() the package and can import() it.
const tmp = mkdtempSync(path.join(os.tmpdir(), 'rungs-npm-check-'));
try {
  mkdirSync(path.join(tmp, 'cjs/node_modules'), { recursive: true });
  symlinkSync(dir, path.join(tmp, 'cjs/node_modules/rungs'));
  writeFileSync(path.join(tmp, 'cjs/main.cjs'), [
    "let required = 'loaded';",
    "try { require('rungs'); } catch (e) { required = e.code ?? e.message; }",
    "import('rungs').then((m) => console.log(JSON.stringify({ required, version: m.version() })));", ''].join('\n'));
  const out = JSON.parse(execFileSync('node', ['main.cjs'], { cwd: path.join(tmp, 'cjs'), encoding: 'utf8' }));
  if (out.required === 'loaded') fail("require('rungs') worked from CommonJS: the README's ES-module-only note is wrong");
  if (out.version !== pkg.version) fail(`import('rungs') from CommonJS gave version ${out.version}, expected ${pkg.version}`);

  // Self-test of the warning detector.
  cpSync(dir, path.join(tmp, 'pkg'), { recursive: true });
  writeFileSync(path.join(tmp, 'pkg/.gitignore'), 'node_modules\n');
  const { files, ...noFiles } = pkg;  // without "files", npm falls back to .gitignore and warns
  writeFileSync(path.join(tmp, 'pkg/package.json'), JSON.stringify(noFiles));
  if (packDryRun(path.join(tmp, 'pkg')).warnings.length === 0) {
    fail('self-test: a package with a .gitignore, no .npmignore and no files list gave no npm warning to detect');
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

for (const p of problems) console.error(`npm pack: ${p}`);
console.log(`npm pack --dry-run ${pkg.name}@${pkg.version}: ${pack.files.length} files, ` +
  `${pack.warnings.length} warnings, ${problems.length ? `${problems.length} problems` : 'ok'}`);
process.exit(problems.length ? 1 : 0);

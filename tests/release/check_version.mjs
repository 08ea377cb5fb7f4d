// SPDX-License-Identifier: Apache-2.0
// The version-agreement test: project(rungs VERSION x.y.z) in CMakeLists.txt is the only place the
// version is written; everything else must say the same.
//   node check_version.mjs --build <native build dir> --cli <rungs binary> [--npm <npm package dir>]
// Checks rungs::version() (through `rungs info --format json`), `rungs --version`,
// rungsConfigVersion.cmake (and its SameMinorVersion rule, evaluated by cmake), rungs.pc, the cpack
// configuration, the npm package.json template (and the staged package.json and README when --npm
// is given), CHANGELOG.md's latest release, the README's version line, every version the docs
// name (rungs-x.y.z, rungs_x.y.z, "rungs x.y.z") and every find_package(rungs <version>) in the
// docs and the consumer example. Then it checks itself: run
// against a different version, every check must fail.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
if (!args.build || !args.cli) {
  console.error('usage: check_version.mjs --build <dir> --cli <rungs> [--npm <dir>]');
  process.exit(2);
}
const read = (p) => readFileSync(p, 'utf8');
const run = (cmd, argv) => execFileSync(cmd, argv, { encoding: 'utf8' }).trim();

const project = read(path.join(root, 'CMakeLists.txt')).match(/project\(rungs\s+VERSION\s+(\d+\.\d+\.\d+)/);
if (!project) throw new Error('CMakeLists.txt: no project(rungs VERSION x.y.z)');
const version = project[1];
// The repository URL is also written once (HOMEPAGE_URL); CHANGELOG.md's links must use it.
const homepage = read(path.join(root, 'CMakeLists.txt')).match(/HOMEPAGE_URL\s+"([^"]+)"/)?.[1];
const urlProblems = [];
if (!homepage) urlProblems.push('CMakeLists.txt: no HOMEPAGE_URL in project()');
for (const m of read(path.join(root, 'CHANGELOG.md')).matchAll(/^\[[^\]]+\]: (\S+)/gm)) {
  if (/keepachangelog|semver/.test(m[1])) continue;
  if (homepage && !m[1].startsWith(`${homepage}/`)) urlProblems.push(`CHANGELOG.md links ${m[1]}, not ${homepage}`);
}

// Whether rungsConfigVersion.cmake accepts find_package(rungs <wanted>).
function cmakeAccepts(configVersion, wanted) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rungs-version-'));
  try {
    const [maj, min = '0', pat = '0'] = wanted.split('.');
    writeFileSync(path.join(dir, 'check.cmake'), [
      'set(CMAKE_SIZEOF_VOID_P 8)',
      `set(PACKAGE_FIND_VERSION "${wanted}")`,
      `set(PACKAGE_FIND_VERSION_MAJOR ${maj})`, `set(PACKAGE_FIND_VERSION_MINOR ${min})`,
      `set(PACKAGE_FIND_VERSION_PATCH ${pat})`, 'set(PACKAGE_FIND_VERSION_COUNT 3)',
      `include("${configVersion}")`,
      'message(STATUS "compatible=${PACKAGE_VERSION_COMPATIBLE} version=${PACKAGE_VERSION}")', ''].join('\n'));
    return /compatible=TRUE/.test(execFileSync('cmake', ['-P', path.join(dir, 'check.cmake')], { encoding: 'utf8' }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Gathers what every place says, once.
const cliVersion = run(args.cli, ['--version']);
const infoVersion = JSON.parse(run(args.cli, ['info', '--format', 'json'])).version;
const configVersionFile = path.join(args.build, 'rungsConfigVersion.cmake');
const pkgConfigVersion = read(configVersionFile).match(/set\(PACKAGE_VERSION "([^"]+)"\)/)?.[1];
const pcVersion = read(path.join(args.build, 'rungs.pc')).match(/^Version: (.*)$/m)?.[1];
const cpackVersion = read(path.join(args.build, 'CPackConfig.cmake')).match(/set\(CPACK_PACKAGE_VERSION "([^"]+)"\)/)?.[1];
const npmTemplate = JSON.parse(read(path.join(root, 'wasm/npm/package.json.in'))).version;
const changelog = read(path.join(root, 'CHANGELOG.md'));
const changelogLatest = changelog.match(/^## \[(\d+\.\d+\.\d+)\]/m)?.[1];
const changelogLink = changelog.match(/^\[(\d+\.\d+\.\d+)\]: /m)?.[1];
const readmeVersion = read(path.join(root, 'README.md')).match(/^Version (\S+)[ ,.(]/m)?.[1];
const findPackages = [];
for (const f of ['README.md', 'docs/building.md', 'CONTRIBUTING.md', 'tests/install/consumer/CMakeLists.txt']) {
  if (!existsSync(path.join(root, f))) continue;
  for (const m of read(path.join(root, f)).matchAll(/find_package\(rungs (\d+(?:\.\d+){0,2})\b/g)) findPackages.push([f, m[1]]);
}
// Versions the docs name: rungs-x.y.z / rungs_x.y.z (package file names), "rungs x.y.z".
const docMentions = [];
const docFiles = ['README.md', 'CONTRIBUTING.md', 'wasm/npm/README.md',
  ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
for (const f of docFiles) {
  if (!existsSync(path.join(root, f))) continue;
  for (const m of read(path.join(root, f)).matchAll(/\brungs[-_ ](\d+\.\d+\.\d+)(?![\d.]*\d)/g)) docMentions.push([f, m[1]]);
}
let npm = null;
if (args.npm) {
  npm = {
    json: JSON.parse(read(path.join(args.npm, 'package.json'))).version,
    readme: read(path.join(args.npm, 'README.md')),
  };
}

function problems(v) {
  const out = [];
  const same = (what, got) => { if (got !== v) out.push(`${what} says ${JSON.stringify(got)}, project() says ${v}`); };
  same('rungs --version', cliVersion);
  same('rungs::version() (rungs info --format json)', infoVersion);
  same('rungsConfigVersion.cmake', pkgConfigVersion);
  same('rungs.pc', pcVersion);
  same('CPackConfig.cmake', cpackVersion);
  same('CHANGELOG.md latest release', changelogLatest);
  same('CHANGELOG.md link reference', changelogLink);
  same('README.md "Version x.y.z" line', readmeVersion);
  if (npmTemplate !== '@PROJECT_VERSION@') out.push(`wasm/npm/package.json.in hard-codes ${npmTemplate}`);
  if (npm) {
    same('npm package.json', npm.json);
    if (!npm.readme.includes(`rungs ${v} `)) out.push(`npm README.md does not name rungs ${v}`);
  }
  const [maj, min] = v.split('.');
  if (!cmakeAccepts(configVersionFile, `${maj}.${min}`)) out.push(`rungsConfigVersion.cmake refuses find_package(rungs ${maj}.${min})`);
  for (const [f, said] of docMentions) same(`${f} ("rungs ${said}")`, said);
  for (const [f, want] of findPackages) {
    if (!cmakeAccepts(configVersionFile, want) || !v.startsWith(`${want.split('.').slice(0, 2).join('.')}.`)) {
      out.push(`${f}: find_package(rungs ${want}) does not match ${v}`);
    }
  }
  return out;
}

const found = [...problems(version), ...urlProblems];
for (const p of found) console.error(`version mismatch: ${p}`);

// Self-test: the rule must refuse the next minor version, and a different version must fail every
// comparison above.
const [maj, min, pat] = version.split('.').map(Number);
const selfErrors = [];
if (cmakeAccepts(configVersionFile, `${maj}.${min + 1}`)) selfErrors.push(`rungsConfigVersion.cmake accepts ${maj}.${min + 1}`);
if (maj === 0 && cmakeAccepts(configVersionFile, `${maj + 1}.0`)) selfErrors.push(`rungsConfigVersion.cmake accepts ${maj + 1}.0`);
const other = problems(`${maj}.${min + 1}.${pat}`);
const expected = 8 + (npm ? 2 : 0) + findPackages.length + docMentions.length;
if (other.length < expected) selfErrors.push(`a wrong version gave ${other.length} mismatches, expected at least ${expected}`);
for (const e of selfErrors) console.error(`version self-test: ${e}`);

console.log(`version ${version}: ${found.length === 0 ? 'all agree' : `${found.length} mismatches`} ` +
  `(CLI, rungs::version(), rungsConfigVersion.cmake [SameMinorVersion], rungs.pc, cpack, CHANGELOG.md, README.md` +
  `${npm ? ', npm package.json + README' : ''}, ${findPackages.length} find_package calls, ` +
  `${docMentions.length} versions named in the docs)`);
process.exit(found.length || selfErrors.length ? 1 : 0);

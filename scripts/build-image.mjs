// Builds the container image of deploy/Containerfile: FROM scratch, the single executable with
// the shared libraries it links, CA certificates, a non-root user and a writable /data and /tmp.
// Nothing is pulled from a registry. Steps: build the image's own executable (build/image/medpanel)
// when it is missing or older than what it is built from, lay out the build context in a staging
// directory, build it with buildah and write an OCI archive (build/medpanel-image.tar) that
// `podman load -i` and `docker load -i` (Docker 25 or later) take.
//
// Everything it makes is under build/ (gitignored): it never touches dist/, so an `npm start` or
// `npm test` running in the same checkout keeps the bundle it loaded (`npm run build` empties
// dist/ first, and `npm run build:exe` runs it).
//
//   node scripts/build-image.mjs [--stage-only] [--out FILE] [--staging DIR] [--docker FILE]
//                                [--executable FILE]
//
// --stage-only   lay out the build context and stop (no buildah needed)
// --out FILE     where the OCI archive goes (default build/medpanel-image.tar)
// --staging DIR  the build context (default build/image/context; emptied first)
// --docker FILE  also write the image in Docker's own archive format, for a Docker before 25
// --executable FILE  put this build of the executable in the image, as it is (tests pass theirs)
import {execFileSync, spawnSync} from 'node:child_process'
import {chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'
import {changedSince} from '../test/helpers/fresh-build.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
/** The image build's own directory: its CLI bundle and manifest, its executable, its build context. */
const work = join(root, 'build/image')
const executable = join(work, 'medpanel')
const containerfile = join(root, 'deploy/Containerfile')
/** The user serve runs as in the image (deploy/Containerfile's USER and --chown say the same). */
export const IMAGE_UID = 10001
/** Where the build machine keeps its CA bundle (Debian's ca-certificates). */
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt'

/**
 * Why build/image/medpanel needs building, or undefined when it is newer than every source it is
 * built from (the list test/helpers/fresh-build.mjs keeps, and the executable's own build script).
 */
function executableStale() {
  if (!existsSync(executable)) return 'build/image/medpanel does not exist'
  const changed = changedSince(statSync(executable).mtimeMs, ['scripts/build-exe.mjs'])
  return changed === undefined ? undefined : `${changed} changed since build/image/medpanel was built`
}

/**
 * Builds build/image/medpanel as `npm run build:exe` builds dist/medpanel (the CLI bundle for the
 * command manifest, then the executable), every file in build/image.
 */
function buildExecutable() {
  const manifest = join(work, 'oclif.manifest.json')
  const run = (script, args) => execFileSync(process.execPath, [join(root, 'scripts', script), ...args], {cwd: root, stdio: ['ignore', 'inherit', 'inherit']})
  run('build.mjs', ['--out', join(work, 'cli'), '--manifest', manifest])
  run('build-exe.mjs', ['--out', work, '--manifest', manifest])
}

/**
 * Lays out the build context in `staging`: rootfs/ (what the image holds, owned by root) and
 * volume/data/ (the store directory, which the Containerfile gives to the medpanel user).
 */
export function stageImage(staging, {from = executable} = {}) {
  rmSync(staging, {recursive: true, force: true})
  const rootfs = join(staging, 'rootfs')
  mkdirSync(rootfs, {recursive: true})
  copyFileSync(from, join(rootfs, 'medpanel'))
  chmodSync(join(rootfs, 'medpanel'), 0o755)
  // The same libraries test/e2e/executable.test.ts gives the executable in its empty root: every
  // path ldd prints (linux-vdso has none; it is the kernel's). copyFileSync follows symbolic links,
  // so each lands as a file at the path the executable (or the ELF interpreter) asks for.
  const libraries = execFileSync('ldd', [from], {encoding: 'utf8'}).match(/\/\S+/g) ?? []
  if (libraries.length === 0) throw new Error(`ldd named no shared library for ${from}`)
  for (const library of libraries) {
    mkdirSync(join(rootfs, dirname(library)), {recursive: true})
    copyFileSync(library, join(rootfs, library))
    chmodSync(join(rootfs, library), 0o755)
  }
  if (!existsSync(CA_BUNDLE)) throw new Error(`no CA bundle at ${CA_BUNDLE}: install Debian's ca-certificates (apt-get install ca-certificates)`)
  mkdirSync(join(rootfs, dirname(CA_BUNDLE)), {recursive: true})
  copyFileSync(CA_BUNDLE, join(rootfs, CA_BUNDLE))
  chmodSync(join(rootfs, CA_BUNDLE), 0o644)
  // No shell and no login: the accounts exist so that tools (ps, id, a runtime's --user NAME)
  // can name the user, and so that glibc finds one for the uid the process runs as.
  const etc = join(rootfs, 'etc')
  writeFileSync(join(etc, 'passwd'), `root:x:0:0:root:/root:/sbin/nologin\nmedpanel:x:${IMAGE_UID}:${IMAGE_UID}:medpanel:/data:/sbin/nologin\n`, {mode: 0o644})
  writeFileSync(join(etc, 'group'), `root:x:0:\nmedpanel:x:${IMAGE_UID}:\n`, {mode: 0o644})
  // Host names from /etc/hosts (which the runtime mounts) before DNS, for partner URLs.
  writeFileSync(join(etc, 'nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n', {mode: 0o644})
  // Everyone may write /tmp (sticky: only their own files may be removed); the mode survives COPY.
  mkdirSync(join(rootfs, 'tmp'))
  chmodSync(join(rootfs, 'tmp'), 0o1777)
  // The store and its key file: only the medpanel user reads them. In a directory of its own
  // (volume/data, copied to /): a COPY into /data/ would make /data itself with mode 0755 and
  // copy only what is inside, while a copied directory keeps its mode.
  const data = join(staging, 'volume', 'data')
  mkdirSync(data, {recursive: true})
  chmodSync(data, 0o700)
  return {rootfs, data, libraries}
}

/** buildah's path, or undefined when this machine has none. */
export function findBuildah() {
  const found = spawnSync('sh', ['-c', 'command -v buildah'], {encoding: 'utf8'}).stdout.trim()
  return found || undefined
}

/**
 * Builds the staged context with buildah into an OCI archive at `out`. The images are kept in a
 * storage of their own in a temporary directory, removed afterwards: the archive is the product,
 * and the machine's container storage is left as it was. vfs and chroot because they need
 * neither overlay mounts nor user namespaces (a container or sandbox may allow neither); with
 * only COPY instructions nothing runs during the build anyway.
 */
export function buildImage({staging, out, tag, docker, timestamp}) {
  const buildah = findBuildah()
  if (!buildah) throw new Error('buildah is not installed (Debian: apt-get install buildah)')
  const storage = mkdtempSync(join(tmpdir(), 'medpanel-buildah-'))
  const global = ['--root', join(storage, 'root'), '--runroot', join(storage, 'run'), '--storage-driver', 'vfs']
  const run = (args) => execFileSync(buildah, [...global, ...args], {stdio: ['ignore', 'ignore', 'inherit'], env: {...process.env, BUILDAH_ISOLATION: 'chroot'}})
  try {
    // --timestamp: every file's time and the image's creation time are the last commit's, so
    // two builds of one commit (and one executable) give the same image, digest and all.
    run(['bud', '--isolation', 'chroot', '--format', 'oci', '--timestamp', String(timestamp), '-f', containerfile, '-t', tag, staging])
    mkdirSync(dirname(out), {recursive: true})
    rmSync(out, {force: true})
    run(['push', '--quiet', tag, `oci-archive:${out}:${tag}`])
    if (docker) {
      rmSync(docker, {force: true})
      run(['push', '--quiet', tag, `docker-archive:${docker}:${tag}`])
    }
  } finally {
    // vfs storage holds a whole copy of every layer; buildah made some of it as root.
    spawnSync(buildah, [...global, 'rmi', '--all', '--force'], {stdio: 'ignore'})
    rmSync(storage, {recursive: true, force: true})
  }
}

/** The time of the last commit (seconds since 1970), or now outside a git checkout. */
function sourceTime() {
  const result = spawnSync('git', ['log', '-1', '--format=%ct'], {cwd: root, encoding: 'utf8'})
  const seconds = Number(result.stdout.trim())
  return result.status === 0 && Number.isInteger(seconds) && seconds > 0 ? seconds : Math.floor(Date.now() / 1000)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const {values} = parseArgs({
    options: {
      'stage-only': {type: 'boolean', default: false},
      out: {type: 'string', default: join(root, 'build/medpanel-image.tar')},
      staging: {type: 'string', default: join(work, 'context')},
      docker: {type: 'string'},
      executable: {type: 'string'},
    },
  })
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    console.error(`Error: the image is built on Linux x64 only (this is ${process.platform} ${process.arch})`)
    process.exit(1)
  }
  const started = Date.now()
  const stale = values.executable === undefined ? executableStale() : undefined
  if (stale !== undefined) {
    console.error(`${stale}: building it (dist/ is left as it is)`)
    buildExecutable()
  }
  const staging = resolve(values.staging)
  stageImage(staging, {from: values.executable === undefined ? executable : resolve(values.executable)})
  if (values['stage-only']) {
    console.error(`Staged the build context in ${staging}`)
    process.exit(0)
  }
  const {version} = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const out = resolve(values.out)
  const tag = `medpanel:${version}`
  try {
    buildImage({staging, out, tag, docker: values.docker && resolve(values.docker), timestamp: sourceTime()})
  } catch (error) {
    console.error(`Error: ${error.message}`)
    process.exit(1)
  }
  const mib = (statSync(out).size / 2 ** 20).toFixed(1)
  console.error(`Built ${tag} into ${out} (${mib} MiB) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

// The binary's embedded root: /$bunfs/ on unix, B:/~BUN/ on windows.
const EMBEDDED = /\/\$bunfs\/|~BUN/

/**
 * The URL of a worker entry `name` that sits beside the module at `moduleUrl` in the source tree.
 * In the compiled binary every module is bundled into the main entry at the root of the embedded
 * tree (src/), and scripts/build.ts embeds each worker as an entry of its own at its path under
 * src/ (`dir/name`), so from inside the binary the worker is found there instead.
 */
export function workerUrl(moduleUrl: string, dir: string, name: string): string {
  return new URL(EMBEDDED.test(moduleUrl) ? `./${dir}/${name}` : `./${name}`, moduleUrl).href
}

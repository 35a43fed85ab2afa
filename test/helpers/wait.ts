/** Polls `probe` every `everyMs` until it answers something truthy; fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 10_000, everyMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v) return v as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(v)})`)
    await Bun.sleep(everyMs)
  }
}
